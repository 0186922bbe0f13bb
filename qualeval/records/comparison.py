"""compare.json: two runs paired item by item (qualeval.figures.compare computes it)."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from qualeval.records.repeats import Identical
from qualeval.records.toolfigures import ToolSides

__all__ = ["Comparison", "EpisodeSides", "Noise", "Ratio", "TaskComparison", "TurnPair"]


def _unset(value: object) -> bool:
    return value is None


class Noise(BaseModel):
    """Two runs of the same configuration, paired item by item: how much they differ on their own."""

    pairs: int
    identical: float
    """The share of pairs whose outputs (reasoning, content and tool calls) are byte-identical."""
    discordant: int
    """Pairs right in one run and wrong in the other."""
    difference: float
    """Accuracy of the second run minus the first's: what the rerun moved on its own, which B - A must exceed (as
    well as be significant on its own pairs) to be beyond noise."""
    detectable: float | None
    """The smallest difference these pairs can detect at their discordance (alpha 0.05, power 0.8): information."""


class Ratio(BaseModel):
    a: float
    b: float
    ratio: float
    statistic: str = "mean of paired requests"
    """What each side's figure is: the mean over the paired requests, or `aggregate` (output tokens over the time
    from the first request sent to the last finished, as board and gate read output tok/s)."""
    low: float | None = None
    high: float | None = None
    pairs: int
    spread: float | None = None
    """With a rerun of A: how far A2 moved from A on its own on this figure, as a factor up or down
    (qualeval.figures.noise.spread_factor, as board and gate hold it)."""
    within_spread: bool | None = None
    """B / A, as a factor up or down, no larger than `spread`; None without a rerun."""
    within_noise: bool | None = None
    """B / A cannot be told from noise: its interval holds 1, or it is within the rerun's spread
    (qualeval.figures.noise.read_speed, board's reading too)."""
    reading: str | None = None
    """`within_noise` in words."""


class TurnPair(BaseModel):
    """One turn index of a multi-turn task, over the paired episodes that reached it in both runs (each turn
    judged on its own, as the run's own accuracy by turn)."""

    turn: int
    n: int
    """Paired episodes whose turn was judged in both runs."""
    right_a: int
    right_b: int
    difference: float
    """(right_b - right_a) / n: B - A on these turns."""
    p_value: float
    """McNemar's exact test on this turn's discordant pairs (information: one test a turn, not corrected)."""


class EpisodeSides(BaseModel):
    """A multi-turn task's episodes side by side (qualeval.figures.episodecompare)."""

    passback: tuple[dict[str, int], dict[str, int]]
    """The passback each run applied (`episode.passback`: what `auto` resolved to), counted over the paired
    episodes, A's then B's."""
    passback_differs: bool
    """The runs carried the reasoning back differently (their applied passback, or the setting asked)."""
    passback_only: bool
    """The passback is the one setting the runs differ in: B - A is then the interleaved-thinking figure, the
    effect of passing the reasoning back alone."""
    by_turn: list[TurnPair] = []
    figure: str | None = None
    """The interleaved-thinking figure in words (the episode accuracy difference, its interval and its reading
    against noise), or why B - A is not that figure; None when the runs did not differ in passback."""


class TaskComparison(BaseModel):
    pairs: int
    accuracy_a: float | None
    """None, as every accuracy figure here, when the task is not scored (`scored`)."""
    accuracy_b: float | None
    difference: float | None
    """B - A."""
    low: float | None
    high: float | None
    a_right_b_wrong: int
    a_wrong_b_right: int
    p_value: float | None
    """McNemar's exact test."""
    ratios: dict[str, Ratio]
    """Latency (ttft, first_answer, latency, tpot) and output_rate: B / A of paired means."""
    throughput_ratio: float | None
    """Aggregate output tokens per second over the paired items (each side's tokens over its time from the first
    request sent to the last finished; warm-ups left out), B / A. None on open-loop runs (`Comparison.open_loop`),
    where it is the arrival rate's."""
    flipped_to_wrong: list[str]
    flipped_to_right: list[str]
    unread: dict[str, str] = {}
    """Per speed figure with no ratio: why (a side's figure is 0, a resumed run has no one duration...)."""
    endpoint_errors: tuple[int, int] = (0, 0)
    """Pairs left out because run A's (first) or run B's (second) request got no answer of the model's: it failed
    at the endpoint, or a reference server did not know the question (status `unknown_question`)."""
    warmup_pairs: int = 0
    """Pairs of warm-up requests (`--warmup`): in the accuracy figures, as each run scores them, and in no speed
    ratio."""
    scored: bool = True
    """False for a workload's synthetic prompts: no right answer, so no accuracy, difference or flipped items."""
    detectable: float | None = None
    """The smallest accuracy difference these pairs can detect at the discordance seen (McNemar, alpha 0.05,
    power 0.8): a difference below it cannot be told from none."""
    within_noise: bool | None = None
    """B - A cannot be told from noise: McNemar's exact test (`p_value`) does not reject at 0.05, or, with a rerun
    of A (`qualeval compare A A2 B`), |B - A| is no larger than `rerun_moved`. `board` and `gate` read a difference
    the same way (qualeval.figures.noise.read_noise). None when the task is not scored."""
    noise_reading: str | None = None
    """`within_noise` in words, as compare, board and gate print it: 'beyond noise: McNemar p = 0.0391 (below
    0.05), and larger than the 2.0 points the rerun moved on its own'."""
    rerun_moved: float | None = None
    """With a rerun of A, |A2 - A| on this task's pairs (at this level when the runs swept several); None without."""
    identical: Identical | None = None
    """At temperature 0: the pairs that sent the same messages, how many outputs are byte-identical, and the
    items whose verdict flipped on that same input."""
    prompt_cache: tuple[float | None, float | None] = (None, None)
    """The share of prompt tokens A's and B's servers took from their prefix cache (None: not reported)."""
    tools: ToolSides | None = Field(default=None, exclude_if=_unset)
    """A tool-call task's figures, A's and B's side by side (trigger, schema validity, wire statuses, recovered
    calls, call timing, parity); None, and not written, for any other task."""
    episodes: EpisodeSides | None = Field(default=None, exclude_if=_unset)
    """A multi-turn task's episodes side by side: the passback each run applied, accuracy by turn index with B - A
    per turn, the interleaved-thinking figure; None, and not written, for any other task."""


class Comparison(BaseModel):
    a: str
    b: str
    again: str | None = None
    """A second run of A's configuration (`qualeval compare A A2 B`): the run-to-run noise is measured on it."""
    noise: dict[str, Noise] = {}
    """A against its rerun, keyed as `tasks` is: per task, and per task and load level when the runs swept
    several (one item at several levels is not independent evidence)."""
    simulated: bool
    open_loop: bool = False
    """A run sent its requests at a set arrival rate (--request-rate): the aggregate tok/s is then the arrival
    rate's whatever the config, so no `throughput_ratio` is given; `output_rate` (each request's) compares them."""
    unpaired_a: int
    unpaired_b: int
    tasks: dict[str, TaskComparison]
    unanswered: dict[str, tuple[int, int]] = {}
    """Tasks left with no pair to compare because every one had an endpoint error, with (A's, B's) counts."""
    server: dict[str, list[float | None]] = {}
    """Each server metric (A, B: the server's own, of each run whole), beside each compared task's accuracy and TTFT
    p99 over its paired items (qualeval.figures.compare.side_by_side)."""
    server_notes: list[str] = []
    """Why a run has no server metric where the other has (or neither has, where one was asked for them): "–" in
    the table."""
    settings: dict[str, tuple[JsonValue, JsonValue]] = {}
    """The run settings that differ, A's value then B's: the manifests' `config` (nested keys dotted:
    `slo.ttft_ms`) and what each run pinned (`pinned.constraint`...); `out` is left out, and a key one manifest
    lacks (an older version's) is None there."""
    streams: str | None = Field(default=None, exclude_if=_unset)
    """Which responses of a --stream-parity run are paired (qualeval.figures.streams), said; None where neither
    run is one."""
