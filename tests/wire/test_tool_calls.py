"""Tool calls on the wire: sent when asked, read back from streamed deltas and whole bodies, timed, and given a
completion status that treats a call as an answer. Constructed streams here; real llama-server captures in
test_tool_captures.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson

from qualeval.reasoning import resolve_formats, split_completion
from qualeval.reasoning.split import completion_status
from qualeval.records import ClientConfig, ToolCall
from qualeval.wire.client import ChatClient, build_body
from qualeval.wire.models import ChatRequest, ChatResponse
from qualeval.wire.response import build_response
from qualeval.wire.stream import StreamState, read_whole
from tests.conftest import ask

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


def calls_delta(*items: dict[str, Any]) -> dict[str, Any]:
    return chunk({"tool_calls": list(items)})


def piece(index: int | None, args: str = "", name: str | None = None, call_id: str | None = None) -> dict:
    item: dict[str, Any] = {"function": {"arguments": args}}
    if index is not None:
        item["index"] = index
    if name is not None:
        item["function"]["name"] = name
    if call_id is not None:
        item["id"] = call_id
    return item


def streamed(events: list[dict[str, Any]], request: ChatRequest | None = None) -> ChatResponse:
    """Feed one event per read, the k-th read arriving at second k+1 after the send at 0."""
    state = StreamState()
    for k, event in enumerate(events):
        state.feed(b"data: " + orjson.dumps(event) + b"\n\n", float(k + 1))
    state.feed(b"data: [DONE]\n\n", float(len(events) + 1))
    got = state.finish_attempt(0.0, 1.0, float(len(events) + 1))
    req = request or ask("weather?", tools=(WEATHER,))
    return build_response(req, got, resolve_formats(None), opened=False, attempts=1, queued=None)


def whole(message: dict[str, Any], finish: str) -> ChatResponse:
    body = orjson.dumps({"choices": [{"index": 0, "message": message, "finish_reason": finish}]})
    got = read_whole(body, "application/json", 0.0, 0.5, 1.0)
    req = ask("weather?", tools=(WEATHER,), stream=False)
    return build_response(req, got, resolve_formats(None), opened=False, attempts=1, queued=None)


def test_build_body_sends_the_tool_keys_only_when_set() -> None:
    config = ClientConfig(api_key=None)
    plain = build_body(ask("hi"), config)
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & plain.keys()
    body = build_body(ask("hi", tools=(WEATHER,), tool_choice="required", parallel_tool_calls=False), config)
    assert body["tools"] == [WEATHER]
    assert body["tool_choice"] == "required"
    assert body["parallel_tool_calls"] is False
    named = {"type": "function", "function": {"name": "get_weather"}}
    only_choice = build_body(ask("hi", tool_choice=named), config)
    assert only_choice["tool_choice"] == named
    assert not {"tools", "parallel_tool_calls"} & only_choice.keys()


def test_interleaved_calls_merge_by_index_in_arrival_order() -> None:
    events = [
        chunk({"reasoning_content": "need "}),
        chunk({"reasoning_content": "two calls"}),
        calls_delta(piece(0, "", name="get_weather", call_id="a")),
        calls_delta(piece(1, '{"ci', name="get_time", call_id="b")),
        calls_delta(piece(0, '{"city": ')),
        calls_delta(piece(1, 'ty": "Oslo"}'), piece(0, '"Paris"}')),  # two calls' fragments in one chunk
        chunk(finish="tool_calls"),
    ]
    resp = streamed(events)
    assert resp.tool_calls == (
        ToolCall(name="get_weather", arguments='{"city": "Paris"}', id="a", index=0),
        ToolCall(name="get_time", arguments='{"city": "Oslo"}', id="b", index=1),
    )
    assert not resp.delta_without_index
    timing = resp.call_timing
    assert timing is not None
    assert timing.arrivals == (3.0, 4.0, 5.0, 6.0, 6.0)  # each tool-call delta's arrival, from the send
    assert (timing.first_delta, timing.complete, timing.fragments) == (3.0, 6.0, 5)
    assert timing.first_whole == 6.0  # interleaved: neither call is whole before the last chunk
    assert timing.reasoning_tokens_before == 2
    assert resp.completion.status == "ok"  # calls with no content: an answer, not empty_content
    assert resp.completion.reasoning == "need two calls"


def test_tool_call_deltas_count_as_output_for_ttft_and_gaps() -> None:
    events = [
        calls_delta(piece(0, "{", name="get_weather", call_id="a")),
        calls_delta(piece(0, "}")),
        chunk(finish="tool_calls"),
    ]
    resp = streamed(events)
    assert resp.timing.ttft == 1000.0  # the first read, at 1 s: the first call delta
    assert resp.timing.itl is not None and resp.timing.itl.count == 1


def test_a_delta_without_index_is_flagged_and_never_merged_into_another_named_call() -> None:
    events = [
        calls_delta(piece(None, "", name="get_weather", call_id="a")),
        calls_delta(piece(None, '{"city": "Paris"}')),
        calls_delta(piece(None, "", name="get_time", call_id="b")),
        calls_delta(piece(None, '{"city": "Oslo"}')),
        calls_delta(piece("0", "")),  # type: ignore[arg-type] # a string index is not an integer one
        chunk(finish="tool_calls"),
    ]
    resp = streamed(events)
    assert resp.delta_without_index
    assert [(c.name, c.arguments, c.id, c.index) for c in resp.tool_calls] == [
        ("get_weather", '{"city": "Paris"}', "a", None),
        ("get_time", '{"city": "Oslo"}', "b", None),
    ]
    assert resp.call_timing is not None and resp.call_timing.fragments == 5


def test_finish_tool_calls_with_an_empty_list_is_no_call() -> None:
    resp = streamed([chunk({"content": "", "tool_calls": []}), chunk(finish="tool_calls")])
    assert resp.tool_calls == ()
    assert resp.call_timing is None
    assert resp.finish_reason == "tool_calls"
    assert resp.completion.status == "empty_content"  # nothing said and nothing called


def test_length_inside_a_call_keeps_the_fragment_and_stays_truncated() -> None:
    events = [
        chunk({"reasoning_content": "think"}),
        calls_delta(piece(0, '{"city": "Pa', name="get_weather", call_id="a")),
        chunk(finish="length"),
    ]
    resp = streamed(events)
    assert resp.tool_calls == (ToolCall(name="get_weather", arguments='{"city": "Pa', id="a", index=0),)
    assert resp.completion.status == "answer_truncated"
    assert resp.completion.reasoning_closed  # the thinking had ended: the call was being written
    assert resp.call_timing is not None
    assert resp.call_timing.first_delta == 2.0
    assert resp.call_timing.complete is None  # the arguments never completed


def test_whole_body_calls_with_object_arguments_and_null_content() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"type": "function", "function": {"name": "get_time", "arguments": {"city": "Oslo"}}},  # Ollama's form
        ],
    }
    resp = whole(message, "tool_calls")
    assert resp.tool_calls == (
        ToolCall(name="get_weather", arguments='{"city":"Paris"}', id="c1"),
        ToolCall(name="get_time", arguments='{"city":"Oslo"}'),
    )
    assert resp.completion.status == "ok"
    assert resp.call_timing is None


def test_whole_body_legacy_function_call() -> None:
    message = {"role": "assistant", "content": "", "function_call": {"name": "get_weather", "arguments": "{}"}}
    resp = whole(message, "function_call")
    assert resp.tool_calls == (ToolCall(name="get_weather", arguments="{}"),)
    assert resp.completion.status == "ok"


def test_streamed_legacy_function_call_is_read_as_the_call_at_index_0() -> None:
    # OpenAI's stream for `functions=` (before `tool_calls`): the name first, then argument fragments, no index/id
    events = [
        chunk({"reasoning_content": "weather"}),
        chunk({"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": ""}}),
        chunk({"function_call": {"arguments": '{"city": '}}),
        chunk({"function_call": {"arguments": '"Paris"}'}}),
        chunk({"content": None, "function_call": None, "tool_calls": None}),  # SGLang-style nulls: nothing
        chunk(finish="function_call"),
    ]
    resp = streamed(events)
    assert resp.tool_calls == (ToolCall(name="get_weather", arguments='{"city": "Paris"}', index=0),)
    assert not resp.delta_without_index
    assert resp.completion.status == "ok"
    timing = resp.call_timing
    assert timing is not None
    assert (timing.first_delta, timing.complete, timing.fragments) == (2.0, 4.0, 3)
    assert timing.first_whole == 4.0  # one call: whole when the calls are
    assert timing.reasoning_tokens_before == 1
    assert resp.timing.ttft == 1000.0 and resp.timing.itl is not None and resp.timing.itl.count == 3


def test_status_with_calls() -> None:
    assert completion_status("", "tool_calls", calls=True) == "ok"
    assert completion_status("", "stop", calls=True) == "ok"
    assert completion_status("", "length", calls=True) == "answer_truncated"
    assert completion_status("", "tool_calls") == "empty_content"
    off = split_completion(content="", field=None, finish_reason="tool_calls", formats=(), thinking=False, calls=True)
    assert off.completion.status == "ok"


class _Body(httpx.AsyncByteStream):
    def __init__(self, data: bytes) -> None:
        self.data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data


def test_a_retried_request_moves_the_call_times_to_the_first_send() -> None:
    sse = b"".join(
        b"data: " + orjson.dumps(e) + b"\n\n"
        for e in (calls_delta(piece(0, "{}", name="get_weather", call_id="a")), chunk(finish="tool_calls"))
    )
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(orjson.loads(request.content))
        if len(seen) == 1:
            return httpx.Response(503, json={"error": {"message": "busy"}})
        done = _Body(sse + b"data: [DONE]\n\n")
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=done)

    async def go() -> ChatResponse:
        config = ClientConfig(base_url="http://sim.test/v1", api_key=None, backoff_base=0.01)
        async with ChatClient(config, transport=httpx.MockTransport(handler)) as client:
            return await client.chat(ask("weather?", tools=(WEATHER,), tool_choice="auto"))

    resp = asyncio.run(go())
    assert seen[0]["tools"] == [WEATHER] and seen[0]["tool_choice"] == "auto"
    assert resp.attempts == 2 and resp.timing.retrying is not None
    timing = resp.call_timing
    assert timing is not None and timing.first_delta is not None and resp.timing.ttft is not None
    assert abs(timing.first_delta * 1000.0 - resp.timing.ttft) < 1e-6  # on the same clock as TTFT
    assert timing.first_delta * 1000.0 >= resp.timing.retrying


def test_a_name_and_id_given_after_the_first_fragment_are_kept() -> None:
    events = [
        calls_delta(piece(0, '{"city": ')),
        calls_delta(piece(0, '"Paris"}', name="get_weather", call_id="a")),
        calls_delta(piece(0, "", name="other")),  # a later name does not rename the call
        chunk(finish="tool_calls"),
    ]
    resp = streamed(events)
    assert resp.tool_calls == (ToolCall(name="get_weather", arguments='{"city": "Paris"}', id="a", index=0),)


def test_float_and_bool_indexes_are_not_integer_indexes() -> None:
    for odd in (0.0, True):
        events = [
            calls_delta(piece(0, "{", name="get_weather", call_id="a")),
            calls_delta({"index": odd, "function": {"arguments": "}"}}),
            chunk(finish="tool_calls"),
        ]
        resp = streamed(events)
        assert resp.delta_without_index, odd
        assert resp.tool_calls[0].arguments == "{}", odd  # a bare fragment goes to the call in progress


def test_the_first_call_is_whole_at_its_own_last_fragment_before_the_next_call_streams() -> None:
    events = [
        calls_delta(piece(0, '{"city": ', name="get_weather", call_id="a")),
        calls_delta(piece(0, '"Paris"}')),
        calls_delta(piece(1, '{"city": ', name="get_time", call_id="b")),
        calls_delta(piece(1, '"Oslo"}')),
        chunk(finish="tool_calls"),
    ]
    timing = streamed(events).call_timing
    assert timing is not None
    assert (timing.first_whole, timing.complete) == (2.0, 4.0)
