"""A tool-call task's figures where a reader meets them: summary.json (typed, written only for a tool-call task),
report.md and report.html (a "Tool calls" section, the calls' timing in the speed table), with dashes where a
figure has nothing to count."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from qualeval.figures import summarize_records
from qualeval.records import CallTiming, Record, RunConfig, RunStore, RunSummary, TaskSpec, Timing
from qualeval.report.html import html_report
from qualeval.report.markdown import markdown_report
from qualeval.tasks import Task
from tests.figures.test_tool_figures import CALL, tool_record

TIMING = CallTiming(first_delta=0.25, complete=0.5, fragments=4, reasoning_tokens_before=12)


def _timed(record: Record) -> Record:
    """Timed as a streamed answer is, so that the speed table is drawn."""
    return record.model_copy(update={"timing": Timing(ttft=100.0, first_content=200.0, end=600.0), "session": "s"})


def tool_run(records: Sequence[Record], tmp_path: Path, *, levels: Sequence[str] = ("",)) -> RunSummary:
    lines = (_timed(record).model_dump_json() for record in records)
    (tmp_path / "records.jsonl").write_text("".join(line + "\n" for line in lines))
    store = RunStore(tmp_path)
    config = RunConfig(model="m", tasks=["bfcl"], base_url="http://127.0.0.1:1/v1", out=str(tmp_path))
    tasks = [Task(spec=TaskSpec(name=name, doc_to_text="{{ q }}", scorer="exact", generator="g"), path=None)
             for name in sorted({r.task for r in records})]  # fmt: skip
    return summarize_records(store, config, tasks, list(levels), simulated=True)


def _records() -> list[Record]:
    return [
        tool_record(0, calls=[CALL], schema_valid=True, timing=TIMING),
        tool_record(0, calls=[CALL], schema_valid=True, stream=None),
        tool_record(1, correct=False, status="markup_in_content", recovered=[CALL], recovered_correct=True),
        tool_record(1, calls=[CALL], schema_valid=True, stream=None),
        tool_record(2, correct=None),
    ]


def _tool_row(text: str, start: str) -> str:
    section = text.split("## Tool calls", 1)[1]
    return next(line for line in section.splitlines() if line.startswith(start))


def test_summary_json_holds_the_tool_figures_typed(tmp_path: Path) -> None:
    summary = tool_run(_records(), tmp_path)
    tools = summary.tasks["bfcl"].tools
    assert tools is not None and tools.responses == 4 and tools.unanswered == 1
    assert tools.accuracy is not None and tools.accuracy.n == summary.tasks["bfcl"].summary.n == 2
    assert tools.accuracy.accuracy == summary.tasks["bfcl"].summary.accuracy
    assert tools.parity is not None and (tools.parity.pairs, tools.parity.agree) == (2, 1)
    assert tools.timing.first_delta is not None and tools.timing.first_delta.p50 == 250.0
    back = RunSummary.model_validate_json(summary.model_dump_json())
    assert back.tasks["bfcl"].tools == tools


def test_a_task_with_no_tool_item_writes_no_tools_key(tmp_path: Path) -> None:
    summary = tool_run([tool_record(i, tools=False) for i in range(2)], tmp_path)
    assert summary.tasks["bfcl"].tools is None
    assert "tools" not in summary.model_dump(mode="json")["tasks"]["bfcl"]
    assert "Tool calls" not in markdown_report(summary) and "first tool call" not in markdown_report(summary)


def test_report_md_shows_a_tool_calls_section_and_the_call_timing(tmp_path: Path) -> None:
    text = markdown_report(tool_run(_records(), tmp_path))
    assert "## Tool calls" in text
    row = _tool_row(text, "| bfcl | 4 |")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "100.0% / 75.0% / 85.7%"  # P / R / F1: 3 called of 4 expected, none unexpected
    assert cells[4] == "–"  # no item expected no call: no share, not 0% nor 100%
    assert cells[5] == "100.0% (3/3)" and cells[7] == "1 of 1 wrong" and cells[8] == "50.0% (1/2)"
    assert cells[9] == "1"  # the endpoint error, counted apart
    assert "bfcl/test/1 (calls and verdict differ; streamed markup_in_content, not streamed ok)" in text
    assert "would have been right" in text and "bfcl/test/1" in text
    speed = next(line for line in text.splitlines() if line.startswith("| task | requests | TTFT"))
    assert "first tool call" in speed and "calls complete" in speed
    timed = next(line for line in text.splitlines() if line.startswith("| bfcl | ") and "250 / 250" in line)
    assert "500 / 500" in timed


def test_report_html_shows_the_same_section(tmp_path: Path) -> None:
    records = _records()
    html = html_report(tool_run(records, tmp_path), records)
    assert 'id="tools"' in html and "85.7%" in html and "first tool call p50 / p90" in html
    assert "calls and verdict differ" in html


def test_per_level_rows_where_the_task_ran_several(tmp_path: Path) -> None:
    records = [r.model_copy(update={"level": level}) for level in ("c=1", "c=4") for r in _records()]
    summary = tool_run(records, tmp_path, levels=("c=1", "c=4"))
    t = summary.tasks["bfcl"]
    assert t.tools is not None and {k: lv.tools is not None for k, lv in t.levels.items()} == {"c=1": True, "c=4": True}
    text = markdown_report(summary)
    assert "| bfcl @ c=1 | 4 |" in text and "| bfcl @ c=4 | 4 |" in text
    # parity names the level of each discordant item
    assert "bfcl/test/1 @ c=1" in text


def test_nothing_answered_shows_dashes_not_zero(tmp_path: Path) -> None:
    text = markdown_report(tool_run([tool_record(i, correct=None) for i in range(2)], tmp_path))
    row = _tool_row(text, "| bfcl | 0 |")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:9] == ["–", "– / – / –", "–", "–", "–", "–", "–"] and cells[9] == "2"
