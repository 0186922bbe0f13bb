"""Tool calls as records.jsonl keeps them: what an item expects (ToolAnswer), what the server returned (ToolCall),
what became of it on the wire (ToolStatus) and when its pieces arrived (CallTiming), gathered in a record's
`tools` (ToolsRecord). A call's arguments are kept as the text received: whether they parse is a finding."""

from __future__ import annotations

from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = [
    "WIRE_FAULTS",
    "CallTiming",
    "ExpectedCall",
    "ToolAnswer",
    "ToolCall",
    "ToolStatus",
    "ToolsRecord",
    "Trigger",
    "arguments_text",
    "openai_calls",
]

ToolStatus = Literal[
    "ok",
    "call_in_reasoning",
    "markup_in_content",
    "finish_reason_mismatch",
    "args_invalid_json",
    "args_schema_violation",
    "only_reasoning",
    "truncated_call",
    "delta_without_index",
]
"""What became of a tool-call response on the wire, one per response:
- `ok`: the calls (or the answer without one) came back where the API puts them;
- `call_in_reasoning`: no call in `tool_calls`, but tool-call markup inside the reasoning (the parser absorbed it);
- `markup_in_content`: no call in `tool_calls`, but tool-call markup in `content`;
- `finish_reason_mismatch`: `tool_calls` with no call, or `stop` with calls;
- `args_invalid_json`: a call's arguments are not a JSON object;
- `args_schema_violation`: they parse but break the offered tool's JSON schema (or name no offered tool);
- `only_reasoning`: no content and no call, only reasoning;
- `truncated_call`: `length` while a call was being written;
- `delta_without_index`: a streamed tool-call delta carried no integer `index`."""

WIRE_FAULTS: tuple[ToolStatus, ...] = (
    "call_in_reasoning",
    "markup_in_content",
    "finish_reason_mismatch",
    "delta_without_index",
)
"""The server lost or misplaced what the model wrote: the call the model wrote may be read back (recovered)."""

Trigger = Literal["call", "none", "any"]
"""What an item expects: the calls listed (any order, exact count); no call (BFCL irrelevance); at least one call,
whatever it is (BFCL relevance)."""


class ToolCall(BaseModel):
    """One call as a server returned it (or as it was read back from markup)."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: str = ""
    """The arguments exactly as received (a JSON text, or not: that is a finding, never repaired)."""
    id: str | None = None
    index: int | None = None
    """The streamed `index` the call's deltas carried (None: non-streamed)."""


class ExpectedCall(BaseModel):
    """One acceptable call, in BFCL's possible-answer form: each parameter's acceptable values. A parameter whose
    values include "" may be left out."""

    model_config = ConfigDict(frozen=True)

    name: str
    params: dict[str, tuple[JsonValue, ...]] = Field(default_factory=dict)


class ToolAnswer(BaseModel):
    """What an item expects of a tool-call response."""

    model_config = ConfigDict(frozen=True)

    trigger: Trigger = "call"
    calls: tuple[ExpectedCall, ...] = ()
    """For `call`: every expected call, matched in any order, one each."""


class CallTiming(BaseModel):
    """When a streamed response's tool-call pieces arrived, in seconds from when the request was sent."""

    first_delta: float | None = None
    """The first tool-call delta."""
    complete: float | None = None
    """The last argument fragment: the calls are whole."""
    first_whole: float | None = None
    """The first call's last argument fragment: the first call could be executed (`complete` for one call)."""
    fragments: int = 0
    """Tool-call deltas received (argument fragments)."""
    arrivals: tuple[float, ...] = ()
    """Each tool-call delta's arrival."""
    reasoning_tokens_before: int | None = None
    """Reasoning pieces received before the first tool-call delta, in a reasoning field or inline in content (one
    streamed piece is about one token)."""


class ToolsRecord(BaseModel):
    """A tool-call item's response: the calls, their wire status, what was read back from leaked markup, and
    the timing of the calls' deltas."""

    expected: ToolAnswer = Field(default_factory=ToolAnswer)
    """What the item expects: kept so that a rescore re-checks the calls without the dataset."""
    calls: tuple[ToolCall, ...] = ()
    """As the server returned them in `tool_calls`."""
    status: ToolStatus | None = "ok"
    """None: no response to judge (an endpoint error, a reference server's unknown question; the record's own
    status says which)."""
    detail: str = ""
    """Why the verdict or the status is what it is (the rule a call broke, the schema error)."""
    schema_valid: bool | None = None
    """Every call's arguments parse and validate against its tool's schema (None: no call)."""
    recovered: tuple[ToolCall, ...] = ()
    """Calls read back from markup the server left in content or reasoning: never scored as calls."""
    recovered_from: Literal["content", "reasoning"] | None = None
    recovered_format: str | None = None
    """The markup read (hermes, qwen3_xml, kimi_k2, harmony, deepseek, dsml, glm, minimax, mistral, llama3)."""
    recovered_correct: bool | None = None
    """Whether the recovered calls would have been right: the model right, the server wrong."""
    timing: CallTiming = Field(default_factory=CallTiming)
    delta_without_index: bool = False
    """A streamed tool-call delta carried no integer `index` (kept so that a rescore reads the same status)."""


def arguments_text(value: Any) -> str:
    """A call's arguments as text: a string as it came; an object (Ollama sends them so) as its JSON text."""
    if isinstance(value, str):
        return value
    return "" if value is None else orjson.dumps(value).decode()


def _call(entry: Any, at: int) -> ToolCall:
    if not isinstance(entry, dict):
        raise ValueError(f"tool call {at} is not an object")
    inner = entry.get("function")
    function: dict[str, Any] = inner if isinstance(inner, dict) else entry
    name = function.get("name")
    if not isinstance(name, str):
        raise ValueError(f"tool call {at} has no function name")
    index = entry.get("index")
    return ToolCall(
        name=name,
        arguments=arguments_text(function.get("arguments", function.get("parameters", ""))),
        id=entry.get("id") if isinstance(entry.get("id"), str) else None,
        index=index if type(index) is int else None,
    )


def openai_calls(value: Any) -> tuple[ToolCall, ...]:
    """A message's `tool_calls` (`[{"id", "type": "function", "function": {"name", "arguments"}}]`, or flat
    `{"name", "arguments"}` entries) as ToolCalls; None is no call. Raises ValueError naming the entry at fault."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError("tool_calls is not a list")
    return tuple(_call(entry, at) for at, entry in enumerate(value))
