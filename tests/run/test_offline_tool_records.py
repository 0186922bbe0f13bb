"""`qualeval score` on a tool run's own records.jsonl (a record's `tools` is its ToolsRecord, the offered tools are
in its request) gives the run's figures; an offline line's tool_choice of no known form, or tools lacking an
expected call's tool, is one error naming the file and line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from qualeval.errors import InputError
from qualeval.records import RunConfig, ToolCall
from qualeval.run import driver
from qualeval.run.offline import score_file
from qualeval.wire import ChatClient, ChatRequest, ChatResponse
from tests.run.test_probe_tools import answered

LEAKED = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'


def _reply(request: ChatRequest) -> ChatResponse:
    """Right for Paris, a wrong city for Tokyo, markup in content for Oslo, prose elsewhere (and for probes)."""
    text = request.messages[-1].content if request.tools else ""
    for asked, city in (("Paris", "Paris"), ("Tokyo", "Kyoto")):
        if asked in text:
            call = ToolCall(name="get_weather", arguments=json.dumps({"city": city}), id="a")
            return answered(calls=(call,), finish="tool_calls")
    if "Oslo" in text:
        return answered(LEAKED)
    return answered("I cannot say.")


def _fake(monkeypatch: pytest.MonkeyPatch) -> None:
    async def chat(self: ChatClient, request: ChatRequest) -> ChatResponse:
        return _reply(request)

    async def listing(self: ChatClient) -> dict[str, Any]:
        return {"data": [{"id": "m"}]}

    monkeypatch.setattr(ChatClient, "chat", chat)
    monkeypatch.setattr(ChatClient, "models", listing)


def test_score_reads_a_tool_runs_records_as_the_run_judged_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake(monkeypatch)
    out = tmp_path / "run"
    config = RunConfig(base_url="http://127.0.0.1:9/v1", model="m", tasks=["tool_weather"], out=out)
    with pytest.warns(Warning):
        asyncio.run(driver.execute(config))
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    live = {r["sample_id"]: (r["score"]["correct"], r["tools"]["status"]) for r in records}
    items, summary = score_file("tool_weather", out / "records.jsonl")
    assert {i.id: i.correct for i in items} == {k: v[0] for k, v in live.items()}
    assert live["tool_weather/test/paris_now"][0] is True and live["tool_weather/test/tokyo_fahrenheit"][0] is False
    assert summary.accuracy == pytest.approx(sum(v[0] for v in live.values()) / len(live))
    # a record's calls are an answer (the live path's split says so): not empty_content, and every item here
    # answered (a call, markup or prose), so accuracy over answered items is the accuracy
    status = {i.id: i.status for i in items}
    assert status["tool_weather/test/paris_now"] == status["tool_weather/test/tokyo_fahrenheit"] == "ok"
    assert summary.accuracy_answered == pytest.approx(summary.accuracy)


def _line(tmp: Path, **fields: Any) -> Path:
    call = {"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    path = tmp / "lines.jsonl"
    path.write_text(json.dumps({"id": "paris_now", "content": None, "tool_calls": [call], **fields}) + "\n")
    return path


def test_a_lines_tool_choice_of_no_known_form_is_refused_with_its_line(tmp_path: Path) -> None:
    path = _line(tmp_path, tool_choice="sometimes")
    with pytest.raises(InputError, match=rf"^{path}:1: field 'tool_choice': 'sometimes' is not auto, required, none"):
        score_file("tool_weather", path)


def test_a_lines_tools_without_the_expected_tool_names_the_line(tmp_path: Path) -> None:
    other = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}
    path = _line(tmp_path, tools=[other])
    with pytest.raises(InputError) as caught:
        score_file("tool_weather", path)
    assert str(caught.value) == (
        f"{path}:1: field 'tools': expected call get_weather: no tool named get_weather is offered (the line offers "
        "get_time)"
    )


def test_a_records_file_with_an_id_twice_points_to_rescore(tmp_path: Path) -> None:
    path = _line(tmp_path)
    path.write_text(path.read_text() * 2)  # as a --stream-parity run's records hold each id once per side
    with pytest.raises(InputError, match=r"lines.jsonl:2: id 'paris_now' .*appears twice.*qualeval rescore RUN"):
        score_file("tool_weather", path)


def test_a_call_line_without_a_content_key_is_scored_on_its_calls(tmp_path: Path) -> None:
    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps({"id": "paris_now", "tool_calls": [call], "finish_reason": "tool_calls"}) + "\n")
    items, _ = score_file("tool_weather", path)
    assert [(i.id, i.correct, i.status) for i in items] == [("tool_weather/test/paris_now", True, "ok")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "paris_now", "tool_calls": "get_weather"}) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl:1: field 'tool_calls'"):  # the fault itself, not "no content"
        score_file("tool_weather", bad)
