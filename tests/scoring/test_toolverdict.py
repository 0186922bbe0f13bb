"""A tool-call response's one wire status and its verdict: only the calls in `tool_calls` are scored, and what
leaked markup held is judged apart."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qualeval.reasoning import Completion
from qualeval.records import ExpectedCall, ToolAnswer, ToolCall, ToolsRecord
from qualeval.scoring.toolverdict import judge_tools

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
PARIS = ToolAnswer(calls=(ExpectedCall(name="get_weather", params={"city": ("Paris",), "unit": ("c", "")}),))
NO_CALL = ToolAnswer(trigger="none")


def _call(args: Any, name: str = "get_weather") -> ToolCall:
    return ToolCall(name=name, arguments=args if isinstance(args, str) else json.dumps(args))


def _judge(
    calls: tuple[ToolCall, ...] = (),
    *,
    content: str = "",
    reasoning: str = "",
    finish: str | None = "tool_calls",
    answer: ToolAnswer = PARIS,
    choice: Any = None,
    unindexed: bool = False,
) -> tuple[bool | None, ToolsRecord]:
    done = Completion(content=content, reasoning=reasoning)
    got = ToolsRecord(calls=calls, delta_without_index=unindexed)
    _, score, record = judge_tools(answer, done, got, tools=(WEATHER,), tool_choice=choice, finish=finish)
    return score.correct, record


def test_a_right_call_where_the_api_puts_it_is_right_and_ok() -> None:
    correct, record = _judge((_call({"city": "Paris"}),))
    assert correct is True and record.status == "ok" and record.schema_valid is True
    assert record.expected == PARIS and record.recovered == ()


def test_a_call_left_in_the_reasoning_is_read_back_but_never_scored() -> None:
    leaked = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    correct, record = _judge(reasoning=f"I should check. {leaked}", finish="stop")
    assert correct is False
    assert record.status == "call_in_reasoning" and record.recovered_from == "reasoning"
    assert record.recovered_correct is True and [c.name for c in record.recovered] == ["get_weather"]


def test_markup_in_the_content_is_its_own_status_and_a_wrong_leak_says_so() -> None:
    correct, record = _judge(content='<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>')
    assert correct is False and record.status == "markup_in_content"
    assert record.recovered_from == "content" and record.recovered_correct is False


def test_finish_reasons_that_disagree_with_the_calls() -> None:
    assert _judge(finish="tool_calls")[1].status == "finish_reason_mismatch"
    assert _judge((_call({"city": "Paris"}),), finish="stop")[1].status == "finish_reason_mismatch"
    # a named function in tool_choice ends with `stop` on OpenAI's API: no mismatch
    named = {"type": "function", "function": {"name": "get_weather"}}
    assert _judge((_call({"city": "Paris"}),), finish="stop", choice=named)[1].status == "ok"


def test_arguments_that_do_not_parse_or_break_the_schema() -> None:
    correct, record = _judge((_call('{"city": "Paris"'),))
    assert correct is False and record.status == "args_invalid_json" and record.schema_valid is False
    correct, record = _judge((_call({"city": "Paris", "unit": "kelvin"}),))
    assert record.status == "args_schema_violation" and record.schema_valid is False


@pytest.mark.parametrize(
    ("calls", "finish", "status"),
    [((), "length", "ok"), ((_call('{"city": "Pa'),), "length", "truncated_call")],
)
def test_a_budget_that_ran_out_inside_a_call(calls: tuple[ToolCall, ...], finish: str, status: str) -> None:
    assert _judge(calls, content="Let me", finish=finish)[1].status == status


def test_reasoning_alone_and_an_unindexed_delta() -> None:
    assert _judge(reasoning="thinking...", finish="stop")[1].status == "only_reasoning"
    correct, record = _judge((_call({"city": "Paris"}),), unindexed=True)
    assert record.status == "delta_without_index" and correct is True


def test_irrelevance_is_right_only_without_a_call() -> None:
    assert _judge(content="I cannot help with that.", finish="stop", answer=NO_CALL)[0] is True
    assert _judge((_call({"city": "Paris"}),), answer=NO_CALL)[0] is False


def test_prose_about_a_tag_is_no_leak() -> None:
    correct, record = _judge(content="The <tool_call> tag is how I would call it, but I will not.", finish="stop")
    assert record.status == "ok" and record.recovered == () and correct is False


@pytest.mark.parametrize(
    ("content", "reasoning", "finish"),
    [("", "Let me think", "length"), ("I cannot", "", "length"), ("", "Let me think", None)],
)
def test_a_response_cut_off_before_it_called_has_not_answered_no_call(
    content: str, reasoning: str, finish: str | None
) -> None:
    done = Completion(content=content, reasoning=reasoning, status="reasoning_truncated" if not content else "ok")
    _, score, _ = judge_tools(NO_CALL, done, ToolsRecord(), tools=(WEATHER,), tool_choice=None, finish=finish)
    assert score.correct is False and "cut off" in score.detail


@pytest.mark.parametrize(
    ("content", "reasoning", "status"),
    [
        ('<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>', "", "markup_in_content"),
        ("", '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>', "call_in_reasoning"),
        ('<tool_call>{"name": "get_weather", "arguments": "not json"}</tool_call>', "", "markup_in_content"),
    ],
)
def test_a_leaked_call_is_a_call_where_none_is_expected(content: str, reasoning: str, status: str) -> None:
    correct, record = _judge(content=content, reasoning=reasoning, finish="stop", answer=NO_CALL)
    assert correct is False and record.status == status and "markup" in record.detail
    assert record.recovered_correct is not True  # never counted as would have been right


@pytest.mark.parametrize("status", ["transport_error", "unknown_question"])
def test_a_tool_item_with_no_response_has_no_wire_status(status: str) -> None:
    from qualeval.scoring import decide
    from qualeval.tasks import build_samples, load_task

    task = load_task("tool_weather")
    sample = build_samples(task)[0]
    verdict = decide(task, sample, Completion(status=status))
    assert verdict.tools is not None and verdict.tools.expected == sample.tool_answer
    # not "ok": nothing came back to judge, and a reader of the record must not take it for a clean response
    assert verdict.tools.status is None and verdict.score.correct is False
