"""Per-task summaries: accuracy with a Wilson interval, statuses, extraction rungs, breakdowns.

Accuracy counts every item: a truncated or empty answer is not correct. Because those are serving problems
rather than wrong answers, the summary also counts them per status and gives the accuracy over answered
items (`accuracy_answered`, status ok or answer_truncated) beside it.

Accuracy counts each item once, however many records it has (one per load level of a sweep and per sample of
`--samples-per-item`): an item's score is the mean correctness of its records, accuracy is the mean score, and
the Wilson interval uses n = distinct items. With one record per item that is the plain share right. Statuses,
rungs and the other counts are per record (per response).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["Cell", "Outcome", "TaskSummary", "item_scores", "summarize", "wilson"]

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
    item: str | None = None
    """The item answered (its sample id): accuracy counts an item once. None: an item of its own."""
    measures: Mapping[str, Sequence[float]] | None = None
    """A scorer's own figures for this answer, each (hits, out of): IFEval's instruction-level counts."""


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


class Cell(BaseModel):
    n: int
    correct: int | float
    """Right answers; fractional when an item's records disagree (its score is their mean)."""
    accuracy: float
    low: float
    high: float

    @classmethod
    def of(cls, flags: Sequence[bool | float]) -> Cell:
        """From one correctness (or item score) per item."""
        k, n = sum(flags), len(flags)
        low, high = wilson(k, n)
        shown = round(k, 9)  # a sum of means, 13.33333333333333, is shown as 13.333333333
        shown = int(shown) if float(shown).is_integer() else shown  # a whole count stays an integer
        return cls(n=n, correct=shown, accuracy=k / n if n else 0.0, low=low, high=high)


class TaskSummary(BaseModel):
    task: str
    n: int
    """Distinct items."""
    correct: int | float
    """Sum of the items' scores (each the mean correctness of its records)."""
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
    records: int | None = None
    """Responses summarised (several per item in a sweep or with --samples-per-item)."""
    measures: dict[str, Cell] = Field(default_factory=dict)
    """A scorer's own figures pooled over the answers (hits over all they were out of), with Wilson intervals:
    IFEval's prompt- and instruction-level, strict and loose."""
    accuracy_without_judge: float | None = None
    """Where a model judge turned answers correct: the accuracy by the rules alone (`accuracy` includes it)."""


def summarize(task: str, outcomes: Iterable[Outcome], breakdowns: Sequence[str] = ()) -> TaskSummary:
    """Summarise the final answers of one task."""
    rows = list(outcomes)
    cell = Cell.of(item_scores((r.item, r.correct) for r in rows))
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
        records=len(rows),
    )
    if any(r.rung == "judge" for r in rows):
        summary.accuracy_without_judge = Cell.of(
            item_scores((r.item, r.correct and r.rung != "judge") for r in rows)
        ).accuracy
    summary.measures = _measures(rows)
    for name in breakdowns:
        groups: dict[str, list[tuple[str | None, bool]]] = defaultdict(list)
        for r in rows:
            groups[str(r.meta.get(name))].append((r.item, r.correct))
        cells = {value: Cell.of(item_scores(answers)) for value, answers in sorted(groups.items())}
        summary.breakdowns[name] = cells
        summary.macro_accuracy[name] = sum(c.accuracy for c in cells.values()) / len(cells) if cells else 0.0
    return summary


def _measures(rows: Sequence[Outcome]) -> dict[str, Cell]:
    hits: dict[str, float] = defaultdict(float)
    totals: dict[str, float] = defaultdict(float)
    for row in rows:
        for name, (hit, total) in (row.measures or {}).items():
            hits[name] += hit
            totals[name] += total
    out = {}
    for name, total in totals.items():
        low, high = wilson(hits[name], int(total))
        shown = int(hits[name]) if float(hits[name]).is_integer() else hits[name]
        out[name] = Cell(n=int(total), correct=shown, accuracy=hits[name] / total if total else 0.0, low=low, high=high)
    return out
