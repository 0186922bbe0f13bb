"""What the reference server and its wire formats share: the request context, stream steps, SSE framing,
and the hooks of a flavour that reads requests and answers other routes its own way (llama.cpp)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from qualeval.sim.answerkey import AnswerKey
from qualeval.sim.behaviour import Behaviour
from qualeval.sim.episodekey import EpisodeKey

__all__ = ["DONE", "ChatCall", "Ctx", "Planned", "RequestRejected", "ServerHooks", "Step", "sse"]

Step = tuple[int, bytes | None]
"""(tokens, data): the server spends `tokens` decode steps, then sends `data` (None: nothing is sent)."""

DONE: Step = (0, b"data: [DONE]\n\n")


@dataclass(frozen=True, slots=True)
class Ctx:
    id: str
    created: int
    model: str
    prompt_tokens: int
    include_usage: bool
    cached_tokens: int = 0
    """Prompt tokens reused from an earlier request (llama.cpp's prompt cache)."""
    prompt_ms: float = 0.0
    """Time the server spent on the prompt, for servers that report it (llama.cpp's `timings`)."""
    decode_ms: float = 0.0
    """Time per generated token, likewise."""


class RequestRejected(Exception):
    """The server refuses the request with this status; `kind` and `extra` fill flavour-specific error bodies,
    `headers` go on the response (a 429's Retry-After)."""

    def __init__(
        self,
        status: int,
        message: str,
        kind: str | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.extra = extra or {}
        self.headers = headers or {}


def sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


@dataclass(frozen=True, slots=True)
class ChatCall:
    """One chat request, as a flavour with hooks sees it: the body and everything the server knows."""

    body: dict[str, Any]
    behaviour: Behaviour
    key: AnswerKey | None
    directives: dict[str, str]
    variant: object
    model: str
    n_ctx: int
    thinking_opened: bool
    ignore_constraints: bool
    overflow: bool
    """The `context` fault: answer as if the prompt were too long."""
    request_id: str
    created: int
    latency: Callable[[int], tuple[float, float]]
    """Prompt tokens -> (seconds to the first token, seconds per further token)."""
    state: dict[str, Any] = field(default_factory=dict)
    """The server's memory across requests (llama.cpp's prompt cache)."""
    faults: dict[str, float] = field(default_factory=dict)
    """The configured fault rates (the tool faults are drawn per item by the flavour's plan)."""
    tool_format: str | None = None
    """The markup the model writes calls in, where a tool fault leaks them (SimConfig.tool_format)."""
    episodes: EpisodeKey | None = None
    """The keyed multi-turn episodes (ServerState.episodes)."""
    calls_at_once: bool = False
    """An episode's turn answered with all its calls at once (SimConfig.calls_at_once)."""


@dataclass(frozen=True, slots=True)
class Planned:
    steps: list[Step]
    whole: bytes
    ttft_s: float
    decode_s: float
    tokens: int
    unknown: bool = False
    """The question was not in the answer key (qualeval.sim.behaviour.PlannedReply.unknown)."""


@dataclass(frozen=True, slots=True)
class ServerHooks:
    """A flavour that handles requests itself instead of through the generic OpenAI path."""

    route: Callable[[str, str, bytes, Any], tuple[int, bytes] | None]
    """(method, path, body, SimConfig) -> (status, JSON body) for every route but chat completions; None
    leaves the route to the server."""
    error: Callable[[int, str, str | None, dict[str, Any]], bytes]
    """(status, message, kind, extra fields) -> the JSON error body."""
    parse: Callable[[bytes], dict[str, Any]]
    """The request body -> the parsed chat request; raises RequestRejected."""
    plan: Callable[[ChatCall], Planned]
    """The whole answer to a chat request, in both shapes; raises RequestRejected."""
