"""A task's levels read against each other, from the records and the level labels alone.

The frontier: per level its accuracy beside its output tokens (reasoning and answer), its cut-off thinking and
its latency; the levels no other level beats on accuracy and cost together (Pareto, against mean output tokens
and against latency p50); each level against the one before it on the same items; and the smallest budget whose
accuracy is within --within points of the best. A level is compared along one axis: with the nearest level
before it at the same load that differs on one budget axis only, on every answer its accuracy counts (warm-up
included), so the difference is the one between the accuracies shown. It is computed when two or more levels
spent different mean output tokens: budget levels (`max_tokens=512`, `effort=low`) are what it is for, and a
load sweep whose sampled lengths moved gets it too, truthfully, named by level. A greedy load sweep spends the
same tokens at every level and gets none: it has no trade to show. Streaming (`stream=on`, `stream=off`) is no
cost: the frontier reads the levels asked the first way, and levels that differ only in it have none.

Quality under load: each level against the first level of its load sweep, the first in run order whose label
is the same but for its load (c=, rate=), so `c=4 max_tokens=512` is read against `c=1 max_tokens=512` and
never against another budget. A pure budget sweep has no such pairs.

Pairs are by sample id and repeat, as in `qualeval compare`; requests the endpoint failed are left out of them.
The warm-up requests are in every pair, under load too, as each level's accuracy counts them (so a drop is stated
on the same pairs wherever it is shown); they are in no speed figure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from qualeval.figures.noise import ALPHA, mcnemar_exact
from qualeval.figures.speeds import distribution
from qualeval.records import (
    ENDPOINT_FAILED,
    NOT_THE_MODELS,
    Frontier,
    FrontierLevel,
    LevelReport,
    Paired,
    Record,
    Timed,
)

__all__ = ["Answer", "answer_of", "asked_differently", "frontier", "paired", "swept", "under_load", "varied"]

LOAD = ("c", "rate")
"""The parts of a level label that name its load; the rest (max_tokens=, effort=, thinking=) name its budget."""
WAY = ("stream",)
"""The parts that name how a level was asked but not what it cost: `stream=on` and `stream=off` send the same
request and read the answer from a stream or from a whole body. Neither load nor budget: no cost axis."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a pair needs of one record."""

    level: str
    item: tuple[str, int]
    correct: bool
    answered: bool
    """An answer of the model's: not a request the endpoint failed nor an unknown question (a warm-up is one)."""


def answer_of(record: Record) -> Answer:
    answered = record.status not in NOT_THE_MODELS  # an unknown question is no wrong answer of the model's
    return Answer(record.level, (record.sample_id, record.repeat), record.right, answered)


def _by_level(answers: Iterable[Answer]) -> dict[str, dict[tuple[str, int], bool]]:
    """Each level's answers by item, the warm-ups' in (each level's accuracy counts them; every figure of one
    comparison is on the same pairs); the endpoint's failures never."""
    out: dict[str, dict[tuple[str, int], bool]] = {}
    for a in answers:
        if a.answered:
            out.setdefault(a.level, {}).setdefault(a.item, a.correct)
    return out


def paired(this: Mapping[tuple[str, int], bool], other: Mapping[tuple[str, int], bool], against: str) -> Paired:
    """`this` level's answers against `other`'s on the items both have."""
    shared = set(this) & set(other)
    worse = sum(other[k] and not this[k] for k in shared)
    better = sum(this[k] and not other[k] for k in shared)
    difference = (better - worse) / len(shared) if shared else 0.0
    p = mcnemar_exact(worse, better)
    return Paired(against=against, pairs=len(shared), difference=difference, p=p, drop=p < ALPHA and difference < 0)


def _parts(label: str, keep: Callable[[str], bool]) -> tuple[str, ...]:
    return tuple(p for p in re.split(r"[\s,]+", label.strip()) if p and keep(p.partition("=")[0]))


def _budget(label: str) -> tuple[str, ...]:
    """The label's parts but its load and way: `c=4 max_tokens=512 stream=on` -> (max_tokens=512,)."""
    return _parts(label, lambda axis: axis not in LOAD and axis not in WAY)


def _way(label: str) -> tuple[str, ...]:
    return _parts(label, lambda axis: axis in WAY)


def _asked(label: str) -> tuple[str, ...]:
    """What the level asked, and how: its budget and its way."""
    return (*_budget(label), *_way(label))


def asked_differently(labels: Iterable[str]) -> bool:
    """Whether the levels differ in what they asked (output budget, effort, thinking) or how (streamed or not),
    not merely in load."""
    return len({_asked(label) for label in labels}) > 1


def varied(labels: Iterable[str], way: bool = True) -> set[str]:
    """The axes whose value differs between the levels (`max_tokens`, `effort`, `thinking`..., and `stream`
    unless `way` is False); load never."""
    values: dict[str, set[str]] = {}
    for label in labels:
        for part in _asked(label) if way else _budget(label):
            axis, _, value = part.partition("=")
            values.setdefault(axis, set()).add(value)
    return {axis for axis, seen in values.items() if len(seen) > 1}


def swept(labels: Iterable[str]) -> set[str]:
    """The budget axes whose value differs between the levels (`max_tokens`, `effort`, `thinking`...): the cost
    axes, so never `stream`."""
    return varied(labels, way=False)


