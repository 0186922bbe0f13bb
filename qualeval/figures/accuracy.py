"""Accuracy: per-task summaries with a Wilson interval, statuses, extraction rungs, breakdowns; and repeated
sampling (mean, maj@K, pass@K) when each item is asked K times.

Accuracy counts every item the model answered: an empty answer, or thinking cut off before any answer, is not
correct; an answer cut off by the budget after it began (answer_truncated) is judged on the answer it states, and
is correct when that is right (`truncated_correct` counts them). Because cut-offs are serving problems rather
than wrong answers, the summary also counts them per status and gives the accuracy over answered items
(`accuracy_answered`, status ok or answer_truncated) beside it. A request the endpoint failed
(connection, timeout, 429, 5xx, a 4xx such as context exceeded) got no answer at all: it is never counted as
wrong, but counted apart (`endpoint_errors`, with the server's reasons). Nor is a reference server's refusal of a
question not in its answer key (status `unknown_question`, counted in `unknown_questions`): not the model's answer.

The naive extractor's accuracy (`naive_accuracy`) has the same denominator: every item in `accuracy`, a response
with no naive reading (content_filter, an echo of the prompt) counted as not right. A breakdown's items without a
value for it are its row `(no <name>)`, left out of its macro average.

Accuracy counts each item once, however many records it has (one per load level of a sweep and per sample of
`--samples-per-item`): an item's score is the mean correctness of its records, accuracy is the mean score, and
the Wilson interval uses n = distinct items. With one record per item that is the plain share right. Statuses,
rungs and the other counts are per record (per response).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualeval.records import (
    ANSWERED,
    ENDPOINT_FAILED,
    NOT_THE_MODELS,
    Cell,
    Outcome,
    Repeated,
    RunSummary,
    TaskSummary,
)

__all__ = [
    "Repeat",
    "answered_cell",
    "below",
    "cell_of",
    "item_scores",
    "judged",
    "pass_at_k",
    "per_level",
    "repeated",
    "summarize",
    "unscored",
    "wilson",
]


def item_scores(answers: Iterable[tuple[str | None, bool]]) -> list[float]:
    """Each distinct item's score, the mean correctness of its records, in order of first appearance."""
    by_item: dict[Any, list[bool]] = {}
    for index, (item, correct) in enumerate(answers):
        by_item.setdefault(item if item is not None else ("#", index), []).append(correct)
    return [sum(flags) / len(flags) for flags in by_item.values()]


