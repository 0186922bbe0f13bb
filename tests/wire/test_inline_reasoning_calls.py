"""Reasoning before the first tool call counts the reasoning that came inline in content (`<think>` the splitter
takes out of it) as it counts a reasoning field's pieces: a server without a reasoning parser must not read as a
model that called without thinking."""

from __future__ import annotations

from tests.wire.test_tool_calls import calls_delta, chunk, piece, streamed


def test_inline_think_pieces_before_the_call_are_counted() -> None:
    events = [
        chunk({"content": "<think>"}),
        chunk({"content": "need the"}),
        chunk({"content": " weather"}),
        chunk({"content": "</think>"}),
        calls_delta(piece(0, '{"city": "Paris"}', name="get_weather", call_id="a")),
        chunk(finish="tool_calls"),
    ]
    resp = streamed(events)
    assert resp.completion.reasoning.strip() == "need the weather"
    assert resp.call_timing is not None and resp.call_timing.first_delta == 5.0
    # "<think>" and "</think>" carry no reasoning of their own; the two pieces between them do
    assert resp.call_timing.reasoning_tokens_before == 2


def test_a_reasoning_field_and_inline_pieces_add_up_and_later_content_does_not_count() -> None:
    events = [
        chunk({"reasoning_content": "first"}),
        chunk({"content": "<think>more</think>"}),  # one piece, holding reasoning after its marker
        calls_delta(piece(0, '{"city": "Paris"}', name="get_weather", call_id="a")),
        chunk({"content": "<think>after the call</think>"}),
        chunk(finish="tool_calls"),
    ]
    resp = streamed(events)
    assert resp.call_timing is not None and resp.call_timing.reasoning_tokens_before == 1 + 1


def test_without_inline_reasoning_the_field_count_stands() -> None:
    events = [
        chunk({"reasoning_content": "need "}),
        chunk({"reasoning_content": "it"}),
        chunk({"content": "Calling."}),
        calls_delta(piece(0, "{}", name="get_weather", call_id="a")),
        chunk(finish="tool_calls"),
    ]
    resp = streamed(events)
    assert resp.call_timing is not None and resp.call_timing.reasoning_tokens_before == 2
