"""A tool-call task's figures from its records (those whose `tools` is set): accuracy as the task's own, trigger
agreement, schema validity, wire statuses, what leaked markup would have scored, the calls' timing, and
streamed-against-non-streamed parity (records.toolfigures says what each pools).

Records are read once into compact views (ToolView), as the other figures read theirs: summary.py keeps one a
tool record while it streams the run's records; compare and board build them from the records they pair."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualeval.figures.accuracy import answered_cell
from qualeval.figures.noise import mcnemar_exact, read_noise
from qualeval.figures.speeds import distribution
from qualeval.records import (
    NOT_THE_MODELS,
    DiscordantItem,
    Parity,
    Record,
    Recovery,
    Status,
    ToolCall,
    ToolFigures,
    ToolPaired,
    ToolShare,
    ToolSides,
    ToolStatus,
    ToolTiming,
    Trigger,
    TriggerAgreement,
)

__all__ = [
    "ToolView",
    "canonical_calls",
    "group_parity",
    "moved_on_tools",
    "parity",
    "parity_by_level",
    "parity_of",
    "run_tools",
    "tool_figures",
    "tool_paired",
    "tool_pairs",
    "tool_sides",
    "tool_view",
    "tools_by_task",
]


@dataclass(frozen=True, slots=True)
class ToolView:
    """What the tool figures read of one record."""

    item: str
    repeat: int
    level: str
    warmup: bool
    status: Status
    """The record's status: NOT_THE_MODELS ones are in no figure."""
    right: bool
    verdict: bool | None
    """score.correct where the record is judged, else None."""
    wire: ToolStatus | None
    called: bool
    trigger: Trigger
    schema_valid: bool | None
    recovered: bool
    recovered_correct: bool | None
    streamed: bool
    first_delta: float | None
    """Milliseconds (CallTiming keeps seconds)."""
    complete: float | None
    fragments: int
    reasoning_before: int | None
    calls: tuple[str, ...]
    """canonical_calls of the served calls: what parity compares."""
    task: str = ""

    @property
    def answered(self) -> bool:
        return self.status not in NOT_THE_MODELS


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else 1000.0 * seconds


def canonical_calls(calls: Iterable[ToolCall]) -> tuple[str, ...]:
    """The calls as parity compares them: name and arguments, the arguments parsed as JSON and written back with
    sorted keys (arguments that do not parse are compared as the text received, stripped), in a sorted order
    (parallel calls match in any order); ids and stream indexes are no part of a call."""
    out = []
    for call in calls:
        try:
            args = json.dumps(json.loads(call.arguments), sort_keys=True, ensure_ascii=False)
        except ValueError:
            args = "text:" + call.arguments.strip()
        out.append(f"{call.name}({args})")
    return tuple(sorted(out))


def tool_view(record: Record) -> ToolView | None:
    """The record's view; None for a record of no tool-call item."""
    tools = record.tools
    if tools is None:
        return None
    timing = tools.timing
    return ToolView(
        item=record.sample_id,
        repeat=record.repeat,
        level=record.level,
        warmup=record.warmup,
        status=record.status,
        right=record.right,
        verdict=record.score.correct if record.judged else None,
        wire=tools.status,
        called=bool(tools.calls),
        trigger=tools.expected.trigger,
        schema_valid=tools.schema_valid,
        recovered=bool(tools.recovered),
        recovered_correct=tools.recovered_correct,
        streamed=bool(record.request.stream),
        first_delta=_ms(timing.first_delta),
        complete=_ms(timing.complete),
        fragments=timing.fragments,
        reasoning_before=timing.reasoning_tokens_before,
        calls=canonical_calls(tools.calls),
        task=record.task,
    )


def _share(hits: int, n: int) -> float | None:
    return hits / n if n else None


def _trigger(views: Sequence[ToolView]) -> TriggerAgreement:
    expected = [v.trigger != "none" for v in views]
    tp = sum(e and v.called for e, v in zip(expected, views, strict=True))
    fp = sum(not e and v.called for e, v in zip(expected, views, strict=True))
    fn = sum(e and not v.called for e, v in zip(expected, views, strict=True))
    tn = len(views) - tp - fp - fn
    return TriggerAgreement(
        called_expected=tp,
        called_unexpected=fp,
        missed=fn,
        held_back=tn,
        precision=_share(tp, tp + fp),
        recall=_share(tp, tp + fn),
        f1=_share(2 * tp, 2 * tp + fp + fn),
        no_call_agreement=_share(tn, tn + fp),
    )


