"""`qualeval score` on recorded tool-call responses: judged as a live run judges them."""

from __future__ import annotations

import json
from pathlib import Path

from qualeval.run.offline import score_file


def _lines(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_recorded_calls_are_an_answer_and_leaked_markup_is_judged_apart(tmp_path: Path) -> None:
    paris = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    leaked = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    rows: list[dict[str, object]] = [
        {"id": "paris_now", "content": None, "tool_calls": [paris], "finish_reason": "tool_calls"},
        {"id": "paris_now", "content": leaked, "finish_reason": "stop"},
    ]
    first, _ = score_file("tool_weather", _lines(tmp_path / "called.jsonl", rows[:1]))
    # a call with no content is an answer, as on the live path (never `empty_content`), and it is right
    assert [(i.status, i.correct) for i in first] == [("ok", True)]
    second, _ = score_file("tool_weather", _lines(tmp_path / "leaked.jsonl", rows[1:]))
    assert [(i.status, i.correct) for i in second] == [("ok", False)]  # markup is never scored as a call


def test_the_offline_summary_and_report_carry_the_tool_figures(tmp_path: Path) -> None:
    """summary.json and report.md of `qualeval score` hold the wire statuses and the leaked markup judged apart,
    as a run's do (they were judged per line, then left out of every file written)."""
    from qualeval.run import score_lines, write_offline
    from qualeval.tasks import load_task

    leaked = '<tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "fahrenheit"}}</tool_call>'
    rows: list[dict[str, object]] = [
        {"id": "tokyo_fahrenheit", "content": leaked, "finish_reason": "stop"},
        {"id": "no_tool", "content": "Jane Austen.", "finish_reason": "stop"},
    ]
    task = load_task("tool_weather")
    path = _lines(tmp_path / "recorded.jsonl", rows)
    items, summary, scored = score_lines(task, path)
    write_offline(tmp_path / "out", task, path, items, summary, scored)
    tools = json.loads((tmp_path / "out" / "summary.json").read_text())["tasks"]["tool_weather"]["tools"]
    assert tools["statuses"] == {"markup_in_content": 1, "ok": 1}
    assert "would have been right" in (tmp_path / "out" / "report.md").read_text()
