"""The rows of a run's speed table: per task its speed over every level, or one row per level where the levels
were asked streamed and not (--stream-parity). An unstreamed response has no TTFT nor first answer (no token
arrived before the whole body), so a row pooling both ways would set the streamed requests' TTFT beside every
request's latency: a latency p50 below the TTFT p50, a figure of no population."""

from __future__ import annotations

from qualeval.figures import varied
from qualeval.records import Speed, TaskReport

__all__ = ["speed_rows"]


def speed_rows(name: str, t: TaskReport) -> list[tuple[str, Speed, TaskReport]]:
    """(row name, its speed, the report its tool-call timing cells read) per row of the task."""
    if len(t.levels) < 2 or "stream" not in varied(t.levels):
        return [(name, t.speed, t)]
    return [(f"{name} @ {level}", lv.speed, t.model_copy(update={"tools": lv.tools})) for level, lv in t.levels.items()]