def _recovery(views: Sequence[ToolView]) -> Recovery:
    wrong = [v for v in views if v.verdict is False]
    right_after = [v for v in wrong if v.recovered and v.recovered_correct]
    return Recovery(
        wrong=len(wrong),
        recovered=sum(v.recovered for v in wrong),
        would_be_right=len(right_after),
        model_wrong=len(wrong) - len(right_after),
        items=list(dict.fromkeys(map(_namer(views), right_after))),
    )


def _timing(views: Sequence[ToolView]) -> ToolTiming:
    timed = [v for v in views if v.streamed and not v.warmup and v.first_delta is not None]
    return ToolTiming(
        first_delta=distribution(v.first_delta for v in timed),
        complete=distribution(v.complete for v in timed),
        fragments=distribution(float(v.fragments) for v in timed),
        reasoning_tokens_before=distribution(
            float(v.reasoning_before) if v.reasoning_before is not None else None for v in timed
        ),
    )


def tool_figures(views: Sequence[ToolView], *, pooled_accuracy: bool = True) -> ToolFigures:
    """The figures of one task's (or one level's) tool views. `pooled_accuracy=False` where the task's levels
    asked differently: the accuracy is per level then, as the task's own is."""
    answered = [v for v in views if v.answered]
    cell, _ = answered_cell((v.item, v.right, v.status) for v in views)
    with_calls = [v for v in answered if v.schema_valid is not None]
    return ToolFigures(
        responses=len(answered),
        items=len({v.item for v in answered}),
        unanswered=len(views) - len(answered),
        accuracy=cell if pooled_accuracy and cell.n else None,
        trigger=_trigger(answered),
        schema_valid=ToolShare(
            hits=sum(bool(v.schema_valid) for v in with_calls),
            n=len(with_calls),
            share=_share(sum(bool(v.schema_valid) for v in with_calls), len(with_calls)),
        ),
        statuses=dict(sorted(Counter(v.wire for v in answered).items())),
        recovery=_recovery(answered),
        timing=_timing(answered),
        parity=parity_of(views),
    )


def _namer(views: Sequence[ToolView]) -> Callable[[ToolView], str]:
    """How an item is named so that a reader finds it: its sample id, `#repeat` and `@ level` where the views
    hold several."""
    repeats = any(v.repeat for v in views)
    # the stream part aside: parity names an item sent both ways, which is at neither side alone
    levels = len({_paired_level(v.level) for v in views}) > 1
    return lambda v: v.item + (f"#{v.repeat}" if repeats else "") + (f" @ {_paired_level(v.level)}" if levels else "")


def _paired_level(level: str) -> str:
    """A level's label without its `stream=on` / `stream=off` part: --stream-parity sends each item at both."""
    return " ".join(part for part in level.split() if part not in ("stream=on", "stream=off"))


def parity_of(views: Sequence[ToolView]) -> Parity | None:
    """Streamed against non-streamed, per item sent both ways (same sample id, repeat and level, the level's
    stream part aside); None when no item was. A second response of the same kind (a resumed run's) is not read:
    the first stands."""
    sides: dict[tuple[str, int, str], dict[bool, ToolView]] = {}
    for v in views:
        sides.setdefault((v.item, v.repeat, _paired_level(v.level)), {}).setdefault(v.streamed, v)
    both = [(s[True], s[False]) for s in sides.values() if len(s) == 2]
    if not both:
        return None
    answered = [(a, b) for a, b in both if a.answered and b.answered]
    name = _namer(views)
    discordant = [
        DiscordantItem(
            item=name(a),
            calls_agree=a.calls == b.calls,
            verdicts_agree=a.verdict == b.verdict,
            streamed=a.wire,
            not_streamed=b.wire,
        )
        for a, b in answered
        if a.calls != b.calls or a.verdict != b.verdict
    ]
    agree = len(answered) - len(discordant)
    return Parity(
        pairs=len(answered),
        agree=agree,
        share=_share(agree, len(answered)),
        discordant=discordant,
        unanswered=len(both) - len(answered),
    )


def parity_by_level(views: Iterable[ToolView]) -> dict[tuple[str, str], Parity]:
    """A run's parity per task and level, the level's stream part aside; only where an item was sent both ways."""
    by: dict[tuple[str, str], list[ToolView]] = {}
    for v in views:
        by.setdefault((v.task, _paired_level(v.level)), []).append(v)
    found = {key: parity_of(group) for key, group in by.items()}
    return {key: p for key, p in found.items() if p is not None}


