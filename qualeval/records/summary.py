"""summary.json: a run's figures per task (accuracy, repeated sampling, speed per load level and overall, speed
and quality together, faults); `qualeval score` writes the same RunSummary, with its one task and no timing.
qualeval.figures.accuracy, qualeval.figures.speeds and qualeval.figures.summary compute them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from qualeval.records.accuracy import Cell, Repeated, TaskSummary
from qualeval.records.distribution import Distribution
from qualeval.records.episodes import EpisodeFigures
from qualeval.records.repeats import Paired, PromptCache
from qualeval.records.shaping import TemplateTokens, WorkloadPrompts, WorkloadStyle
from qualeval.records.toolfigures import ToolFigures

__all__ = [
    "BenchyFigures",
    "ContextFigures",
    "Distribution",
    "Frontier",
    "FrontierLevel",
    "LengthFigures",
    "LevelReport",
    "Linked",
    "MeanMax",
    "MeanStd",
    "RunSummary",
    "ServingFigures",
    "Speed",
    "Stats",
    "Targets",
    "TaskReport",
    "Truncation",
    "VllmFigures",
    "WorkloadFigures",
    "WorkloadLevel",
]


class Speed(BaseModel):
    """Milliseconds, tokens, tokens per second; warm-up requests excluded. Definitions follow vllm bench serve
    where it has one; `first_answer` and `reasoning_duration` are what reasoning models add."""

    requests: int
    """HTTP requests answered (an episode's steps each count as one; retries not)."""
    episodes: int | None = None
    """The agent's episodes among them (None: no episode). Latency, TTFT, tokens and the goodput are then per
    episode (its requests summed; its first request's TTFT), TPOT undefined; `requests` and
    `request_throughput` count its steps."""
    duration_s: float | None
    """From the first request sent to the last response finished; None when the records span sessions."""
    ttft: Distribution | None
    first_answer: Distribution | None
    reasoning_duration: Distribution | None
    latency: Distribution | None
    tpot: Distribution | None
    itl: Distribution | None
    """Pooled over every gap of every request (the mean is exact, percentiles within 2.5%)."""
    output_rate: Distribution | None
    reasoning_tokens: Distribution | None
    answer_tokens: Distribution | None
    output_throughput: float | None
    """All output tokens over the duration."""
    request_throughput: float | None
    goodput: float | None = None
    """Requests per second that met every SLO limit (None without an SLO)."""
    slo_met: float | None = None
    """The share of requests that met every SLO limit."""
    prompt_cache: PromptCache | None = None  # None when the server reports no cached prompt tokens


class Truncation(BaseModel):
    budget: int | None
    """The max_tokens the requests were sent with; None when unset or swept (no budget suggested then)."""
    truncated: int
    rate: float
    suggested_budget: int | None
    """The smallest multiple of 256 at least 1.25 x the p99 length of the answers that finished; at least
    double the budget when more than 5% were cut off (their true length is unknown, only that it was longer)."""


class Linked(BaseModel):
    """Speed and quality read together; what counts right answers is empty or None for a task not scored."""

    accuracy_by_reasoning_length: dict[str, Cell]
    latency_by_outcome: dict[str, Distribution]
    correct_per_minute: float | None
    tokens_per_correct: float | None
    seconds_per_correct: float | None
    truncation: Truncation | None
    """None when no answer of the model's was timed (`qualeval score`, or every request failed): its statuses then
    count what was cut off, and no budget is known."""


class FrontierLevel(BaseModel):
    """One level of a task's frontier: its accuracy beside what it cost. Warm-up and endpoint-failed requests
    are in no token or latency figure, as in Speed."""

    level: str
    accuracy: Cell
    output_tokens: Distribution | None
    """Completion tokens, reasoning included: what a level spends."""
    reasoning_tokens: Distribution | None
    answer_tokens: Distribution | None
    reasoning_truncated: float
    """The share of the level's requests the endpoint answered (warm-up included, as in `accuracy`) whose budget
    ran out while still reasoning (status reasoning_truncated)."""
    latency_p50: float | None
    latency_p99: float | None
    first_answer_p50: float | None
    efficient_tokens: bool | None
    """Pareto-efficient on accuracy against mean output tokens: no other level is as accurate with no more
    tokens and better in one of the two. None: not placed (nothing answered, or no token count)."""
    efficient_latency: bool | None
    """The same against latency p50."""
    vs_previous: Paired | None
    """Against the level before it in run order, at the same load where the budget crosses the load (None for
    the first)."""


class Frontier(BaseModel):
    """A task's levels in run order, read as a trade of accuracy against cost. Computed when the task ran two or
    more levels whose mean output tokens differ: budget levels (max_tokens=512, effort=low), and a load sweep
    whose sampled lengths moved, shown by level as it is."""

    levels: list[FrontierLevel]
    within: float
    """The share (0.01 = 1 point) by which `smallest_within` may fall short of `best` (--within, in points)."""
    best: str | None
    """The most accurate level (the first in run order on a tie); None when no level got any item right."""
    smallest_within: str | None
    """The level with the fewest mean output tokens whose accuracy is within `within` of the best's."""


def _unset(value: object) -> bool:
    return value is None


class LevelReport(BaseModel):
    """One load level: the same items as every other level, under this load."""

    accuracy: Cell
    """Over the items the model answered at this level; n = 0 (nothing judged) when the task is not scored."""
    speed: Speed
    endpoint_errors: int = 0
    """Requests at this level that failed for good at the endpoint: left out of `accuracy`."""
    vs_first: Paired | None = None
    """Quality under load: against the first level of its load sweep, the first in run order that ran the same
    budget (its label but for c= and rate=). None at that first level, and when no level differs only in load."""
    tools: ToolFigures | None = Field(default=None, exclude_if=_unset)
    """A tool-call task's figures at this level, when the task ran several (TaskReport.tools pools them)."""
    episodes: EpisodeFigures | None = Field(default=None, exclude_if=_unset)
    """A multi-turn task's episodes at this level, when the task ran several (stream parity's two sides, load
    levels): TaskReport.episodes pools them, the report shows these."""
    accuracy_answered: float | None = Field(default=None, exclude_if=_unset)
    naive_accuracy: float | None = Field(default=None, exclude_if=_unset)
    """This level's own, as TaskSummary has them, where the levels asked differently (the pooled ones are None)."""


class TaskReport(BaseModel):
    summary: TaskSummary
    repeated: Repeated | None = None
    speed: Speed
    """Over every level; throughput only when there is one level."""
    levels: dict[str, LevelReport] = {}
    frontier: Frontier | None = None
    """None unless the task ran two or more levels whose mean output tokens differ."""
    linked: Linked
    faults: dict[str, int] = {}
    """Every failed attempt by fault class (429, 503, connection, timeout, protocol...), retried or final."""
    retried: int = 0
    """Requests with a failed attempt before their result: an answered one's TTFT and latency count from its
    first attempt, the retries included (`timing.retrying` in its record)."""
    published: float | None = None
    """The published figure for this task (a model card's, as a share), given with the run, shown beside ours."""
    scored: bool = True
    """False for a workload's synthetic prompts: there is no right answer, so no accuracy to show: the summary's
    shares, `repeated`, and what `linked` and `levels` derive from correctness are None or empty."""
    episodes: EpisodeFigures | None = Field(default=None, exclude_if=_unset)
    """A multi-turn task's episodes (records.episodes); None, and not written, for any other task."""
    tools: ToolFigures | None = Field(default=None, exclude_if=_unset)
    """A tool-call task's figures (records.toolfigures): trigger agreement, schema validity, wire statuses,
    recovered calls, call timing, stream parity. None, and not written, for a task with no tool-call item."""


Stats = dict[str, float]
"""n, mean, median, std (not for ITL, pooled from histograms) and the percentiles asked for, `p50`, `p99.9`:
open-ended, since a workload names its own percentiles (qualeval.serving.figures.stats)."""


class VllmFigures(BaseModel):
    """One level's figures in vllm bench serve's names and definitions, and what it lacks (first_answer,
    reasoning_tokens, decode_per_user)."""

    completed: int
    duration_s: float | None
    total_input_tokens: int
    """The prompts' tokens as shaping counted them (else as the server reported them)."""
    total_input_tokens_server: int
    """The server's usage.prompt_tokens, summed."""
    total_output_tokens: int
    request_throughput: float | None
    output_throughput: float | None
    total_token_throughput: float | None
    ttft: Stats | None
    tpot: Stats | None
    itl: Stats | None
    e2el: Stats | None
    first_answer: Stats | None
    reasoning_tokens: Stats | None
    decode_per_user: Stats | None


class MeanStd(BaseModel):
    mean: float
    std: float
    n: int


class BenchyFigures(BaseModel):
    """One level's figures as llama-benchy's results.py computes them: `*_total` per batch (a "run"),
    `*_per_user` per request. The peaks, e2e_ttft and the prompt tokens are absent from a summary written
    before qualeval had them."""

    runs: int
    pp_total: MeanStd | None = None
    tg_total: MeanStd | None = None
    peak_total: MeanStd | None = None
    tg_per_user: MeanStd | None = None
    peak_per_user: MeanStd | None = None
    ttfr: MeanStd | None = None
    e2e_ttft: MeanStd | None = None
    prompt_tokens: MeanStd | None = None
    """As llama-benchy counts them."""
    prompt_processed: MeanStd | None = None
    """As llama.cpp's timings report them (prompt_n + cache_n)."""


class WorkloadLevel(BaseModel):
    vllm: VllmFigures
    llama_benchy: BenchyFigures


class Targets(BaseModel):
    """How the measured requests stood to their target lengths."""

    requests: int
    output_short: int
    """Requests that stopped short of their target output length."""
    output_short_mean_ratio: float | None
    prompt_off_target: int
    """Prompts more than 1% off their target length."""
    prompt_count: list[str]
    """Who counted the prompts' tokens."""


class WorkloadFigures(BaseModel):
    """The workload's figures per load level, beside what shaping decided (forcing keys, template tokens)."""

    name: str
    style: WorkloadStyle = "vllm"
    mirrors: str = ""
    prompts: WorkloadPrompts = Field(default_factory=WorkloadPrompts)
    percentiles: list[float] = Field(default_factory=lambda: [50.0, 90.0, 95.0, 99.0])
    levels: dict[str, WorkloadLevel]
    targets: Targets
    forcing: dict[str, bool] | None = None
    template: list[TemplateTokens] | None = None
    notes: list[str] = Field(default_factory=list)
    """The length rule the prompts followed and the tool's definitions, for the report."""


class LengthFigures(BaseModel):
    """One task at one target context length."""

    accuracy: Cell
    """Over the items answered, once each."""
    endpoint_errors: int = 0
    prompt_tokens: Stats | None = None
    ttft: Stats | None = None
    first_answer: Stats | None = None
    decode_rate: Stats | None = None


class ContextFigures(BaseModel):
    depth: float | None
    tasks: dict[str, dict[str, LengthFigures]]
    """Per task, per target context length (its tokens, as a string)."""


class ServingFigures(BaseModel):
    """What a serving run adds to summary.json: each part only where the run has it (the key is left out)."""

    workload: WorkloadFigures | None = Field(default=None, exclude_if=_unset)
    context: ContextFigures | None = Field(default=None, exclude_if=_unset)
    endpoints: dict[str, Speed] | None = Field(default=None, exclude_if=_unset)
    """Speed per replica, when the run spread its requests over two or more."""


class MeanMax(BaseModel):
    """A server figure over the run's measured seconds."""

    mean: float
    max: float
    n: int


class RunSummary(BaseModel):
    model: str
    base_url: str | None
    """The server the run asked; None for `qualeval score`, which asked none (`source` names what it judged)."""
    source: str | None = None
    """The responses file `qualeval score` judged; None for a run."""
    simulated: bool
    qualeval_version: str
    started: str | None = None
    wall_s: float | None = None
    records: int
    rescored: bool = False
    notes: list[str] = Field(default_factory=list)
    """What the reports say first, where a figure would not mean what it seems (a simulated server with no answer
    key: every accuracy is 0 by construction)."""
    tasks: dict[str, TaskReport]
    serving: ServingFigures | None = None
    """Workload figures as vllm bench serve and llama-benchy define them, accuracy by context length, speed per
    replica (qualeval.serving.figures)."""
    server: dict[str, dict[str, MeanMax]] | None = None
    """The server's own metrics per replica and figure over the run, from timeseries.jsonl
    (qualeval.serving.timeseries)."""
    server_gaps: dict[str, str] | None = None
    """Why the run has no figure of a server metric, per metric it lacks (its server exposes none, its /metrics
    never answered, every sample read an idle server...): what `compare` and the report say beside a "–"."""
