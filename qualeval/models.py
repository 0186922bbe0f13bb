"""Typed values that cross module boundaries: request, response, split completion."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Completion",
    "Grade",
    "ItlSummary",
    "Message",
    "ReasoningSource",
    "Sample",
    "Status",
    "Timing",
    "Usage",
]

ReasoningSource = Literal[
    "field:reasoning",
    "field:reasoning_content",
    "field:reasoning_details",
    "inline:paired",
    "inline:close-only",
    "inline:unclosed",
    "channel:harmony",
    "none",
]
"""Where the reasoning text was found. `channel:<name>` is open to user-defined channel formats."""

Status = Literal[
    "ok",
    "reasoning_truncated",
    "answer_truncated",
    "empty_content",
    "content_filter",
    "transport_error",
]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class Sample(BaseModel):
    """One question of a task, ready to send: the rendered messages and everything needed to score it."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable across runs and endpoints: `task[/subset]/split/index-or-dataset-id`."""
    task: str
    messages: tuple[Message, ...]
    gold: str
    """The correct answer; for choice answers the label (A, B, ...) or the choice text, as the task asks."""
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    """Other accepted answers (alias match)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Values for breakdowns: subject, category, figure, validity..."""


class ChatRequest(BaseModel):
    """One chat completion request as the pipeline means it, before it is shaped for a server."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    model: str
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
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
    stream: bool = True


class Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    answer_tokens: int | None = None
    reasoning_estimated: bool = False
    """True when the server reported no reasoning count and it was estimated from the text."""
    completion_estimated: bool = False
    """True when the server reported no usage at all and completion tokens were estimated."""


class ItlSummary(BaseModel):
    """Gaps (ms) between consecutive chunks that carried text, reasoning included."""

    count: int
    mean: float
    p50: float
    p90: float
    p99: float
    max: float
    hist: dict[int, int] = Field(default_factory=dict)
    """The gaps as a sparse log-scale histogram (qualeval.histogram), for percentiles pooled over requests."""


class Timing(BaseModel):
    """Milliseconds from the moment the request was sent, on one monotonic clock."""

    first_byte: float | None = None
    ttft: float | None = None
    first_reasoning: float | None = None
    first_content: float | None = None
    end: float | None = None
    itl: ItlSummary | None = None
    decode_rate: float | None = None
    """Completion tokens per second after the first token: (completion_tokens - 1) / (end - ttft)."""
    queued: float | None = None
    """Milliseconds the request waited in the client for a free slot before it was sent: never server time."""


class Completion(BaseModel):
    """What the model said, split into its thinking and its final answer."""

    reasoning: str = ""
    content: str = ""
    reasoning_source: str = "none"
    reasoning_closed: bool = False
    status: Status = "ok"


class ChatResponse(BaseModel):
    """Everything one request produced: raw channels as received, the split, timing and usage."""

    completion: Completion
    raw_content: str | None = None
    raw_reasoning: dict[str, str] = Field(default_factory=dict)
    """Each reasoning field exactly as received, by field name (never merged)."""
    finish_reason: str | None = None
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
    """llama.cpp's `timings` object, kept verbatim when present."""
    endpoint: str | None = None
    """The base URL that answered, when a run spreads requests over several replicas (qualeval.endpoints)."""


class Grade(BaseModel):
    """A model judge's verdict on one free-form answer the rules did not accept, with its raw reply."""

    verdict: Literal["correct", "incorrect", "not_attempted", "unreadable"]
    reply: str
    model: str
    error: str | None = None
    """Why no verdict came back (the judge's endpoint failed); the verdict is then `unreadable`."""