def wilson(correct: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default); (0, 1) when there is nothing to go on.

    Always 0 <= low <= correct/n <= high <= 1, with low exactly 0 at no successes and high exactly 1 at all:
    the closed form meets those bounds only up to rounding (wilson(0, 3) came out 5.6e-17), and a plot's error
    bar (share - low) must never be negative. `correct` may be fractional (a mean over an item's records).
    """
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denom
    low = 0.0 if correct <= 0 else min(p, max(0.0, centre - half))
    high = 1.0 if correct >= n else max(p, min(1.0, centre + half))
    return low, high


def cell_of(flags: Sequence[bool | float]) -> Cell:
    """An accuracy and its interval from one correctness (or item score) per item."""
    return _cell(sum(flags), len(flags))


def judged(cell: Cell) -> tuple[float, float, float] | None:
    """A cell's accuracy, low and high; None when nothing was judged (n = 0), which has no share to plot or
    place a figure in."""
    if cell.accuracy is None or cell.low is None or cell.high is None:
        return None
    return cell.accuracy, cell.low, cell.high


def _cell(k: float, n: int) -> Cell:
    shown = round(k, 9)  # a sum of means, 13.33333333333333, is shown as 13.333333333
    shown = int(shown) if float(shown).is_integer() else shown  # a whole count stays an integer
    if not n:  # nothing judged: no share and no interval, rather than 0% between 0 and 1
        return Cell(n=0, correct=shown, accuracy=None, low=None, high=None)
    low, high = wilson(k, n)
    return Cell(n=n, correct=shown, accuracy=k / n, low=low, high=high)


def answered_cell(rows: Iterable[tuple[str | None, bool, str]]) -> tuple[Cell, int]:
    """Accuracy over the items the model answered, from (item, correct, status) per record, and how many records
    the endpoint failed (left out: an endpoint error is not a wrong answer; nor is a reference server's refusal
    of a question it did not know, left out uncounted here: the task's summary counts it)."""
    kept, failed = [], 0
    for item, correct, status in rows:
        if status in ENDPOINT_FAILED:
            failed += 1
        elif status not in NOT_THE_MODELS:
            kept.append((item, correct))
    return cell_of(item_scores(kept)), failed


def summarize(task: str, outcomes: Iterable[Outcome], breakdowns: Sequence[str] = ()) -> TaskSummary:
    """Summarise the final answers of one task."""
    every = list(outcomes)
    rows = [r for r in every if r.status not in NOT_THE_MODELS]
    failed = [r for r in every if r.status in ENDPOINT_FAILED]
    cell = cell_of(item_scores((r.item, r.correct) for r in rows))
    answered = [r.correct for r in rows if r.status in ANSWERED]
    # over the same items as `accuracy`: a response with no naive reading (content_filter, an echo) is not right
    naive = cell_of(item_scores((r.item, bool(r.naive_correct)) for r in rows))
    naive_read = any(r.naive_correct is not None for r in rows)  # free-text and whole-answer tasks have none
    summary = TaskSummary(
        task=task,
        n=cell.n,
        correct=cell.correct,
        accuracy=cell.accuracy if cell.n else None,  # nothing answered: no accuracy, not 0%
        interval=(cell.low, cell.high) if cell.n else None,
        accuracy_answered=sum(answered) / len(answered) if answered else None,
        statuses=dict(Counter(r.status for r in every)),
        rungs=dict(Counter(r.rung for r in rows)),
        endpoint_errors=len(failed),
        unknown_questions=sum(r.status == "unknown_question" for r in every),
        error_items=len({r.item if r.item is not None else id(r) for r in failed} - {r.item for r in rows}),
        error_reasons=dict(Counter(r.error or "no reason given" for r in failed).most_common(5)),
        constraint_held=dict(Counter("held" if r.held else "broken" for r in rows if r.held is not None)),
        followup=dict(Counter(r.agreement for r in rows if r.agreement is not None)),
        naive_accuracy=naive.accuracy if naive_read else None,
        rescued=sum(r.rescued for r in rows),
        rescue_correct=sum(r.rescue_correct for r in rows),
        truncated_correct=sum(r.correct for r in rows if r.status == "answer_truncated"),
        records=len(every),
    )
    if any(r.rung == "judge" for r in rows):
        summary.accuracy_without_judge = cell_of(
            item_scores((r.item, r.correct and r.rung != "judge") for r in rows)
        ).accuracy
    summary.measures = _measures(rows)
    for name in breakdowns if rows else ():  # nothing answered: no breakdown, rather than a macro accuracy of 0
        groups: dict[str, list[tuple[str | None, bool]]] = defaultdict(list)
        for r in rows:
            groups[_group(r.meta.get(name), name)].append((r.item, r.correct))
        cells = {value: cell_of(item_scores(answers)) for value, answers in sorted(groups.items())}
        summary.breakdowns[name] = cells
        # the macro average is over the groups the task names: the items without a value are no group of them
        shares = [c.accuracy for value, c in cells.items() if c.accuracy is not None and value != _none(name)]
        if shares:
            summary.macro_accuracy[name] = sum(shares) / len(shares)
    return summary


def _none(name: str) -> str:
    """The row of a breakdown's items that have no value for it (a line scored with its own target, a
    document without the field): `(no subject)`, never a group named `None`."""
    return f"(no {name})"


def _group(value: Any, name: str) -> str:
    return _none(name) if value is None or (isinstance(value, str) and not value.strip()) else str(value)


def below(summary: RunSummary, share: float) -> list[str]:
    """The tasks whose accuracy is under `share` (--fail-under), each level by name (`gsm8k @ effort=low`) where
    the levels asked differently: every level is held to it, as no pooled figure stands for them."""
    out = []
    for name, t in summary.tasks.items():
        if not t.scored:
            continue
        if not t.summary.n:  # nothing was judged: no figure clears the threshold
            out.append(f"{name} (no item answered)")
            continue
        if t.summary.accuracy is not None:
            out += [name] if t.summary.accuracy < share else []
            continue
        cells = {level: t.levels[level].accuracy for level in t.summary.per_level if level in t.levels}
        out += [f"{name} @ {level}" for level, c in cells.items() if c.accuracy is None or c.accuracy < share]
    return out


_POOLED = ("correct", "accuracy", "interval", "accuracy_answered", "naive_accuracy", "accuracy_without_judge")
"""A summary's shares over its items: what a figure pooled over levels that asked differently, or over prompts
with no right answer, cannot give."""


def unscored(summary: TaskSummary) -> TaskSummary:
    """A task's summary when its prompts have no right answer (a workload's synthetic prompts): every record reads
    as wrong, so every share of them is left out (None, not 0%); the counts (items, statuses) stand."""
    return summary.model_copy(update={**dict.fromkeys(_POOLED), "breakdowns": {}, "macro_accuracy": {}, "measures": {}})


def per_level(summary: TaskSummary, by_level: Mapping[str, TaskSummary]) -> TaskSummary:
    """A task's summary when its levels asked differently (budgets, efforts, thinking on and off): an item's
    score would be a mean over different questions of the model, and the pooled accuracy a fractional count of
    nothing that was asked, so the shares pooled over the levels are left out and the accuracy is per level.
    `by_level`: each level's own summary, whose breakdowns and scorer's figures stand in for the pooled ones,
    named `subject @ max_tokens=512`."""
    named = [(f"{key} @ {level}", key, s) for level, s in by_level.items() for key in s.breakdowns]
    return summary.model_copy(
        update={
            "per_level": list(by_level),
            **dict.fromkeys(_POOLED),
            "breakdowns": {name: s.breakdowns[key] for name, key, s in named},
            "macro_accuracy": {name: s.macro_accuracy[key] for name, key, s in named},
            "measures": {f"{k} @ {level}": c for level, s in by_level.items() for k, c in s.measures.items()},
        }
    )


def _measures(rows: Sequence[Outcome]) -> dict[str, Cell]:
    hits: dict[str, float] = defaultdict(float)
    totals: dict[str, float] = defaultdict(float)
    for row in rows:
        for name, (hit, total) in (row.measures or {}).items():
            hits[name] += hit
            totals[name] += total
    return {name: _cell(hits[name], int(total)) for name, total in totals.items()}


@dataclass(frozen=True, slots=True)
class Repeat:
    item: str
    correct: bool
    value: str | None


def _se(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def repeated(repeats: Iterable[Repeat], k: int) -> Repeated:
    by_item: dict[str, list[Repeat]] = defaultdict(list)
    for a in repeats:
        by_item[a.item].append(a)
    per_item = [sum(a.correct for a in tries) / len(tries) for tries in by_item.values()]
    majority, passed = [], []
    # an item with fewer than K answered samples (the others failed at the endpoint) has no maj@K nor pass@K:
    # its one right sample would count as pass@K
    for tries in (t for t in by_item.values() if len(t) >= k):
        votes = Counter(a.value for a in tries if a.value is not None)
        if votes:
            top = votes.most_common(1)[0][0]  # ties go to the value seen first
            majority.append(float(next(a.correct for a in tries if a.value == top)))
        else:
            majority.append(0.0)
        passed.append(float(any(a.correct for a in tries)))
    n, complete = len(per_item), len(passed)
    most = min((len(t) for t in by_item.values()), default=0)
    ks = sorted({size for size in (1, 2, 5, 10, 20, 50, 100, k) if size <= most})
    pass_at = {
        size: sum(pass_at_k(len(t), sum(a.correct for a in t), size) for t in by_item.values()) / n for size in ks
    }
    return Repeated(
        k=k,
        items=n,
        mean=sum(per_item) / n if n else 0.0,
        mean_se=_se(per_item),
        maj_at_k=sum(majority) / complete if complete else None,
        maj_se=_se(majority),
        pass_at_k=sum(passed) / complete if complete else None,
        pass_se=_se(passed),
        pass_at=pass_at,
        complete=complete,
    )


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that k of n samples, c of them right, drawn without replacement include a right one."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)
