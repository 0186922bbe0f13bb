"""What an agent's loop sends back: an assistant turn's calls and reasoning, a tool result."""

from __future__ import annotations

from qualeval.records import ClientConfig, ToolCall
from qualeval.wire import ChatRequest, Message, build_body


def test_a_plain_message_carries_only_role_and_content() -> None:
    assert Message(role="user", content="hi").as_body() == {"role": "user", "content": "hi"}


def test_an_assistant_turn_sends_back_its_calls_and_reasoning_under_the_field_set() -> None:
    call = ToolCall(name="cd", arguments='{"folder": "document"}', id="call_0")
    turn = Message(role="assistant", content="", tool_calls=(call,), reasoning_content="I should cd first.")
    result = Message(role="tool", content="None", tool_call_id="call_0")
    body = build_body(ChatRequest(model="m", messages=(turn, result)), ClientConfig(base_url="http://x/v1"))
    sent, answered = body["messages"]
    assert sent["tool_calls"] == [
        {"id": "call_0", "type": "function", "function": {"name": "cd", "arguments": '{"folder": "document"}'}}
    ]
    assert sent["reasoning_content"] == "I should cd first." and "reasoning" not in sent
    assert answered == {"role": "tool", "content": "None", "tool_call_id": "call_0"}
