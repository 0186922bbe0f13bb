"""The gate's policy (a YAML file the user writes) and gate.json (qualeval.figures.gate computes it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

__all__ = ["ClauseVerdict", "Clauses", "GateResult", "Policy", "TaskGate", "Verdict"]

Verdict = Literal["GO", "NO-GO", "INCONCLUSIVE"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt clause or key is refused, never ignored


class AccuracyClause(_Strict):
    max_drop: float = Field(ge=0.0, lt=1.0)
    """The largest accuracy drop allowed, a share (0.02: two points): the non-inferiority margin."""


class MaxRatio(_Strict):
    max_ratio: float = Field(gt=0.0)


class MinRatio(_Strict):
    min_ratio: float = Field(gt=0.0)


class MaxCount(_Strict):
    max: int = Field(ge=0)


class MaxShare(_Strict):
    max_share: float = Field(ge=0.0, le=1.0)


class Within(_Strict):
    within: float = Field(ge=0.0)
    """A share: 0.1 allows the candidate's mean output tokens per item within ±10% of the baseline's."""


class Clauses(_Strict):
    """The clauses for one task (or `default:`, for every task); a task's own clause replaces the default's."""

    accuracy: AccuracyClause | None = None
    ttft_p99: MaxRatio | None = None
    """Candidate TTFT p99 / baseline's at most."""
    output_tps: MinRatio | None = None
    """Candidate output tokens per second / baseline's at least."""
    endpoint_errors: MaxCount | None = None
    truncated: MaxShare | None = None
    output_tokens: Within | None = None


class Policy(RootModel[dict[str, Clauses]]):
    """Task name (or `default`) to its clauses."""


class ClauseVerdict(BaseModel):
    clause: str
    verdict: Verdict
    limit: float | None
    """None: the policy sets no limit (an endpoint_errors verdict given where the policy has no such clause)."""
    value: float | None
    """What was measured against the limit (the accuracy difference, a ratio, a count or share); None: not measured."""
    detail: str
    """Why, in one line."""
    low: float | None = None
    """Accuracy: the one-sided 95% lower bound of the paired difference; likewise `high` the upper."""
    high: float | None = None
    pairs: int | None = None
    detectable: float | None = None
    """Accuracy: the smallest difference the pairs can detect (McNemar, alpha 0.05, power 0.8)."""
    items_needed: int | None = None
    """Accuracy: how many paired items would detect a difference of the margin, at the discordance seen."""


class TaskGate(BaseModel):
    verdict: Verdict
    clauses: list[ClauseVerdict]
    unknown_questions: int = 0
    """Questions a reference server did not know (status unknown_question), in the candidate and the baseline
    together: no answer of the model's, left out of every figure; the `endpoint_errors` clause counts them."""
    endpoint_errors: tuple[int, int] = (0, 0)
    """Requests that failed at the endpoint, the baseline's then the candidate's: no answer of the model's, left out
    of every figure; gate output names them whatever the policy."""


class GateResult(BaseModel):
    baseline: str
    rerun: str | None
    candidate: str
    policy: str
    verdict: Verdict
    exit_code: int
    """0 GO, 1 NO-GO, 4 INCONCLUSIVE."""
    tasks: dict[str, TaskGate]
