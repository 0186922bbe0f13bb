"""The terminal views, fed their results directly: what each table puts under which heading."""

from __future__ import annotations

import pytest

from qualeval.cli.compare_view import _server_table
from qualeval.records import Comparison


def test_compare_shows_task_figures_apart_from_the_server_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    """A task's accuracy is no server metric: it gets a table of its own, as a share, not 0.433."""
    server = {
        "kv_cache_usage": [0.25, None],
        "knowledge_qa @ c=1: accuracy": [0.4333, 0.5],
        "knowledge_qa @ c=1: TTFT p99 (ms)": [31.5, 40.0],
    }
    result = Comparison.model_construct(server=server, server_notes=[], tasks=dict.fromkeys(["knowledge_qa @ c=1"]))
    _server_table(result)
    out = capsys.readouterr().out
    metrics, tasks = out.split("beside them, each task's accuracy and TTFT p99")
    assert "kv_cache_usage" in metrics and "0.250" in metrics and "knowledge_qa" not in metrics
    assert "43.3%" in tasks and "50.0%" in tasks and "31.500" in tasks and "kv_cache_usage" not in tasks
