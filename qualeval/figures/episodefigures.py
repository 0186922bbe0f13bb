"""A multi-turn task's figures from its records' `episode`s: how the episodes ended, accuracy by turn index (each
turn judged on its own, over the episodes that reached it), and per episode and per step their steps, calls,
tokens and times (records.episodes.EpisodeFigures). The task's accuracy is the ordinary one: one item an episode."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from qualeval.figures.speeds import distribution
from qualeval.records import EpisodeFigures, EpisodeRecord, TurnAccuracy

__all__ = ["episode_figures"]


def _by_turn(episodes: Sequence[EpisodeRecord]) -> list[TurnAccuracy]:
    judged: Counter[int] = Counter()
    right: Counter[int] = Counter()
    for episode in episodes:
        for index, turn in enumerate(episode.turns):
            if turn.passed is not None:
                judged[index] += 1
                right[index] += turn.passed
    return [
        TurnAccuracy(turn=t, n=judged[t], right=right[t], share=right[t] / judged[t] if judged[t] else None)
        for t in sorted(judged)
    ]


def episode_figures(episodes: Sequence[EpisodeRecord], warmup: Sequence[bool] = ()) -> EpisodeFigures:
    """The figures of a task's episodes; the accuracy by turn leaves out episodes stopped by the endpoint, the
    times the warm-up episodes (`warmup`: each episode's flag), as the speed figures do."""
    answered = [e for e in episodes if e.ended != "endpoint_error"]
    flags = [*warmup, *[False] * (len(episodes) - len(warmup))]
    measured = [e for e, w in zip(episodes, flags, strict=True) if not w and e.ended != "endpoint_error"]
    steps = [t for e in measured for t in e.turns]
    return EpisodeFigures(
        episodes=len(episodes),
        ended=dict(Counter(e.ended for e in episodes)),
        passback=dict(Counter(e.passback for e in episodes)),
        error_types=dict(Counter(e.error_type for e in answered if e.error_type)),
        by_turn=_by_turn(answered),
        steps=distribution(e.steps for e in answered),
        calls=distribution(e.calls for e in answered),
        reasoning_tokens=distribution(e.reasoning_tokens for e in answered),
        answer_tokens=distribution(e.answer_tokens for e in answered),
        episode_ms=distribution(e.ms for e in measured),
        step_ms=distribution(ms for t in steps for ms in t.step_ms),
        first_call_ms=distribution(ms for t in steps for ms in t.first_call_ms),
    )
