"""timeseries.jsonl read back: the report draws it over time, and serving sums it up and resumes its sampler from
it (qualeval.serving.timeseries writes it). The reader lives here, not beside the writer, because the report must
not depend on serving (serving's figures are computed with the report's accuracy and speed)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from qualeval.records import SeriesPoint

__all__ = ["read_series"]


def read_series(root: Path) -> Iterator[SeriesPoint]:
    """The run's seconds; a line cut short by a kill is left out, as the sampler would have finished it."""
    path = root / "timeseries.jsonl"
    if not path.exists():
        return
    with path.open("rb") as handle:
        for line in handle:
            if line.endswith(b"\n"):
                with contextlib.suppress(ValidationError):
                    yield SeriesPoint.model_validate_json(line)
