"""A multi-turn task's episodes in `qualeval compare`: the passback each run applied, accuracy by turn index side by
side with B - A per turn (over the episodes that reached the turn in both runs), and, when the runs differ in the
passback alone, the interleaved-thinking figure: the episode accuracy difference with its interval.

The episode's verdict is its record's `score`, so the task's own accuracy row (paired bootstrap, McNemar) is
already the episodes' B - A; what is added here says what it is of. Pairs where either episode ended at an
endpoint error are not among the pairs (compare leaves them out and counts them apart, as for any item)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from qualeval.figures.noise import mcnemar_exact
from qualeval.records import EpisodeSides, Record, TaskComparison, TurnPair

__all__ = ["PASSBACK_SETTINGS", "episode_sides", "with_episodes"]

PASSBACK_SETTINGS = ("reasoning_passback", "pinned.passback")
"""The passback as compare's settings name it: the option asked (`--reasoning-passback`), and what the run applied
(`auto` resolved by the probe)."""

Pair = tuple[Record, Record]


def _turns(pairs: Sequence[Pair]) -> list[TurnPair]:
    """Per turn index, the paired episodes whose turn was judged in both runs, and B - A on them."""
    counts: dict[int, Counter[tuple[bool, bool]]] = {}
    for ra, rb in pairs:
        assert ra.episode is not None and rb.episode is not None
        for index, (ta, tb) in enumerate(zip(ra.episode.turns, rb.episode.turns, strict=False)):
            if ta.passed is not None and tb.passed is not None:
                counts.setdefault(index, Counter())[(ta.passed, tb.passed)] += 1
    out = []
    for turn, c in sorted(counts.items()):
        n = sum(c.values())
        right_a, right_b = c[(True, True)] + c[(True, False)], c[(True, True)] + c[(False, True)]
        p = mcnemar_exact(c[(True, False)], c[(False, True)])
        difference = (right_b - right_a) / n
        out.append(TurnPair(turn=turn, n=n, right_a=right_a, right_b=right_b, difference=difference, p_value=p))
    return out


def _figure(t: TaskComparison, applied: tuple[str, str], others: Sequence[str]) -> str:
    """The interleaved-thinking figure in words, or why B - A is not the passback's alone."""
    if others:
        return (
            f"the runs differ in {', '.join(others)} too, so B - A is not the passback's effect alone (no "
            "interleaved-thinking figure)"
        )
    if not t.scored or t.difference is None or t.low is None or t.high is None:
        return "no episode was answered by both runs: no interleaved-thinking figure"
    reading = f"; {t.noise_reading}" if t.noise_reading else ""
    return (
        f"interleaved-thinking figure (reasoning passed back as {applied[1]} against {applied[0]}, nothing else "
        f"differs): episode accuracy {t.difference:+.1%} [{t.low:+.1%}, {t.high:+.1%}] on {t.pairs} paired "
        f"episodes, McNemar p={t.p_value:.3g}{reading}"
    )


def _said(counts: Counter[Any]) -> str:
    return "+".join(sorted(counts)) or "–"


def episode_sides(t: TaskComparison, pairs: Sequence[Pair], settings: dict[str, Any]) -> EpisodeSides | None:
    """The episodes of a task's pairs side by side; None for a task whose items are no episodes."""
    pairs = [(ra, rb) for ra, rb in pairs if ra.episode is not None and rb.episode is not None]
    if not pairs:
        return None
    applied_a = Counter(ra.episode.passback for ra, _ in pairs if ra.episode is not None)
    applied_b = Counter(rb.episode.passback for _, rb in pairs if rb.episode is not None)
    differs = applied_a != applied_b or any(k in settings for k in PASSBACK_SETTINGS)
    others = [k for k in settings if k not in PASSBACK_SETTINGS]
    return EpisodeSides(
        passback=(dict(applied_a), dict(applied_b)),
        passback_differs=differs,
        passback_only=differs and not others,
        by_turn=_turns(pairs),
        figure=_figure(t, (_said(applied_a), _said(applied_b)), others) if differs else None,
    )


def with_episodes(
    tasks: dict[str, TaskComparison], grouped: dict[str, list[Pair]], settings: dict[str, Any]
) -> dict[str, TaskComparison]:
    """Each multi-turn task with its episodes side by side (read after the accuracy's reading against noise)."""
    return {
        name: t.model_copy(update={"episodes": episode_sides(t, grouped.get(name, []), settings)})
        for name, t in tasks.items()
    }
