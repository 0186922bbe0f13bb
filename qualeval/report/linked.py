"""The "speed and quality together" section's gate and the scope it states: its figures pool a task's levels."""

from __future__ import annotations

from qualeval.records import TaskReport

__all__ = ["has_linked", "linked_scope"]


def has_linked(t: TaskReport) -> bool:
    """Whether the task has speed and quality to read together: it is scored, and some answer was measured."""
    k = t.linked
    return t.scored and bool(
        k.accuracy_by_reasoning_length
        or k.latency_by_outcome
        or (k.truncation and (k.truncation.budget or k.truncation.truncated))
    )


def linked_scope(t: TaskReport) -> str:
    """What the section's figures pool, where a task ran at several levels (budgets, loads, streamed or not): all
    of them; each level's own accuracy and speed are in the level table. Empty at one level."""
    if len(t.levels) < 2:
        return ""
    return (
        f"Pooled over all {len(t.levels)} levels ({', '.join(t.levels)}): each level's own accuracy and speed are "
        "in the per-level table."
    )
