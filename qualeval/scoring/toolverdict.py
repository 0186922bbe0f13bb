"""A tool-call item's verdict: the calls the server returned, judged by BFCL's rules (toolcheck), and one wire
status saying what the serving stack did with what the model wrote.

Only the calls in `tool_calls` are scored. Markup the server left in the content or the reasoning is read back
(qualeval.reasoning.find_markup) and judged apart, as what the model would have scored had the server parsed it:
never as a call. A live run, `rescore` and `score` reach the same verdict from what a record keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qualeval.reasoning import Completion, Markup, find_markup, known_finish
from qualeval.records import TRUNCATED, Extraction, Score, ToolAnswer, ToolCall, ToolsRecord, ToolStatus
from qualeval.scoring.toolcheck import CallCheck, call_arguments, check_calls
from qualeval.scoring.toolschema import schema_problem

__all__ = ["calls_text", "judge_tools", "wire_status"]


def calls_text(calls: Sequence[ToolCall]) -> str:
    """The calls as one short line (`get_weather({"city": "Paris"})`), for the record's extraction and reports."""
    return "; ".join(f"{c.name}({c.arguments})" for c in calls) if calls else "no call"


def _forced(tool_choice: str | Mapping[str, Any] | None) -> bool:
    """A named function in `tool_choice`: OpenAI's API then ends with `stop`, not `tool_calls`."""
    return isinstance(tool_choice, Mapping)


def _leak(done: Completion, calls: Sequence[ToolCall]) -> tuple[Markup | None, str | None]:
    """Markup the server left where no call belongs, and where: in the reasoning only when no call came back
    (a model may think about the call it then makes), in the content always (a call the parser lost)."""
    in_content = find_markup(done.content)
    if in_content is not None:
        return in_content, "content"
    if not calls and (in_reasoning := find_markup(done.reasoning)) is not None:
        return in_reasoning, "reasoning"
    return None, None


def _args_status(calls: Sequence[ToolCall], problems: Sequence[str | None]) -> tuple[ToolStatus, str]:
    """`problems`: each call's schema problem (schema_problem), in the calls' order."""
    for call in calls:
        if call_arguments(call) is None:
            return "args_invalid_json", f"{call.name}: arguments are not a JSON object: {call.arguments[:80]!r}"
    for problem in problems:
        if problem is not None:
            return "args_schema_violation", problem
    return "ok", ""


def _status(
    done: Completion,
    calls: Sequence[ToolCall],
    leak: tuple[Markup | None, str | None],
    finish: str | None,
    unindexed: bool,
    forced: bool,
    problems: Sequence[str | None],
) -> tuple[ToolStatus, str]:
    """The one wire status of a response, the most telling first."""
    markup, where = leak
    end = known_finish(finish) if finish else None
    if unindexed:
        return "delta_without_index", "a streamed tool-call delta carried no integer index"
    if end == "length" and (calls or (markup is not None and not markup.whole)):
        return "truncated_call", "the token budget ran out while a call was being written"
    if markup is not None and where == "reasoning":
        return "call_in_reasoning", f"{markup.format} tool-call markup inside the reasoning, no call returned"
    if markup is not None:
        return "markup_in_content", f"{markup.format} tool-call markup in the content"
    if end == "tool_calls" and not calls:
        return "finish_reason_mismatch", "finish_reason tool_calls with no call"
    if end == "stop" and calls and not forced:
        return "finish_reason_mismatch", "finish_reason stop with calls"
    if calls:
        return _args_status(calls, problems)
    if not done.content.strip() and done.reasoning.strip():
        return "only_reasoning", "reasoning only: no content and no call"
    return "ok", ""


def wire_status(
    done: Completion,
    calls: Sequence[ToolCall],
    *,
    tools: Sequence[Mapping[str, Any]],
    tool_choice: str | Mapping[str, Any] | None,
    finish: str | None,
    unindexed: bool = False,
) -> ToolStatus:
    """A response's wire status alone, as judge_tools finds it, with nothing expected of it (an agent's step)."""
    problems = [schema_problem(c, tools) for c in calls]
    return _status(done, calls, _leak(done, calls), finish, unindexed, _forced(tool_choice), problems)[0]


def _undecided(
    answer: ToolAnswer, done: Completion, calls: Sequence[ToolCall], markup: Markup | None, finish: str | None
) -> str | None:
    """Why a response with no returned call still did not answer `no call`, where none is expected; None if it did.
    Cut off before it decided (the budget ran out, as a text task cut off while thinking has no answer), or it
    wrote a call the server left as markup: the model did call, so a recovered call makes a no-call answer wrong."""
    if answer.trigger != "none" or calls:
        return None
    if markup is not None:  # a call opened, whole or not
        return f"wrote {markup.format} call markup where no call is expected"
    if done.status in TRUNCATED or (finish is not None and known_finish(finish) == "length"):
        return "cut off before it decided: no call, and no answer saying none"
    return None


def judge_tools(
    answer: ToolAnswer,
    done: Completion,
    got: ToolsRecord,
    *,
    tools: Sequence[Mapping[str, Any]],
    tool_choice: str | Mapping[str, Any] | None,
    finish: str | None,
) -> tuple[Extraction, Score, ToolsRecord]:
    """The verdict on a tool-call response. `got` holds what came back (its calls, timing and whether a delta
    lacked an index); the returned record adds the status, schema validity and what leaked markup held."""
    calls = got.calls
    leak = _leak(done, calls)
    problems = [schema_problem(c, tools) for c in calls]  # jsonschema per call, once
    status, why = _status(done, calls, leak, finish, got.delta_without_index, _forced(tool_choice), problems)
    check = check_calls(calls, answer, tools)
    markup, where = leak
    if (undecided := _undecided(answer, done, calls, markup, finish)) is not None:
        check = CallCheck(False, undecided)
    recovered: tuple[ToolCall, ...] = markup.calls if markup is not None else ()
    # where no call is expected a recovered call is a call: never one that would have been right
    right_after = answer.trigger != "none" and check_calls(recovered, answer, tools).correct
    record = got.model_copy(
        update={
            "expected": answer,
            "status": status,
            "detail": "; ".join(d for d in (why, check.detail) if d),
            "schema_valid": None if not calls else all(p is None for p in problems),
            "recovered": recovered,
            "recovered_from": where if recovered else None,
            "recovered_format": markup.format if markup is not None else None,
            "recovered_correct": right_after if recovered else None,
        }
    )
    extraction = Extraction(value=calls_text(calls), rung="calls")
    return extraction, Score(correct=check.correct, detail=check.detail), record
