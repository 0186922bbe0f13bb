"""Per-task summaries: accuracy with a Wilson interval, statuses, extraction rungs, breakdowns.

Accuracy counts every item: a truncated or empty answer is not correct. Because those are serving problems
rather than wrong answers, the summary also counts them per status and gives the accuracy over answered
items (`accuracy_answered`, status ok or answer_truncated) beside it.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["Cell", "Outcome", "TaskSummary", "summarize", "wilson"]

ANSWERED = ("ok", "answer_truncated")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a summary needs of one final answer, from a live record or an offline item."""

    status: str
    correct: bool
    rung: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    naive_correct: bool | None = None
    held: bool | None = None
    """Whether a structured-output constraint held (None: none sent, or nothing to judge)."""
    rescued: bool = False
    rescue_correct: bool = False


def wilson(correct: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default); (0, 1) when there is nothing to go on."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


class Cell(BaseModel):
    n: int
    correct: int
    accuracy: float
    low: float
    high: float

    @classmethod
    def of(cls, flags: Sequence[bool]) -> Cell:
        k, n = sum(flags), len(flags)
        low, high = wilson(k, n)
        return cls(n=n, correct=k, accuracy=k / n if n else 0.0, low=low, high=high)


class TaskSummary(BaseModel):
    task: str
    n: int
    correct: int
    accuracy: float
    interval: tuple[float, float]
    accuracy_answered: float | None
    """Accuracy over items that got an answer (status ok or answer_truncated)."""
    statuses: dict[str, int]
    rungs: dict[str, int]
    constraint_held: dict[str, int] = Field(default_factory=dict)
    naive_accuracy: float | None = None
    """What the last number (letter, yes/no) anywhere in reasoning plus content would have scored."""
    rescued: int = 0
    """Items with empty content whose reasoning held an answer (rescue on); never in `accuracy`."""
    rescue_correct: int = 0
    breakdowns: dict[str, dict[str, Cell]] = Field(default_factory=dict)
    macro_accuracy: dict[str, float] = Field(default_factory=dict)
    """Per breakdown: the unweighted mean of its groups' accuracies (micro is `accuracy`)."""


def summarize(task: str, outcomes: Iterable[Outcome], breakdowns: Sequence[str] = ()) -> TaskSummary:
    """Summarise the final answers of one task."""
    rows = list(outcomes)
    cell = Cell.of([r.correct for r in rows])
    answered = [r.correct for r in rows if r.status in ANSWERED]
    naive = [r.naive_correct for r in rows if r.naive_correct is not None]
    summary = TaskSummary(
        task=task,
        n=cell.n,
        correct=cell.correct,
        accuracy=cell.accuracy,
        interval=(cell.low, cell.high),
        accuracy_answered=sum(answered) / len(answered) if answered else None,
        statuses=dict(Counter(r.status for r in rows)),
        rungs=dict(Counter(r.rung for r in rows)),
        constraint_held=dict(Counter("held" if r.held else "broken" for r in rows if r.held is not None)),
        naive_accuracy=sum(naive) / len(naive) if naive else None,
        rescued=sum(r.rescued for r in rows),
        rescue_correct=sum(r.rescue_correct for r in rows),
    )
    for name in breakdowns:
        groups: dict[str, list[bool]] = defaultdict(list)
        for r in rows:
            groups[str(r.meta.get(name))].append(r.correct)
        cells = {value: Cell.of(flags) for value, flags in sorted(groups.items())}
        summary.breakdowns[name] = cells
        summary.macro_accuracy[name] = sum(c.accuracy for c in cells.values()) / len(cells) if cells else 0.0
    return summary
