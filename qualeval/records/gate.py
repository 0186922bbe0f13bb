"""The gate's policy (a YAML file the user writes) and gate.json (qualeval.figures.gate computes it)."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, field_validator

__all__ = ["TOOL_CLAUSES", "ClauseVerdict", "Clauses", "GateResult", "Policy", "TaskGate", "Verdict"]

Verdict = Literal["GO", "NO-GO", "INCONCLUSIVE", "INVALID"]
"""GO: every clause shown met. NO-GO: a clause shown missed. INCONCLUSIVE: measured, but too few items (or too much
run-to-run spread) to tell. INVALID: the runs cannot answer a clause as they are (requests failed with no limit
set, nothing answered by both, a figure one run lacks, a TTFT served from a cache the other run did not have)."""


def _yaml(value: float) -> str:
    """A float as YAML spells what it cannot be: .nan, .inf, -.inf."""
    if math.isnan(value):
        return ".nan"
    return ("-" if value < 0 else "") + ".inf"


def _number(value: object) -> object:
    """A policy's number as written: a boolean, text, NaN or an infinity is refused naming the value, never read
    as another number (YAML's `true` as 1, `.inf` as a limit no run can miss)."""
    if value is None:
        raise ValueError("empty: give a number")
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a boolean, not a number")
    if isinstance(value, str):
        raise ValueError(f"{value!r} is text, not a number (write it unquoted)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{_yaml(value)} is not a finite number")
    return value


Number = Annotated[float, BeforeValidator(_number)]
Count = Annotated[int, BeforeValidator(_number)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt clause or key is refused, never ignored


class AccuracyClause(_Strict):
    max_drop: Number
    """The largest accuracy drop allowed, a share (0.02: two points): the non-inferiority margin, above 0."""

    @field_validator("max_drop")
    @classmethod
    def _margin(cls, value: float) -> float:
        if value == 0:
            # a GO needs the lower bound above -margin; at 0 no finite number of identical answers gets there
            raise ValueError(
                "0 allows no drop at all, which no number of items can show (a candidate whose every answer is "
                "the baseline's would still not pass); give the largest drop you accept, as a share: 0.02 for two "
                "points"
            )
        if not 0 < value < 1:
            raise ValueError(f"{value:g} is not a share between 0 and 1 (0.02 is two points)")
        return value


class MaxRatio(_Strict):
    max_ratio: Number = Field(gt=0.0)


class MinRatio(_Strict):
    min_ratio: Number = Field(gt=0.0)


class MaxCount(_Strict):
    max: Count = Field(ge=0)


class MaxShare(_Strict):
    max_share: Number = Field(ge=0.0, le=1.0)


def _share(value: float, example: str) -> float:
    if not 0 <= value <= 1:
        raise ValueError(f"{value:g} is not a share between 0 and 1 ({example})")
    return value


class MinShare(_Strict):
    min: Number
    """The least share of the candidate's allowed, between 0 and 1 (0.95: 95%)."""

    @field_validator("min")
    @classmethod
    def _between(cls, value: float) -> float:
        return _share(value, "0.95 is 95%")


class MaxLeaked(_Strict):
    max_share: Number
    """The largest share of the candidate's tool-call responses allowed to leak markup, between 0 and 1."""

    @field_validator("max_share")
    @classmethod
    def _between(cls, value: float) -> float:
        return _share(value, "0.05 is 5%")


class Within(_Strict):
    within: Number = Field(ge=0.0)
    """A share: 0.1 allows the candidate's mean output tokens per item within ±10% of the baseline's."""


class Clauses(_Strict):
    """The clauses for one task (or `default:`, for every task); a task's own clause replaces the default's."""

    accuracy: AccuracyClause | None = None
    ttft_p99: MaxRatio | None = None
    """Candidate TTFT p99 / baseline's at most."""
    output_tps: MinRatio | None = None
    """Candidate output tokens per second / baseline's at least: the aggregate, or on an open-loop run (a set
    arrival rate, whose aggregate the arrival rate sets) the mean per request."""
    endpoint_errors: MaxCount | None = None
    truncated: MaxShare | None = None
    output_tokens: Within | None = None
    tool_accuracy: AccuracyClause | None = None
    """Tool-call items only: the accuracy clause's non-inferiority test on their paired verdicts."""
    parity: MinShare | None = None
    """The candidate's stream parity (--stream-parity): the share of items whose streamed and non-streamed calls and
    verdict agree, at least."""
    schema_valid: MinShare | None = None
    """The candidate's responses with a call whose every call fits its tool's schema, a share at least."""
    leaked_markup: MaxLeaked | None = None
    """The candidate's tool-call responses whose call was left as markup in the reasoning or the content (status
    call_in_reasoning or markup_in_content), a share at most."""


TOOL_CLAUSES = ("tool_accuracy", "parity", "schema_valid", "leaked_markup")
"""The clauses read of tool-call items alone."""


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
    """Why, in whole sentences."""
    low: float | None = None
    """Accuracy: the one-sided 95% lower bound of the paired difference (the data's alone, whatever the margin);
    likewise `high` the upper."""
    high: float | None = None
    pairs: int | None = None
    detectable: float | None = None
    """Accuracy: the smallest difference the pairs can detect (McNemar, alpha 0.05, power 0.8): information, not
    the test."""
    items_needed: int | None = None
    """Accuracy: how many paired items would clear the margin, at the discordance seen."""
    p_value: float | None = None
    """Accuracy: McNemar's exact test of the paired items, as `qualeval compare` gives it."""
    within_noise: bool | None = None
    """Accuracy: the difference read as compare and board read it (qualeval.figures.noise.read_noise): within noise
    unless McNemar rejects at 0.05 and, with a rerun, it is larger than what the rerun moved on its own."""


class TaskGate(BaseModel):
    verdict: Verdict
    clauses: list[ClauseVerdict]
    unknown_questions: int = 0
    """Questions a reference server did not know (status unknown_question), in the candidate and the baseline
    together: no answer of the model's, left out of every figure; the `endpoint_errors` clause counts them."""
    endpoint_errors: tuple[int, int] = (0, 0)
    """Requests that failed at the endpoint, the baseline's then the candidate's: no answer of the model's, left out
    of every figure; gate output names them whatever the policy."""
    unit: str = "requests"
    """What a count of records is worded as: `episodes` for an agent's task (each many requests)."""
    notes: list[str] = []
    """A clause of `default:` that does not apply here (accuracy on prompts that are not scored), said."""


class GateResult(BaseModel):
    baseline: str
    rerun: str | None
    candidate: str
    policy: str
    verdict: Verdict
    """The worst task's: INVALID before NO-GO before INCONCLUSIVE before GO. Of the gated tasks only."""
    exit_code: int
    """0 GO, 1 NO-GO, 4 INCONCLUSIVE, 5 INVALID."""
    tasks: dict[str, TaskGate]
    not_gated: list[str] = []
    """Tasks of the runs that no clause of the policy covers: the verdict says nothing of them."""
    streams: str | None = None
    """Which responses of a --stream-parity run are paired (qualeval.figures.streams), said; None where no run is
    one."""
