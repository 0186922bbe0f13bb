"""A real llama-server's tool-call responses (tests/data/tool_captures, README there), read by the real stream
and whole-body readers: SmolLM2-135M under llama.cpp's Qwen3.5 template (XML calls, thinking opened by the
template, reasoning budget 48) and under Qwen2.5's Hermes `<tool_call>` template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qualeval.reasoning import resolve_formats
from qualeval.wire.models import ChatRequest, ChatResponse, Message
from qualeval.wire.response import build_response
from qualeval.wire.stream import StreamState, read_whole

CAPTURES = Path(__file__).parents[1] / "data" / "tool_captures"


def request_of(body: dict[str, Any]) -> ChatRequest:
    return ChatRequest(
        model=body["model"],
        messages=tuple(Message(**m) for m in body["messages"]),
        max_tokens=body["max_tokens"],
        temperature=body["temperature"],
        seed=body["seed"],
        tools=tuple(body["tools"]),
        tool_choice=body["tool_choice"],
        stream=bool(body.get("stream")),
    )


def replay(name: str) -> ChatResponse:
    """The capture read as the client reads it: each network read fed at its recorded arrival (seconds from the
    send, which is 0 here)."""
    meta = json.loads((CAPTURES / f"{name}.json").read_text())
    request = request_of(meta["request"])
    if "sse" in meta:
        raw = (CAPTURES / meta["sse"]).read_bytes()
        state = StreamState()
        for read in meta["reads"]:
            state.feed(raw[read["start"] : read["end"]], read["t"])
        reads = meta["reads"]
        got = state.finish_attempt(0.0, reads[0]["t"], reads[-1]["t"])
    else:
        got = read_whole(json.dumps(meta["body"]).encode(), meta["content_type"], 0.0, 0.0, 1.0)
    return build_response(request, got, resolve_formats(None), opened=False, attempts=1, queued=None)


def test_qwen35_required_streamed_call_merged_from_its_fragments() -> None:
    resp = replay("qwen35__required_stream")
    assert resp.finish_reason == "tool_calls"
    assert len(resp.tool_calls) == 1
    call = resp.tool_calls[0]
    assert (call.name, call.index) == ("get_weather", 0)
    assert call.id
    # fourteen deltas: the first carries id, name and "{", the rest argument fragments
    assert call.arguments == '{"city":"Paris is a city that is quite...interesting."}'
    assert json.loads(call.arguments) == {"city": "Paris is a city that is quite...interesting."}
    timing = resp.call_timing
    assert timing is not None and timing.fragments == 14
    assert list(timing.arrivals) == sorted(timing.arrivals)
    assert timing.first_delta == timing.arrivals[0] and timing.complete == timing.arrivals[-1]
    assert resp.timing.ttft is not None and resp.timing.ttft <= timing.first_delta * 1000.0
    # the server's reasoning parser kept the template's XML markup in reasoning_content, before the call
    assert "<function=" in resp.raw_reasoning["reasoning_content"]
    assert timing.reasoning_tokens_before is not None and timing.reasoning_tokens_before > 0
    assert not resp.delta_without_index
    assert resp.completion.status == "ok"


def test_qwen35_required_streamed_equals_non_streamed() -> None:
    streamed, whole = replay("qwen35__required_stream"), replay("qwen35__required_whole")
    assert whole.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in whole.tool_calls] == [(c.name, c.arguments) for c in streamed.tool_calls]
    assert whole.tool_calls[0].index is None and whole.call_timing is None
    assert whole.raw_content == streamed.raw_content  # the leaked "</tool_call>" and prose, both ways


def test_qwen35_auto_only_reasoning_and_no_call() -> None:
    for name in ("qwen35__auto_stream", "qwen35__auto_whole"):
        resp = replay(name)
        assert resp.finish_reason == "stop"
        assert resp.tool_calls == () and resp.call_timing is None
        assert "<function=" in resp.raw_reasoning["reasoning_content"]  # the markup stayed in the reasoning
        assert resp.completion.status == "empty_content"


def test_qwen25_hermes_required_not_honoured() -> None:
    for name, finish, status in (
        ("qwen25__required_stream", "length", "answer_truncated"),
        ("qwen25__required_whole", "length", "answer_truncated"),
        ("qwen25__auto_stream", "stop", "ok"),
        ("qwen25__auto_whole", "stop", "ok"),
    ):
        resp = replay(name)
        assert (resp.finish_reason, resp.completion.status) == (finish, status), name
        assert resp.tool_calls == () and resp.call_timing is None, name
        assert resp.completion.content.startswith("The weather in Paris"), name
