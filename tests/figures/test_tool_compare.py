"""A tool-call task's figures in compare and board: A's and B's side by side over the paired items (the wire
statuses counted B - A), each run's parity from its own summary, the endpoint errors left out, and a task with no
tool call given none."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qualeval.figures.board import board_runs
from qualeval.figures.compare import compare_runs
from qualeval.records import Record
from qualeval.report.board_pages import board_markdown
from qualeval.report.board_web import board_html
from qualeval.report.html import compare_html
from qualeval.report.tool_sections import compare_tool_rows
from tests.figures.test_tool_figures import CALL, tool_record
from tests.figures.test_tool_report import tool_run


def tool_dir(root: Path, records: Sequence[Record], config: dict[str, Any]) -> Path:
    """A run directory: manifest, records and the summary.json a run writes of them."""
    root.mkdir(parents=True)
    run = {"tasks": ["bfcl"], "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": str(root), **config}
    tasks = {"bfcl": {"spec": {"name": "bfcl", "doc_to_text": "{{ q }}", "scorer": "exact", "generator": "g"}}}
    manifest = {"fingerprint": "x", "config": run, "pinned": {"constraint": "off", "thinking_switch": "none"}}
    (root / "manifest.json").write_text(json.dumps({**manifest, "tasks": tasks}))
    summary = tool_run(records, root)  # writes records.jsonl
    (root / "summary.json").write_text(summary.model_dump_json())
    return root


def _clean() -> list[Record]:
    return [tool_record(i, calls=[CALL], schema_valid=True) for i in range(4)] + [tool_record(4, trigger="none")]


def _leaky() -> list[Record]:
    leaked = {"correct": False, "status": "markup_in_content", "recovered": [CALL], "recovered_correct": True}
    return [
        tool_record(0, calls=[CALL], schema_valid=True),
        tool_record(1, **leaked),
        tool_record(2, **leaked),
        tool_record(3, correct=None),  # an endpoint error: the pair is left out
        tool_record(4, trigger="none", calls=[CALL], schema_valid=False, status="args_schema_violation", correct=False),
        # item 0 sent again, not streamed: B's parity (compare reads the first response of each item)
        tool_record(0, calls=[CALL], schema_valid=True, stream=None),
    ]


def test_compare_sets_the_tool_figures_side_by_side(tmp_path: Path) -> None:
    a = tool_dir(tmp_path / "a", _clean(), {"temperature": 0})
    b = tool_dir(tmp_path / "b", _leaky(), {"temperature": 0.5})
    t = compare_runs(a, b).tasks["bfcl"]
    assert t.pairs == 4 and t.endpoint_errors == (0, 1) and t.tools is not None
    sa, sb = t.tools.a, t.tools.b
    assert sa.responses == sb.responses == 4 and sa.unanswered == sb.unanswered == 0
    assert sa.trigger.f1 == 1.0 and sb.trigger.recall == 1 / 3 and sb.trigger.no_call_agreement == 0.0
    assert sa.statuses == {"ok": 4} and sb.statuses == {"args_schema_violation": 1, "markup_in_content": 2, "ok": 1}
    assert sb.recovery.would_be_right == 2 and sb.schema_valid.share == 0.5
    # parity is each run's own, from its summary: A sent nothing both ways
    assert sa.parity is None and sb.parity is not None and (sb.parity.pairs, sb.parity.agree) == (1, 1)
    rows = {row[0]: row[1:] for row in compare_tool_rows(t.tools)}
    assert rows["wire status markup_in_content"] == ("0", "2", "+2")
    assert rows["wire status ok"] == ("4", "1", "-3")
    assert rows["stream parity (each run's own)"] == ("–", "100.0% (1/1)", "–")  # no difference from nothing
    assert rows["tool schema valid (responses with a call)"] == ("100.0%", "50.0%", "-50.0 points")
    html = compare_html(compare_runs(a, b))
    assert "wire status markup_in_content" in html and "tool trigger F1" in html


def test_compare_and_board_give_no_tool_figures_to_a_task_without_tool_calls(tmp_path: Path) -> None:
    a = tool_dir(tmp_path / "a", [tool_record(i, tools=False) for i in range(3)], {"temperature": 0})
    b = tool_dir(tmp_path / "b", [tool_record(i, tools=False) for i in range(3)], {"temperature": 1})
    assert compare_runs(a, b).tasks["bfcl"].tools is None
    assert "tools" not in compare_runs(a, b).model_dump(mode="json")["tasks"]["bfcl"]
    board = board_runs([a, b])
    assert all(c.tools is None for c in board.tasks["bfcl"].configs.values())
    assert "tool calls" not in board_markdown(board)


def test_board_shows_each_configs_tool_figures(tmp_path: Path) -> None:
    a = tool_dir(tmp_path / "a", _clean(), {"temperature": 0})
    b = tool_dir(tmp_path / "b", _leaky(), {"temperature": 0.5})
    board = board_runs([a, b], labels=["clean", "leaky"])
    configs = board.tasks["bfcl"].configs
    clean, leaky = configs["clean"].tools, configs["leaky"].tools
    assert clean is not None and leaky is not None
    # board reads each config's own records: B's endpoint error is counted apart, in no figure
    assert leaky.unanswered == 1 and leaky.responses == 4 and leaky.statuses["markup_in_content"] == 2
    assert leaky.parity is not None and leaky.parity.pairs == 1 and clean.parity is None
    text = board_markdown(board)
    assert "### bfcl: tool calls" in text
    row = next(line for line in text.splitlines() if line.startswith("| leaky | 4 |"))
    assert "markup_in_content 2" in row and "2 of 3" in row and row.rstrip(" |").endswith("1")
    assert "tool calls" in board_html(board) and "markup_in_content 2" in board_html(board)


def test_compare_in_the_terminal_shows_the_tool_rows(tmp_path: Path) -> None:
    from tests.figures.test_compare import compare_cli

    a = tool_dir(tmp_path / "a", _clean(), {"temperature": 0})
    b = tool_dir(tmp_path / "b", _leaky(), {"temperature": 0.5})
    done = compare_cli(a, b, out=tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    assert "wire status markup_in_content" in done.stdout and "tool trigger F1" in done.stdout
