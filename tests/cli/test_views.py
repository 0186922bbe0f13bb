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


def test_a_tool_sample_shows_its_tools_and_tool_choice(capsys: pytest.CaptureFixture[str]) -> None:
    """`tasks show` of a tool-call item: each offered tool as one signature line (`?`: may be left out), and the
    tool_choice sent, before the gold calls."""
    from qualeval.cli.views import print_sample, print_tasks
    from qualeval.tasks import build_samples, load_task

    sample = build_samples(load_task("tool_weather"), limit=1)[0]
    print_sample(sample)
    named = sample.model_copy(update={"tool_choice": {"type": "function", "function": {"name": "get_forecast"}}})
    print_sample(named)
    out = capsys.readouterr().out
    assert "tool: get_weather(city: string, unit?: celsius|fahrenheit)\n" in out
    assert "tool: get_forecast(city: string, days: integer)\n" in out
    assert "tool_choice: auto\n" in out and "tool_choice: function get_forecast\n" in out
    assert out.index("tool_choice: auto") < out.index("gold: get_weather(city='Paris'")
    print_tasks()
    assert "categories" in capsys.readouterr().out
