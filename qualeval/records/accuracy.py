"""A task's accuracy in summary.json: the Wilson cell, the task's summary (statuses, rungs, breakdowns, what was
left out and why) and repeated sampling. qualeval.figures.accuracy computes them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from qualeval.records.statuses import Rung, Status

__all__ = ["Cell", "Repeated", "TaskSummary"]


class Cell(BaseModel):
    """An accuracy with its Wilson interval (qualeval.figures.accuracy.cell_of)."""

    n: int
    correct: int | float
    """Right answers; fractional when an item's records disagree (its score is their mean)."""
    accuracy: float | None
    """None when n = 0: nothing was judged (a task not scored, a level with no answer), so there is no share and
    no interval, rather than 0% between 0 and 1."""
    low: float | None
    high: float | None

    @model_validator(mode="before")
    @classmethod
    def _judged(cls, data: Any) -> Any:
        """A summary.json written before cells could be empty says 0% between 0 and 1 where n = 0: read as none."""
        if isinstance(data, dict) and data.get("n") == 0:
            return {**data, "accuracy": None, "low": None, "high": None}
        return data


class TaskSummary(BaseModel):
    task: str
    n: int
    """Distinct items the model answered: an item whose every request ended in an endpoint error is not among
    them (`endpoint_errors`)."""
    correct: int | float | None
    """Sum of the items' scores (each the mean correctness of its answered records); None with `per_level`."""
    accuracy: float | None
    """Over the items the model answered; None when it answered none (nothing was measured), with `per_level`,
    and for a task that is not scored (TaskReport.scored), as are `interval` and the other shares pooled over
    the items (`correct` too)."""
    interval: tuple[float, float] | None
    per_level: list[str] = Field(default_factory=list)
    """The levels, when they differ in what was asked (budget, effort, thinking), not merely in load: a figure
    pooled over them means little, so the accuracy is per level only (TaskReport.levels)."""
    accuracy_answered: float | None
    """Accuracy over items that got an answer (status ok or answer_truncated)."""
    statuses: dict[Status, int]
    rungs: dict[Rung, int]
    endpoint_errors: int = 0
    """Records whose request failed for good at the endpoint (connection, timeout, 429, 5xx, a 4xx such as
    context exceeded): never answers, so never in `accuracy`."""
    error_items: int = 0
    """Items left out of `accuracy` because every request of theirs ended in an endpoint error."""
    unknown_questions: int = 0
    """Records a reference server (qualeval.sim) answered with a refusal because the question was not in its
    answer key (status `unknown_question`): not the model's answers, so never in `accuracy`, and no endpoint
    error either (sending them again gets the same refusal)."""
    error_reasons: dict[str, int] = Field(default_factory=dict)
    """The endpoint's own reasons for those errors, most common first (at most five)."""
    constraint_held: dict[str, int] = Field(default_factory=dict)
    naive_accuracy: float | None = None
    """What the last number (letter, yes/no) anywhere in reasoning plus content would have scored."""
    rescued: int = 0
    """Items with empty content whose reasoning held an answer (rescue on); never in `accuracy`."""
    rescue_correct: int = 0
    truncated_correct: int = 0
    """Responses cut off by the budget after the answer began (status answer_truncated) that state the right
    answer: counted correct, as the answer was given before the cut. `statuses` has how many were cut off."""
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
    followup: dict[str, int] = Field(default_factory=dict)
    """Followup mode: how each follow-up's answer stood to the content's (records.Agreement); `disagrees` and
    `unsupported` are follow-ups the content does not support, never scored."""


class Repeated(BaseModel):
    """K samples per item, clustered by item (the unit) in the standard errors. Only samples the model answered
    count: an endpoint error is no wrong sample, and an item with none is not among `items`."""

    k: int
    items: int
    mean: float
    mean_se: float
    maj_at_k: float | None
    """Over the `complete` items alone; None when no item has all K samples answered."""
    maj_se: float
    pass_at_k: float | None
    """Over the `complete` items alone, as maj@K."""
    pass_se: float
    complete: int | None = None
    """Items with all K samples answered: maj@K and pass@K are over these alone, since an item with fewer is no
    maj@K nor pass@K. None in a summary written before it was counted."""
    pass_at: dict[int, float] = {}
    """Unbiased pass@k (Chen et al., 2021) for k = 1, 2, 5, 10, 20, 50, 100 and K, as far as K samples allow:
    per item 1 - C(n-c, k) / C(n, k) with c of its n samples right, averaged over items."""
