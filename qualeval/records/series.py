"""timeseries.jsonl: one line a second of a run, as seen from both ends of the wire."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["SeriesPoint", "ServerSample"]


class ServerSample(BaseModel):
    """One replica's second: its kind and the figures its /metrics gave, through the names servermetrics.yaml maps
    for that kind (a figure its server does not expose, or a counter's in the first second, is absent)."""

    server: Literal["vllm", "sglang", "llamacpp"]
    """The kind recognised from the metric names: the blocks of the packaged servermetrics.yaml."""
    running: float | None = None
    waiting: float | None = None
    kv_cache_usage: float | None = None
    prefix_cache_hit_rate: float | None = None
    preemptions: float | None = None
    generation_throughput: float | None = None
    prompt_throughput: float | None = None
    spec_acceptance_rate: float | None = None
    spec_mean_accepted_length: float | None = None

    def figures(self) -> dict[str, float]:
        """The figures sampled, by name."""
        return self.model_dump(exclude={"server"}, exclude_none=True)


class SeriesPoint(BaseModel):
    t: float
    """Seconds since the run started (a resumed run goes on from its last second)."""
    wall: float
    """Unix time of the sample."""
    output_tokens_per_s: float
    in_flight: int
    queued: int
    tokens: int = 0
    """Completion tokens of the requests that finished in this second; likewise the counts below."""
    completed: int = 0
    errors: int = 0
    correct: int = 0
    scored: int = 0
    warmup: bool = False
    """A level's warm-up was under way in the second (a warm-up finished in it, or one was in flight)."""
    timed: bool | None = None
    """The second held the level's measured work: a measured request finished in it, or measured requests were in
    flight at its end. A warm-up second that also held them counts for the level. None in files written before
    qualeval said so: `not warmup` is read instead."""
    span: float | None = None
    """The seconds the sample covers (the last one, taken as the run ends, covers part of one); None in older files."""
    server: dict[str, ServerSample] = Field(default_factory=dict)
    """Per replica URL."""
    unread: dict[str, str] = Field(default_factory=dict)
    """Per replica URL whose /metrics gave no figure this second: why (no /metrics there, timed out, ...)."""
    shard: int | None = None
    """Set by `qualeval merge`: which shard's run the second comes from."""
