"""Typed values that cross the wire: message, request, response. A task's sample is the tasks' own
(qualeval.tasks.sample), the split completion the split's (qualeval.reasoning.completion); the persisted values
(usage, timing, grade, statuses) live in qualeval.records."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from qualeval.reasoning import Completion
from qualeval.records import CallTiming, Timing, ToolCall, Usage

__all__ = ["ChatRequest", "ChatResponse", "Message"]


class Message(BaseModel):
    """One chat message. Beyond role and content, what an agent's loop sends back: an assistant turn's calls and
    its reasoning under the field a server reads, and a tool result naming the call it answers."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    """An assistant turn's calls, sent back as OpenAI `tool_calls`."""
    tool_call_id: str | None = None
    """A `tool` message: the id of the call it answers."""
    reasoning: str | None = None
    """An assistant turn's reasoning sent back under `reasoning` (vLLM >= 0.16 reads only this)."""
    reasoning_content: str | None = None
    """An assistant turn's reasoning sent back under `reasoning_content` (llama.cpp, SGLang, DeepSeek)."""

    def as_body(self) -> dict[str, Any]:
        """The message as a request body carries it: the optional fields only when set."""
        body: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            body["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        for name in ("tool_call_id", "reasoning", "reasoning_content"):
            if (value := getattr(self, name)) is not None:
                body[name] = value
        return body


class ChatRequest(BaseModel):
    """One chat completion request as the pipeline means it, before it is shaped for a server."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    model: str
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    thinking: bool | None = None
    """True/False sends the thinking switch; None leaves the server's default."""
    reasoning_effort: str | None = None
    stop: tuple[str, ...] = ()
    """Applied to the content after separation; sent to the server only when thinking is off."""
    response_format: dict[str, Any] | None = None
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Merged last into the JSON body (structured-output parameters, server-specific switches)."""
    tools: tuple[dict[str, Any], ...] = ()
    """OpenAI function tools offered (`{"type": "function", "function": {...}}`); none: no `tools` key is sent."""
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    stream: bool = True


class ChatResponse(BaseModel):
    """Everything one request produced: raw channels as received, the split, timing and usage."""

    completion: Completion
    raw_content: str | None = None
    raw_reasoning: dict[str, str] = Field(default_factory=dict)
    """Each reasoning field exactly as received, by field name (never merged)."""
    finish_reason: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    """The calls in `tool_calls` (streamed deltas merged by `index`, arguments joined), as received."""
    call_timing: CallTiming | None = None
    """When the streamed tool-call deltas arrived (None: no delta, or not streamed)."""
    delta_without_index: bool = False
    """A streamed tool-call delta carried no integer `index`: the calls could not be merged as sent."""
    usage: Usage = Field(default_factory=Usage)
    timing: Timing = Field(default_factory=Timing)
    stream: bool = True
    attempts: int = 1
    retried: list[str] = Field(default_factory=list)
    """The fault class of every failed attempt (`429`, `503`, `connection`, `timeout`, `protocol`...)."""
    http_status: int | None = None
    error: str | None = None
    sent_at: float | None = None
    """Wall-clock time (Unix seconds) the final attempt was sent: places the request within its run."""
    server_timings: dict[str, Any] | None = None
    """llama.cpp's `timings` object, kept verbatim when present (the record types it: records.ServerTimings)."""
    endpoint: str | None = None
    """The base URL that answered, when a run spreads requests over several replicas (qualeval.serving.endpoints)."""
    unknown_question: bool = False
    """A reference server said (UNKNOWN_QUESTION) that it answered with its own refusal: the question is not in
    its answer key. The completion is read as any other; a run records it as no answer of the model's."""
