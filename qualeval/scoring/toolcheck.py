"""A response's tool calls against what the item expects, by BFCL's rules (its AST checker for Python functions,
as it reads OpenAI-style function calls).

- `call` (the calls listed): every call's arguments a JSON object; exactly as many calls as expected (`multiple`
  wants exactly one); each expected call matched by a different call, in any order (every matching is tried, so a
  call that would fit two expected ones never blocks the right pairing); each pair judged by tasks.toolvalues.
- `none` (BFCL irrelevance): right when no call comes back. As BFCL decodes calls, a response whose calls do not
  all have a JSON object for arguments has no call (BFCL's decoder fails on it, and a failed decode is no call).
- `any` (BFCL relevance): right with at least one call, whatever it is, read the same way.
JSON Schema validity of the arguments is another question (toolschema.schema_problem), reported apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualeval.errors import InputError
from qualeval.records import ExpectedCall, ToolAnswer, ToolCall
from qualeval.tasks import call_problem, openai_name

__all__ = ["CallCheck", "call_arguments", "check_calls", "tool_functions"]


@dataclass(frozen=True, slots=True)
class CallCheck:
    """The verdict on a response's calls: `detail` names the rule broken ("" when right)."""

    correct: bool
    detail: str


def call_arguments(call: ToolCall) -> dict[str, Any] | None:
    """A call's arguments as a JSON object; None when they are not one (not JSON, or JSON of another kind)."""
    try:
        value = json.loads(call.arguments)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def tool_functions(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The offered tools' `function` entries by name (OpenAI tool dicts, or bare function entries)."""
    functions: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        function = tool.get("function", tool)
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            functions[function["name"]] = function
    return functions


def _plural(count: int, one: str) -> str:
    return f"{count} {one}" if count == 1 else f"{count} {one}s"


def _matching(fits: list[list[bool]], calls: int) -> list[int | None]:
    """A maximum matching of expected calls (rows) to calls (columns), by augmenting paths: per expected call, the
    call it is matched with, or None."""
    owner: list[int | None] = [None] * calls

    def place(row: int, seen: set[int]) -> bool:
        for col in range(calls):
            if fits[row][col] and col not in seen:
                seen.add(col)
                holder = owner[col]
                if holder is None or place(holder, seen):
                    owner[col] = row
                    return True
        return False

    for row in range(len(fits)):
        place(row, set())
    matched: list[int | None] = [None] * len(fits)
    for col, holder in enumerate(owner):
        if holder is not None:
            matched[holder] = col
    return matched


def _unmatched_detail(
    expected: ExpectedCall, name: str, problems: list[str | None], calls: Sequence[ToolCall], total: int
) -> str:
    """Why an expected call found no call: the problem of the first call to its function, or that none is."""
    for call, problem in zip(calls, problems, strict=True):
        if call.name == name and problem is not None:
            return problem if total == 1 else f"no call matches expected {name} ({problem})"
    if total == 1:
        return next(p for p in problems if p is not None)
    if any(p is None for p in problems):
        return f"the calls that fit expected {name} are each needed by another expected call"
    return f"no call to {name}, which is expected"


def _check_expected(calls: Sequence[ToolCall], answer: ToolAnswer, tools: Sequence[Mapping[str, Any]]) -> CallCheck:
    functions = tool_functions(tools)
    if len(calls) != len(answer.calls):
        expected = len(answer.calls)
        verb = "is" if expected == 1 else "are"
        return CallCheck(False, f"{_plural(len(calls), 'call')} where {expected} {verb} expected")
    arguments = [call_arguments(call) for call in calls]
    for call, args in zip(calls, arguments, strict=True):
        if args is None:
            return CallCheck(False, f"{call.name}: the arguments are not a JSON object")
    problems: list[list[str | None]] = []
    for expected_call in answer.calls:
        name = openai_name(expected_call.name)
        if name not in functions:
            raise InputError(f"expected call {expected_call.name}: no tool named {name} is offered")
        problems.append(
            [
                call_problem(c.name, a or {}, expected_call, name, functions[name])
                for c, a in zip(calls, arguments, strict=True)
            ]
        )
    matched = _matching([[p is None for p in row] for row in problems], len(calls))
    for expected_call, row, col in zip(answer.calls, problems, matched, strict=True):
        if col is None:
            name = openai_name(expected_call.name)
            return CallCheck(False, _unmatched_detail(expected_call, name, row, calls, len(calls)))
    return CallCheck(True, "")


def check_calls(calls: Sequence[ToolCall], answer: ToolAnswer, tools: Sequence[Mapping[str, Any]]) -> CallCheck:
    """Whether a response's calls are right for an item, by BFCL's rules; `tools` are the OpenAI tools offered,
    `answer` names BFCL's functions (dots and all: compared as the tools carry them). An expected call naming no
    offered tool is bad input (InputError)."""
    if answer.trigger == "call":
        return _check_expected(calls, answer, tools)
    decoded = bool(calls) and all(call_arguments(call) is not None for call in calls)
    if answer.trigger == "none":
        return (
            CallCheck(True, "")
            if not decoded
            else CallCheck(False, f"{_plural(len(calls), 'call')} where none is expected")
        )
    if decoded:
        return CallCheck(True, "")
    if calls:
        return CallCheck(False, "a call is expected, and the calls' arguments are not all JSON objects")
    return CallCheck(False, "no call where one is expected")
