"""An episode's figures, from its steps: what its Record holds (EpisodeRecord; the usage and timing summed over its
requests), per turn and in all, for the accuracy by turn index, steps, calls, tokens and times."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from qualeval.records import (
    TRUNCATED,
    AppliedPassback,
    EpisodeRecord,
    PassbackMode,
    StepRecord,
    Timing,
    TurnRecord,
    Usage,
    step_digests,
)

__all__ = ["EpisodeVerdictLike", "cut_step", "episode_record", "episode_timing", "usage_total"]


class EpisodeVerdictLike(Protocol):
    """What the tally reads of an episode's verdict (qualeval.scoring.judge_episode's)."""

    @property
    def failed_turn(self) -> int | None: ...
    @property
    def error_type(self) -> str: ...
    @property
    def turns(self) -> Sequence[bool | None]: ...


def usage_total(steps: Sequence[StepRecord]) -> Usage:
    """The episode's tokens: every step's, summed (a count no step reported stays unreported)."""
    total: dict[str, Any] = {}
    for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "answer_tokens"):
        values = [getattr(s.usage, name) for s in steps if getattr(s.usage, name) is not None]
        total[name] = sum(values) if values else None
    total["reasoning_estimated"] = any(s.usage.reasoning_estimated for s in steps)
    total["completion_estimated"] = any(s.usage.completion_estimated for s in steps)
    return Usage(**total)


def episode_timing(steps: Sequence[StepRecord]) -> Timing:
    """The episode's timing: its first request's first byte and tokens; its end, every request's end summed (the
    time the episode spent waiting on the endpoint, tools and the loop left out)."""
    if not steps:
        return Timing()
    first = steps[0].timing
    ends = [s.timing.end for s in steps if s.timing.end is not None]
    return Timing(
        first_byte=first.first_byte,
        ttft=first.ttft,
        first_reasoning=first.first_reasoning,
        first_content=first.first_content,
        end=sum(ends) if ends else None,
        queued=first.queued,
    )


def cut_step(steps: Sequence[StepRecord]) -> StepRecord | None:
    """The first step the token budget cut off: the episode is as cut as its worst step (a cut step is a
    truncation its user sees, even where the loop went on after it)."""
    return next((s for s in steps if s.status in TRUNCATED), None)


def _turn(steps: Sequence[StepRecord], passed: bool | None) -> TurnRecord:
    return TurnRecord(
        steps=len(steps),
        calls=sum(len(s.calls) for s in steps),
        passed=passed,
        reasoning_tokens=sum(s.usage.reasoning_tokens or 0 for s in steps),
        answer_tokens=sum(s.usage.answer_tokens or 0 for s in steps),
        ms=sum(s.timing.end or 0.0 for s in steps),
        step_ms=tuple(s.timing.end or 0.0 for s in steps),
        first_call_ms=tuple(s.first_call_ms for s in steps),
    )


def episode_record(
    steps: Sequence[StepRecord],
    *,
    passback: AppliedPassback,
    asked: PassbackMode,
    note: str = "",
    forced_quit: bool = False,
    verdict: EpisodeVerdictLike | None = None,
) -> EpisodeRecord:
    """The Record's `episode`: per turn and in all. `verdict`: None where the episode has none (it stopped at an
    endpoint error)."""
    count = max((s.turn for s in steps), default=-1) + 1
    passed = list(verdict.turns) if verdict is not None else []
    turns = [_turn([s for s in steps if s.turn == t], passed[t] if t < len(passed) else None) for t in range(count)]
    ended = "endpoint_error" if verdict is None else ("forced_quit" if forced_quit else "done")
    return EpisodeRecord(
        passback=passback,
        asked=asked,
        note=note,
        turns=turns,
        steps=len(steps),
        calls=sum(t.calls for t in turns),
        reasoning_tokens=sum(t.reasoning_tokens for t in turns),
        answer_tokens=sum(t.answer_tokens for t in turns),
        ms=sum(t.ms for t in turns),
        forced_quit=forced_quit,
        failed_turn=verdict.failed_turn if verdict is not None else None,
        error_type=verdict.error_type if verdict is not None else "",
        ended=ended,
        digests=tuple(step_digests(s) for s in steps),
        retried=sum(s.attempts > 1 for s in steps),
        truncated=sum(s.status in TRUNCATED for s in steps),
        longest=max((s.usage.completion_tokens for s in steps if s.usage.completion_tokens), default=None),
    )
