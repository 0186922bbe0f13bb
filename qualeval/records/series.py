"""timeseries.jsonl: one line a second of a run, as seen from both ends of the wire."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["SeriesPoint"]


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
    """The second belongs to a level's warm-up: left out of the server figures."""
    server: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per replica URL: its kind (`server`) and the figures read from its /metrics."""
    shard: int | None = None
    """Set by `qualeval merge`: which shard's run the second comes from."""
