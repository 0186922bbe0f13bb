"""The summary.json a run, a rescore and a merge each end with: the records summarized per task and level, the
serving figures beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qualeval.figures import summarize_records, write_summary_json
from qualeval.records import Manifest, RunConfig, RunStore, RunSummary
from qualeval.run.levels import levels
from qualeval.serving import serving_figures
from qualeval.tasks import Task

__all__ = ["write_summary"]


def write_summary(
    store: RunStore, config: RunConfig, tasks: list[Task], manifest: Manifest, series: Path | None = None, **own: Any
) -> RunSummary:
    """The summary of the records in `store` (the time series read from `series`, else from `store`), with the
    fields only its caller knows (`own`: when it started, how long it took, that it was rescored), written."""
    labels = [level.label for level in levels(config)]
    summary = summarize_records(store, config, tasks, labels, manifest.simulated)
    serving, server, gaps = serving_figures(store, config, manifest.shaping, series=series)
    summary = summary.model_copy(update={"serving": serving, "server": server, "server_gaps": gaps, **own})
    write_summary_json(store, summary)
    return summary
