"""The chat client: the only place that opens sockets to an endpoint.

The wire is `qualeval.wire.transport` (an asyncio Protocol per connection that stamps each network read where it
arrives and parses it in the same call: `qualeval.wire.stream`), or httpx behind a proxy (`qualeval.wire.proxied`).
Retries (tenacity, once per attempt, never per chunk) cover connection failures, timeouts, malformed bodies,
429 (honouring Retry-After) and 5xx; other 4xx are final. A request never raises for an endpoint failure:
it comes back as a response with status `transport_error`. Time spent waiting for a free slot is recorded
apart (`timing.queued`); every other time is measured from the moment the request's first attempt was written,
so a retried request's TTFT and latency are what its caller waited, failed attempts and the waits between them
included (`timing.retrying` says how much of it that was; the inter-token figures are the answering attempt's).
"""

from __future__ import annotations

import asyncio
import random
from time import perf_counter, time
from typing import Any, Protocol

import httpx
import orjson
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from qualeval.errors import (
    EndpointError,
    HTTPFailure,
    InputError,
    ProtocolFailure,
    validation_problem,
)
from qualeval.reasoning import ReasoningFormat, resolve_formats
from qualeval.records import UNKNOWN_QUESTION, ClientConfig, ThinkingSwitch
from qualeval.wire.models import ChatRequest, ChatResponse
from qualeval.wire.proxied import HttpxEndpoint, proxy_for
from qualeval.wire.response import build_response, error_text, failed_response, retry_after
from qualeval.wire.stream import Attempt, StreamState, read_whole
from qualeval.wire.transport import Endpoint

__all__ = ["ChatClient", "ChatSender", "build_body", "check_config"]

THINKING_SWITCHES: tuple[ThinkingSwitch, ...] = ("chat_template_kwargs", "reasoning_effort", "deepseek")
THINKING_BUDGET_FIELD = "thinking_token_budget"
"""vLLM's per-request cap on thinking tokens: the reasoning parser ends the thinking when it is spent."""


def switch_params(switch: ThinkingSwitch, thinking: bool) -> dict[str, Any]:
    """The body keys that turn thinking on or off by one convention (none: nothing is sent)."""
    if switch == "chat_template_kwargs":  # vLLM, SGLang, llama.cpp; must stay a JSON boolean (llama.cpp)
        return {"chat_template_kwargs": {"enable_thinking": thinking}}
    if switch == "reasoning_effort":  # Ollama, OpenAI, llama.cpp: only "off" has a value every server accepts
        return {} if thinking else {"reasoning_effort": "none"}
    if switch == "deepseek":
        return {"thinking": {"type": "enabled" if thinking else "disabled"}}
    return {}


