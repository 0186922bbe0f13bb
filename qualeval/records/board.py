"""board.json: N runs of the same items side by side (qualeval.figures.board computes it)."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from qualeval.records.accuracy import Cell
from qualeval.records.comparison import Noise
from qualeval.records.summary import Distribution
from qualeval.records.toolfigures import ToolFigures, ToolPaired

__all__ = ["Board", "BoardRun", "BoardTask", "ConfigFigures", "SpeedRatio"]


def _unset(value: object) -> bool:
    return value is None


class SpeedRatio(BaseModel):
    """One speed figure of a config against the baseline's, over the requests both answered (warm-ups aside)."""

    ratio: float
    """Config / baseline."""
    low: float | None = None
    high: float | None = None
    """The ratio's 95% paired bootstrap interval (requests resampled together); None with fewer than two pairs."""
    spread: float | None = None
    """How far a second run of the baseline's configuration moved on its own on the same figure, as a factor up or
    down (a rerun at × 0.56 the baseline's has a spread of × 1.79: qualeval.figures.noise.spread_factor, as
    compare and gate hold it). None without a rerun."""
    within_spread: bool | None = None
    """The ratio, as a factor up or down, no larger than `spread`. None without a rerun."""
    within_noise: bool | None = None
    """The ratio cannot be told from noise: its interval holds 1, or it is within the rerun's spread (the reading
    compare gives too: qualeval.figures.noise.read_speed). None when not read: no interval, or not comparable."""
    reading: str | None = None
    """`within_noise` in words, or why the figure was not read."""
    not_comparable: str | None = None
    """Why the ratio is no reading of the config: "cached" where one side's prompts came from a prefix cache the
    other's did not (qualeval.figures.repeats.cached_side, as compare and gate test it)."""


class ConfigFigures(BaseModel):
    """One config's figures on one task: warm-ups in (each run scores them), endpoint errors left out."""

    answered: int
    endpoint_errors: int
    unknown_questions: int = 0
    """Questions a reference server did not know (status unknown_question): left out like endpoint errors."""
    accuracy: Cell | None
    """Over the items this config answered, Wilson 95%; None when the task is not scored."""
    pairs: int
    """Items both this config and the baseline answered: what `difference` and `p_value` are of."""
    difference: float | None
    """Accuracy minus the baseline's on the paired items."""
    p_value: float | None
    """McNemar's exact test against the baseline, uncorrected (None for the baseline itself)."""
    p_adjusted: float | None
    """The same, Holm-corrected over the configs compared with the baseline."""
    within_noise: bool | None = None
    """The difference read against noise as compare and gate read it (qualeval.figures.noise.read_noise), on the
    Holm-adjusted p: within noise unless it rejects at alpha and, with a rerun of the baseline, the difference is
    larger than what the rerun moved on its own. With one config beside the baseline Holm changes nothing, so this
    is compare's reading of the same two runs; with more, a board asks more questions and needs more to say yes.
    None for the baseline, and where there is no paired item or no score."""
    noise_reading: str | None = None
    """`within_noise` in words: 'beyond noise: Holm-adjusted McNemar p = 0.012 (below 0.05), ...'."""
    tied_with_best: bool | None
    """McNemar against the best config, Holm-corrected, does not reject at alpha: cannot be told apart from it."""
    reasoning_tokens: float | None
    """Mean per answer."""
    answer_tokens: float | None
    truncated: float
    """The share of answered requests cut off by the token budget."""
    ttft: Distribution | None
    first_answer: Distribution | None
    latency: Distribution | None
    output_tps: float | None
    """Output tokens per second over the task's requests (None where requests span sessions); on an open-loop
    board (`Board.per_request`) the mean output tokens per second of a request."""
    spec_acceptance: float | None
    """Accepted / drafted tokens where the server reports them (llama.cpp per request, else the run's metrics)."""
    correct_per_minute: float | None
    speed: dict[str, SpeedRatio] = {}
    """ttft_p50, first_answer_p50, latency_p50, output_tps against the baseline's."""
    pareto_throughput: bool | None = None
    """Not dominated in (accuracy, output tok/s); None when either is missing."""
    pareto_first_answer: bool | None = None
    """Not dominated in (accuracy, first-answer latency p50)."""
    tools: ToolFigures | None = Field(default=None, exclude_if=_unset)
    """A tool-call task's figures for this config (records.toolfigures), over its records of the task; parity is
    the run's own, over every record it holds. None, and not written, for any other task."""
    tool_paired: ToolPaired | None = Field(default=None, exclude_if=_unset)
    """Its per-item tool verdicts against the baseline's: McNemar, Holm-corrected as `p_adjusted` is. None, and
    not written, for the baseline and for a task with no tool-call item."""


class BoardTask(BaseModel):
    scored: bool
    best: str | None
    """The label of the config most ahead of the baseline (None when not scored)."""
    configs: dict[str, ConfigFigures]
    noise: Noise | None = None
    """The baseline against its rerun, item by item."""


class BoardRun(BaseModel):
    name: str
    """The config's label: the user's (`qualeval board fp16=runs/a`), else A, B, C… in the board's order, the
    baseline first. Every table and plot names the config by it; the key gives its settings and folder."""
    path: str
    settings: dict[str, JsonValue]
    """The settings the runs differ in (dotted, as `compare` lists them), with this run's value: null where the
    manifest holds none (unset, so the server's or qualeval's default)."""
    simulated: bool


class Board(BaseModel):
    baseline: str
    """The baseline's label (one of `runs`)."""
    rerun: str | None = None
    """The path of a second run of the baseline's configuration."""
    alpha: float
    correction: str
    """How p-values are corrected for the number of configs (`holm`)."""
    runs: list[BoardRun]
    tasks: dict[str, BoardTask]
    per_request: bool = False
    """A run sent its requests at a set arrival rate (--request-rate): its aggregate tok/s is the arrival rate's
    whatever the config, so output tok/s is the mean of each request's, as the gate judges it."""
    streams: str | None = Field(default=None, exclude_if=_unset)
    """Which responses of a --stream-parity run are paired (qualeval.figures.streams), said; None where no run is
    one."""