def under_load(labels: Sequence[str], answers: Iterable[Answer]) -> dict[str, Paired]:
    """Each level (but the first of its sweep) against the first level that ran its budget."""
    by_level = _by_level(answers)
    first: dict[tuple[str, ...], str] = {}
    out = {}
    for label in labels:
        head = first.setdefault(_asked(label), label)
        if head != label:
            out[label] = paired(by_level.get(label, {}), by_level.get(head, {}), head)
    return out


def _load(label: str) -> tuple[str, ...]:
    return _parts(label, lambda axis: axis in LOAD)


def _one_step(label: str, other: str) -> bool:
    """Whether `other` differs from `label` on one budget axis only, at the same load: the same axes, one value."""
    mine, theirs = (
        dict(p.partition("=")[::2] for p in _budget(label)),
        dict(p.partition("=")[::2] for p in _budget(other)),
    )
    same = _load(label) == _load(other) and _way(label) == _way(other)
    return same and mine.keys() == theirs.keys() and sum(mine[k] != theirs[k] for k in mine) == 1


def _before(labels: Sequence[str], i: int) -> str | None:
    """The level a level is compared with, along one axis: in a load sweep the one before it; otherwise the
    nearest before it at the same load that differs on one budget axis only (`effort=high thinking=on` against
    `effort=medium thinking=on`, never against `thinking=off`, and never across the load); always one asked the
    same way (streamed or not)."""
    if not _budget(labels[i]):
        return next((label for label in reversed(labels[:i]) if _way(label) == _way(labels[i])), None)
    return next((label for label in reversed(labels[:i]) if _one_step(labels[i], label)), None)


def _efficient(points: Mapping[str, tuple[float, float] | None]) -> dict[str, bool | None]:
    """Per (accuracy, cost) point: whether no other point is as accurate at no more cost, better in one."""
    out: dict[str, bool | None] = {}
    for name, point in points.items():
        if point is None:
            out[name] = None
            continue
        acc, cost = point
        out[name] = not any(
            o[0] >= acc and o[1] <= cost and (o[0] > acc or o[1] < cost)
            for other, o in points.items()
            if other != name and o is not None
        )
    return out


def _smallest_within(levels: Mapping[str, FrontierLevel], within: float) -> tuple[str | None, str | None]:
    """The most accurate level, and the one with the fewest mean output tokens within `within` of it; neither
    when no level got any item right: the cheapest of levels that all score 0% is no budget to recommend."""
    answered = [(lv, lv.accuracy.accuracy) for lv in levels.values() if lv.accuracy.accuracy is not None]
    if not answered:
        return None, None
    best, top = max(answered, key=lambda pair: pair[1])  # max keeps the first of equals: run order
    if top <= 0:
        return None, None
    close = [lv for lv, share in answered if lv.output_tokens is not None and share >= top - within - 1e-12]
    cheapest = min(close, key=lambda lv: lv.output_tokens.mean) if close else None  # type: ignore[union-attr]
    return best.level, cheapest.level if cheapest else None


def _level(label: str, report: LevelReport, rows: Sequence[Timed], previous: Paired | None) -> FrontierLevel:
    answered = [r for r in rows if r.status not in ENDPOINT_FAILED]
    timed = [r for r in answered if not r.warmup]
    speed = report.speed
    cut = sum(r.status == "reasoning_truncated" for r in answered)
    return FrontierLevel(
        level=label,
        accuracy=report.accuracy,
        output_tokens=distribution(r.completion_tokens for r in timed),
        reasoning_tokens=speed.reasoning_tokens,
        answer_tokens=speed.answer_tokens,
        reasoning_truncated=cut / len(answered) if answered else 0.0,
        latency_p50=speed.latency.p50 if speed.latency else None,
        latency_p99=speed.latency.p99 if speed.latency else None,
        first_answer_p50=speed.first_answer.p50 if speed.first_answer else None,
        efficient_tokens=None,
        efficient_latency=None,
        vs_previous=previous,
    )


def frontier(
    levels: Mapping[str, LevelReport], rows: Sequence[Timed], answers: Iterable[Answer], within: float
) -> Frontier | None:
    """`levels` in run order; `within` a share. None unless two levels asked the same way spent different mean
    output tokens. Where the levels were asked two ways (--stream-parity), the frontier reads those asked the first
    way: the other way asks the same budgets, and streaming is no cost to trade accuracy against."""
    first = _way(next(iter(levels), ""))
    labels = [label for label in levels if _way(label) == first]
    if len(labels) < 2:
        return None
    by_level = _by_level(answers)
    out: dict[str, FrontierLevel] = {}
    for i, label in enumerate(labels):
        before = _before(labels, i)
        previous = paired(by_level.get(label, {}), by_level.get(before, {}), before) if before else None
        out[label] = _level(label, levels[label], [r for r in rows if r.level == label], previous)
    if len({lv.output_tokens.mean for lv in out.values() if lv.output_tokens}) < 2:
        return None
    tokens = _efficient({k: _point(lv, lv.output_tokens.mean if lv.output_tokens else None) for k, lv in out.items()})
    latency = _efficient({k: _point(lv, lv.latency_p50) for k, lv in out.items()})
    for name, lv in out.items():
        lv.efficient_tokens, lv.efficient_latency = tokens[name], latency[name]
    best, smallest = _smallest_within(out, within)
    return Frontier(levels=list(out.values()), within=within, best=best, smallest_within=smallest)


def _point(level: FrontierLevel, cost: float | None) -> tuple[float, float] | None:
    return None if cost is None or level.accuracy.accuracy is None else (level.accuracy.accuracy, cost)