def build_body(request: ChatRequest, config: ClientConfig) -> dict[str, Any]:
    """The JSON body for a request, shaped by the endpoint's conventions."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [m.as_body() for m in request.messages],
    }
    if request.max_tokens is not None:
        body[config.max_tokens_field] = request.max_tokens
    for name in ("temperature", "top_p", "top_k", "min_p", "presence_penalty", "seed", "reasoning_effort"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    template_kwargs = dict(request.chat_template_kwargs)
    if request.thinking is not None:
        switch = switch_params(config.thinking_switch, request.thinking)
        template_kwargs.update(switch.pop("chat_template_kwargs", {}))
        body.update(switch)
    if template_kwargs:
        body["chat_template_kwargs"] = template_kwargs
    # stop strings fire inside the thinking of a reasoning model; they are applied after the split instead
    if request.stop and request.thinking is False:
        body["stop"] = list(request.stop)
    if request.response_format is not None:
        body["response_format"] = request.response_format
    if request.tools:
        body["tools"] = list(request.tools)
    if request.tool_choice is not None:
        body["tool_choice"] = request.tool_choice
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    body.update(request.extra_body)
    return body


class ChatSender(Protocol):
    """What a run's requests go through: one ChatClient, or the Router over several replicas
    (qualeval.serving.endpoints), which the run pipeline must not tell apart."""

    @property
    def config(self) -> ClientConfig: ...

    async def chat(self, request: ChatRequest) -> ChatResponse: ...


class ChatClient:
    """Async client for one OpenAI-compatible endpoint. Use as `async with ChatClient(cfg) as client:`.

    `transport` injects an httpx transport (tests replay recorded bytes with `httpx.MockTransport`).
    """

    def __init__(
        self, config: ClientConfig | None = None, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.config = config or ClientConfig()
        self.formats: tuple[ReasoningFormat, ...] = resolve_formats(self.config.formats)
        self._transport = transport
        self._endpoint: Endpoint | HttpxEndpoint | None = None
        self._slots = asyncio.Semaphore(self.config.concurrency)
        self._unknown_finish: set[str] = set()  # finish reasons warned of: each said once per client

    async def __aenter__(self) -> ChatClient:
        cfg = self.config
        headers = {"Content-Type": "application/json", **cfg.headers}
        if cfg.api_key is not None:
            headers["Authorization"] = f"Bearer {cfg.api_key.get_secret_value()}"
        if self._transport is not None or proxy_for(cfg.base_url):
            self._endpoint = HttpxEndpoint(cfg.base_url, headers, cfg.connect_timeout, cfg.concurrency, self._transport)
        else:
            self._endpoint = Endpoint(cfg.base_url, headers, cfg.connect_timeout)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._endpoint is not None:
            await self._endpoint.close()
            self._endpoint = None

    @property
    def endpoint(self) -> Endpoint | HttpxEndpoint:
        if self._endpoint is None:
            raise RuntimeError("ChatClient must be used inside 'async with'")
        return self._endpoint

    async def models(self) -> dict[str, Any]:
        """The endpoint's `/models` answer. Raises EndpointError when it cannot be had."""
        reply = await self.endpoint.send("GET", "/models", None, None, self.config.timeout)
        if reply.status != 200:
            raise HTTPFailure(reply.status, error_text(reply.body))
        try:
            return orjson.loads(reply.body)
        except orjson.JSONDecodeError:
            raise ProtocolFailure(f"{self.config.base_url}/models did not answer JSON") from None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one request with retries. Endpoint failures come back as `transport_error` responses."""
        body = orjson.dumps(build_body(request, self.config))
        failures: list[str] = []
        asked = perf_counter()
        async with self._slots:
            queued = (perf_counter() - asked) * 1000.0  # waiting for a slot is the client's time, not the server's
            try:
                got, sent_at, first = await self._attempts(body, request.stream, failures)
            except EndpointError as exc:
                failed = failed_response(request, len(failures), getattr(exc, "status", None), str(exc))
                failed.retried, failed.timing.queued = failures, queued
                return failed
        attempts = len(failures) + 1
        # a template that opens the thinking block does so only when thinking is on: a request that switched it
        # off gets an answer with no block to close, which must not be read as reasoning cut off
        opened = self.config.thinking_opened and request.thinking is not False
        done = build_response(
            request, got, self.formats, opened=opened, attempts=attempts, queued=queued, told=self._unknown_finish
        )
        done.retried, done.sent_at = failures, sent_at
        if failures:
            _from_first_attempt(done, (got.sent - first) * 1000.0)
        return done

    async def _attempts(self, body: bytes, stream: bool, failures: list[str]) -> tuple[Attempt, float, float]:
        """The first attempt is made directly; tenacity (waits, Retry-After, stop) takes over only once it
        failed, so a request that succeeds pays for no retry machinery. Appends each failure's fault class.
        Returns the answering attempt with when the first attempt was sent: wall-clock and perf_counter()."""
        sent_at, first = time(), perf_counter()
        try:
            return await self._attempt(body, stream), sent_at, first
        except EndpointError as exc:
            failures.append(_failure_kind(exc))
            if not exc.retryable or self.config.max_retries == 0:
                raise
            failed = exc
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(lambda e: isinstance(e, EndpointError) and e.retryable),
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=self._wait,
            reraise=True,
        ):
            with attempt:
                if attempt.retry_state.attempt_number == 1:
                    raise failed  # made above: tenacity decides how long to wait before the next
                try:
                    return await self._attempt(body, stream), sent_at, first
                except EndpointError as exc:
                    failures.append(_failure_kind(exc))
                    raise
        raise AssertionError("tenacity stops by raising the last error")

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        cfg = self.config
        hinted = getattr(exc, "retry_after", None)
        if hinted is not None:
            return min(hinted, cfg.backoff_max)
        # full jitter keeps many clients that failed together from retrying together
        return random.uniform(0, min(cfg.backoff_max, cfg.backoff_base * 2 ** (state.attempt_number - 1)))

    async def _attempt(self, body: bytes, stream: bool) -> Attempt:
        """One HTTP attempt within the deadline; a streamed body is parsed as it arrives."""
        sink = StreamState() if stream else None
        reply = await self.endpoint.send("POST", "/chat/completions", body, sink, self.config.timeout)
        if reply.status != 200:
            raise HTTPFailure(reply.status, error_text(reply.body), retry_after(reply.headers.get("retry-after")))
        if reply.streamed and sink is not None:
            got = sink.finish_attempt(reply.sent, reply.first_byte, reply.end)
        else:
            got = read_whole(reply.body, reply.headers.get("content-type", ""), reply.sent, reply.first_byte, reply.end)
        name, value = UNKNOWN_QUESTION
        got.unknown_question = reply.headers.get(name) == value
        return got


def _from_first_attempt(done: ChatResponse, retrying: float) -> None:
    """Times measured from the answering attempt, moved to the first attempt's send: the caller waited through
    the failed attempts too. The decode rate and inter-token gaps are the answering attempt's own, unmoved; so
    are the gaps between tool-call deltas (their arrivals all move by the same amount)."""
    timing = done.timing
    for name in ("first_byte", "ttft", "first_reasoning", "first_content", "end"):
        value = getattr(timing, name)
        if value is not None:
            setattr(timing, name, value + retrying)
    timing.retrying = retrying
    calls = done.call_timing
    if calls is not None:
        late = retrying / 1000.0  # CallTiming is in seconds
        calls.first_delta = None if calls.first_delta is None else calls.first_delta + late
        calls.complete = None if calls.complete is None else calls.complete + late
        calls.arrivals = tuple(t + late for t in calls.arrivals)


def _failure_kind(exc: EndpointError) -> str:
    """A fault class for counting: the HTTP status, or connection, timeout, protocol."""
    if isinstance(exc, HTTPFailure):
        return str(exc.status)
    if isinstance(exc, ProtocolFailure):
        return "protocol"
    text = str(exc)
    return "timeout" if ("timed out" in text or "within" in text) else "connection"


def check_config(**values: Any) -> ClientConfig:
    """Build a ClientConfig, turning validation errors into one-line InputErrors naming the field."""
    from pydantic import ValidationError

    try:
        return ClientConfig(**values)
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{problem.field}: {problem.message}") from None
