"""Speed over tool-call answers and over levels asked streamed and not: a good call's first answer is its first
tool-call delta, and no speed row pools streamed and unstreamed requests without saying so."""

from __future__ import annotations

from qualeval.figures.accuracy import cell_of
from qualeval.figures.speeds import speed
from qualeval.records import CallTiming, ConstraintRecord, Extraction, Record, Score, Timing, ToolsRecord, Usage


def _record(i: int, *, level: str = "", content_at: float | None, call_at: float | None, end: float) -> Record:
    tools = ToolsRecord(timing=CallTiming(first_delta=call_at)) if call_at is not None else ToolsRecord()
    return Record(
        sample_id=f"t/{i}",
        task="t",
        level=level,
        request={"stream": True},
        reasoning="",
        content="",
        reasoning_source="none",
        status="ok",
        finish_reason="tool_calls",
        usage=Usage(completion_tokens=20),
        timing=Timing(ttft=5.0, first_content=content_at, end=end),
        attempts=1,
        constraint=ConstraintRecord(mode="off"),
        extraction=Extraction(value=None, rung="none"),
        score=Score(correct=True),
        gold="",
        meta={},
        tools=tools,
    )


def test_a_tool_calls_first_answer_is_its_first_tool_call_delta() -> None:
    calls = [_record(i, content_at=None, call_at=0.030, end=40.0) for i in range(3)]  # CallTiming is seconds
    text = _record(9, content_at=35.0, call_at=None, end=50.0)  # markup in content: a text answer
    both = _record(8, content_at=20.0, call_at=0.010, end=30.0)  # whichever came first
    assert [r.timed().first_content for r in (*calls, text, both)] == [30.0, 30.0, 30.0, 35.0, 10.0]
    shown = speed([r.timed() for r in (*calls, text)])
    assert shown.first_answer is not None and shown.first_answer.n == 4 and shown.first_answer.p50 == 30.0
    assert shown.latency is not None and shown.first_answer.p50 <= shown.latency.p50


def test_levels_asked_streamed_and_not_get_a_speed_row_each_never_one_pooled() -> None:
    from qualeval.figures.speeds import linked
    from qualeval.records import LevelReport, RunSummary, TaskReport, TaskSummary
    from qualeval.report.html import html_report
    from qualeval.report.markdown import markdown_report

    on = [_record(i, level="stream=on", content_at=None, call_at=0.017, end=30.0) for i in range(4)]
    off = [_record(i, level="stream=off", content_at=None, call_at=None, end=16.0) for i in range(4)]
    off = [r.model_copy(update={"timing": r.timing.model_copy(update={"ttft": None})}) for r in off]
    rows = [r.timed() for r in (*on, *off)]
    cell = TaskSummary(
        task="t", n=4, correct=4, accuracy=1.0, interval=(0.5, 1.0), accuracy_answered=1.0, statuses={"ok": 8}, rungs={}
    )
    levels = {
        label: LevelReport(accuracy=cell_of([True] * 4), speed=speed([r.timed() for r in at]))
        for label, at in (("stream=on", on), ("stream=off", off))
    }
    report = TaskReport(summary=cell, speed=speed(rows, throughput=False), levels=levels, linked=linked(rows, None))
    summary = RunSummary(model="m", base_url="u", simulated=False, qualeval_version="0", records=8, tasks={"t": report})
    md = markdown_report(summary)
    assert "| t @ stream=on | 4 | 5 / 5 | 17 / 17 | 30 / 30 |" in md
    assert "| t @ stream=off | 4 | – | – | 16 / 16 |" in md and "| t | 8 |" not in md
    page = html_report(summary, [*on, *off])
    assert "<td>t @ stream=off</td>" in page and '<td>t</td><td class="num">8</td>' not in page