def group_parity(found: Mapping[tuple[str, str], Parity], group: str) -> Parity | None:
    """The parity of a group of compare, board or gate (`task`, or `task @ level`): at its level, or the task's
    one parity where the group names no level the run kept (runs of one level each, paired across labels)."""
    task, _, level = group.partition(" @ ")
    if (task, _paired_level(level)) in found:
        return found[task, _paired_level(level)]
    mine = [p for (name, _), p in found.items() if name == task]
    return mine[0] if len(mine) == 1 and not level else None


def tools_by_task(records: Iterable[Record]) -> dict[str, ToolFigures]:
    """Each task's tool figures, for the tasks with tool records, accuracy pooled over their levels."""
    views: dict[str, list[ToolView]] = {}
    for record in records:
        view = tool_view(record)
        if view is not None:
            views.setdefault(record.task, []).append(view)
    return {task: tool_figures(found) for task, found in views.items()}


def parity(records: Iterable[Record]) -> dict[str, Parity]:
    """Per task, streamed against non-streamed (--stream-parity): the share of items whose calls and verdict
    agree, and the discordant items named; only tasks with an item sent both ways."""
    return {task: f.parity for task, f in tools_by_task(records).items() if f.parity is not None}


Parities = Mapping[tuple[str, str], Parity]


def run_tools(records: Sequence[Record], parities: Parities, group: str) -> ToolFigures | None:
    """board: one config's tool figures on one group's records, its parity the run's own over every record it
    holds (`parities`: RunDir.parity); None for a group with no tool-call record."""
    views = [v for r in records if (v := tool_view(r)) is not None]
    if not views:
        return None
    return tool_figures(views).model_copy(update={"parity": group_parity(parities, group)})


def tool_pairs(pairs: Iterable[tuple[Record, Record]]) -> list[tuple[Record, Record]]:
    """The pairs of tool-call items both sides answered: what the per-item tool verdicts are paired over."""
    return [
        (a, b)
        for a, b in pairs
        if a.tools is not None and b.tools is not None and a.status not in NOT_THE_MODELS
        if b.status not in NOT_THE_MODELS
    ]


def tool_paired(
    pairs: Iterable[tuple[Record, Record]], *, moved: float | None = None, p_adjusted: float | None = None, **test: Any
) -> ToolPaired | None:
    """B against A on the per-item tool verdicts (McNemar's exact test), read against noise as the task's accuracy
    is: `moved`, what a rerun of A moved on its own on the same items; `p_adjusted` (and `test`, `alpha`) board's
    Holm-corrected p in McNemar's place. None with no tool-call pair."""
    both = tool_pairs(pairs)
    if not both:
        return None
    down = sum(a.right and not b.right for a, b in both)
    up = sum(b.right and not a.right for a, b in both)
    reading = read_noise(len(both), down, up, moved=moved, p_value=p_adjusted, **test)
    return ToolPaired(
        pairs=len(both),
        accuracy_a=sum(a.right for a, _ in both) / len(both),
        accuracy_b=sum(b.right for _, b in both) / len(both),
        a_right_b_wrong=down,
        a_wrong_b_right=up,
        p_value=mcnemar_exact(down, up),
        p_adjusted=p_adjusted,
        within_noise=reading.within,
        noise_reading=reading.said,
    )


def moved_on_tools(again: Iterable[tuple[Record, Record]] | None) -> float | None:
    """|A2 - A| on the tool-call items a rerun of A and A both answered; None without a rerun (or such items)."""
    both = tool_pairs(again) if again is not None else []
    return abs(sum(b.right for _, b in both) - sum(a.right for a, _ in both)) / len(both) if both else None


def tool_sides(
    pairs: Sequence[tuple[Record, Record]],
    parities: tuple[Parities, Parities],
    group: str,
    again: Sequence[tuple[Record, Record]] | None = None,
) -> ToolSides | None:
    """compare: A's and B's tool figures over the paired items, each run's own parity, and B against A on the
    per-item tool verdicts (`again`: A's pairs with its rerun, for the noise); None for a group with no tool-call
    record."""
    a = run_tools([ra for ra, _ in pairs], parities[0], group)
    b = run_tools([rb for _, rb in pairs], parities[1], group)
    if a is None or b is None:
        return None
    return ToolSides(a=a, b=b, paired=tool_paired(pairs, moved=moved_on_tools(again)))
