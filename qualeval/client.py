"""The chat client: the only place that opens sockets to an endpoint.

Streaming is parsed from raw SSE bytes with orjson (see `qualeval.sse`); each network read is stamped once
on a monotonic clock, and every event in it carries that stamp. Retries (tenacity) cover connection
failures, timeouts, malformed bodies, 429 (honouring Retry-After) and 5xx; other 4xx are final. A request
never raises for an endpoint failure: it comes back as a response with status `transport_error`.
"""

from __future__ import annotations

import asyncio
import os
import random
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from time import perf_counter, time
from typing import Any, Literal

import httpx
import orjson
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from qualeval.errors import (
    EndpointError,
    HTTPFailure,
    InputError,
    ProtocolFailure,
    TransportFailure,
    validation_problem,
)
from qualeval.formats import ReasoningFormat, resolve_formats
from qualeval.histogram import bucket_of
from qualeval.metrics import interpolated
from qualeval.models import ChatRequest, ChatResponse, ItlSummary, Timing, Usage
from qualeval.split import REASONING_FIELDS, pick_reasoning, split_completion
from qualeval.sse import SSEDecoder

__all__ = ["ChatClient", "ClientConfig", "build_body", "check_config"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class ClientConfig(BaseModel):
    """How to talk to one endpoint. Defaults read OPENAI_BASE_URL and OPENAI_API_KEY like the openai SDK."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(
        default_factory=lambda: os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL, validate_default=True
    )
    api_key: SecretStr | None = Field(
        default_factory=lambda: SecretStr(k) if (k := os.environ.get("OPENAI_API_KEY")) else None
    )
    timeout: float = 600.0
    """Seconds one attempt may take in all; also the longest silence tolerated inside a stream."""
    connect_timeout: float = 10.0
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    concurrency: int = 16
    formats: tuple[str, ...] | None = None
    """Inline reasoning formats by name or YAML path; None means all built-in formats."""
    thinking_opened: bool = False
    """The chat template opens the reasoning block in the prompt (Qwen3.5, QwQ, R1 updated template)."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    thinking_switch: Literal["chat_template_kwargs", "reasoning_effort", "deepseek", "none"] = "chat_template_kwargs"
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base URL must start with http:// or https://, got '{value}'")
        return value.rstrip("/")

    @field_validator("concurrency", "max_retries")
    @classmethod
    def _check_counts(cls, value: int, info: Any) -> int:
        low = 1 if info.field_name == "concurrency" else 0
        if value < low:
            raise ValueError(f"{info.field_name} must be at least {low}, got {value}")
        return value

    @field_validator("timeout", "connect_timeout")
    @classmethod
    def _check_timeouts(cls, value: float) -> float:
        if value <= 0:
            raise ValueError(f"timeouts must be positive, got {value}")
        return value


def build_body(request: ChatRequest, config: ClientConfig) -> dict[str, Any]:
    """The JSON body for a request, shaped by the endpoint's conventions."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
    }
    if request.max_tokens is not None:
        body[config.max_tokens_field] = request.max_tokens
    for name in ("temperature", "top_p", "seed", "reasoning_effort"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    if request.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    template_kwargs = dict(request.chat_template_kwargs)
    if request.thinking is not None:
        if config.thinking_switch == "chat_template_kwargs":
            template_kwargs["enable_thinking"] = request.thinking  # must stay a JSON boolean (llama.cpp)
        elif config.thinking_switch == "reasoning_effort" and not request.thinking:
            body["reasoning_effort"] = "none"
        elif config.thinking_switch == "deepseek":
            body["thinking"] = {"type": "enabled" if request.thinking else "disabled"}
    if template_kwargs:
        body["chat_template_kwargs"] = template_kwargs
    # stop strings fire inside the thinking of a reasoning model; they are applied after the split instead
    if request.stop and request.thinking is False:
        body["stop"] = list(request.stop)
    if request.response_format is not None:
        body["response_format"] = request.response_format
    body.update(request.extra_body)
    return body


def _itl(gaps: list[float]) -> ItlSummary | None:
    if not gaps:
        return None
    ordered = sorted(gaps)
    return ItlSummary(
        count=len(ordered),
        mean=sum(ordered) / len(ordered),
        p50=interpolated(ordered, 0.5),
        p90=interpolated(ordered, 0.9),
        p99=interpolated(ordered, 0.99),
        max=ordered[-1],
        hist=dict(Counter(bucket_of(g) for g in gaps)),
    )


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time())
    except (TypeError, ValueError):
        return None


def _error_text(body: bytes) -> str:
    """A one-line description of an error body, JSON or not."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body.decode("utf-8", "replace").strip().replace("\n", " ")
        return text[:200] or "(empty body)"
    err = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err)[:300]
    if isinstance(obj, dict) and "message" in obj:
        return str(obj["message"])[:300]
    return str(err or obj)[:300]


def _usage(raw: dict[str, Any] | None, reasoning: str, content: str) -> Usage:
    raw = raw or {}
    completion = raw.get("completion_tokens")
    details = raw.get("completion_tokens_details") or {}
    counted = details.get("reasoning_tokens")
    if counted is None:
        counted = raw.get("reasoning_tokens")  # SGLang 0.5.x puts it at the top level of usage
    usage = Usage(prompt_tokens=raw.get("prompt_tokens"), completion_tokens=completion, reasoning_tokens=counted)
    if completion is None:
        # no usage reported: roughly four characters per token for English text
        usage.completion_tokens = (len(reasoning) + len(content) + 3) // 4
        usage.completion_estimated = True
    if counted is None:
        total_chars = len(reasoning) + len(content)
        share = len(reasoning) / total_chars if total_chars else 0.0
        usage.reasoning_tokens = round(usage.completion_tokens * share)
        usage.reasoning_estimated = True
    usage.answer_tokens = max(0, usage.completion_tokens - usage.reasoning_tokens)
    return usage


def _ms(t: float | None, t0: float) -> float | None:
    return None if t is None else (t - t0) * 1000.0


class _Stream:
    """Accumulates one streamed response. `event` is the hot path: keep it lean."""

    __slots__ = (
        "content",
        "content_at",
        "content_len",
        "content_t",
        "finish",
        "gaps",
        "last_tok",
        "reasoning",
        "reasoning_t",
        "seen_choice",
        "timings",
        "ttft",
        "usage",
    )

    def __init__(self) -> None:
        self.content: list[str] = []
        self.content_at: list[int] = []  # where each content delta starts in the joined content
        self.content_t: list[float] = []
        self.content_len = 0
        self.reasoning: dict[str, list[str]] = {}
        self.reasoning_t: float | None = None
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None
        self.timings: dict[str, Any] | None = None
        self.ttft: float | None = None
        self.last_tok: float | None = None
        self.gaps: list[float] = []
        self.seen_choice = False

    def event(self, obj: dict[str, Any], now: float) -> None:
        if "error" in obj:
            raise _in_band_error(obj["error"])
        usage = obj.get("usage")
        if usage:
            self.usage = usage
        if "timings" in obj:
            self.timings = obj["timings"]
        choices = obj.get("choices")
        if not choices:
            return
        choice = choices[0]
        self.seen_choice = True
        finish = choice.get("finish_reason")
        if finish:
            self.finish = finish
        delta = choice.get("delta")
        if not delta:
            return
        got = False
        for name in REASONING_FIELDS:
            text = delta.get(name)
            if text:
                self.reasoning.setdefault(name, []).append(text)
                got = True
        if not got and delta.get("reasoning_details"):
            picked = pick_reasoning(delta)
            if picked:
                self.reasoning.setdefault(picked[0], []).append(picked[1])
                got = True
        if got and self.reasoning_t is None:
            self.reasoning_t = now
        text = delta.get("content")
        if text:
            self.content.append(text)
            self.content_at.append(self.content_len)
            self.content_t.append(now)
            self.content_len += len(text)
            got = True
        if got:
            if self.ttft is None:
                self.ttft = now
            else:
                self.gaps.append((now - self.last_tok) * 1000.0)  # type: ignore[operator]
            self.last_tok = now

    def time_of(self, index: int | None) -> float | None:
        """Arrival time of the content character at `index`."""
        if index is None or not self.content_t:
            return None
        return self.content_t[max(0, bisect_right(self.content_at, index) - 1)]


def _in_band_error(err: Any) -> EndpointError:
    message = str(err.get("message") or err) if isinstance(err, dict) else str(err)
    code = err.get("code") if isinstance(err, dict) else None
    if isinstance(code, int) and 400 <= code < 600:
        return HTTPFailure(code, message)
    return ProtocolFailure(f"server sent an error inside a 200 response: {message}")


@dataclass(slots=True)
class _Attempt:
    """What one successful attempt read off the wire, before splitting."""

    content: str | None
    fields: dict[str, str]
    finish: str | None
    usage: dict[str, Any] | None
    timings: dict[str, Any] | None
    first_byte: float
    end: float
    ttft: float | None = None
    reasoning_t: float | None = None
    gaps: list[float] = field(default_factory=list)
    stream: _Stream | None = None  # kept to map content positions back to arrival times


class ChatClient:
    """Async client for one OpenAI-compatible endpoint. Use as `async with ChatClient(cfg) as client:`."""

    def __init__(
        self, config: ClientConfig | None = None, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.config = config or ClientConfig()
        self.formats: tuple[ReasoningFormat, ...] = resolve_formats(self.config.formats)
        self._transport = transport
        self._http: httpx.AsyncClient | None = None
        self._slots = asyncio.Semaphore(self.config.concurrency)

    async def __aenter__(self) -> ChatClient:
        cfg = self.config
        headers = {"Content-Type": "application/json", **cfg.headers}
        if cfg.api_key is not None:
            headers["Authorization"] = f"Bearer {cfg.api_key.get_secret_value()}"
        self._http = httpx.AsyncClient(
            base_url=cfg.base_url,
            headers=headers,
            timeout=httpx.Timeout(cfg.timeout, connect=cfg.connect_timeout),
            limits=httpx.Limits(max_connections=cfg.concurrency, max_keepalive_connections=cfg.concurrency),
            transport=self._transport,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            raise RuntimeError("ChatClient must be used inside 'async with'")
        return self._http

    async def models(self) -> dict[str, Any]:
        """The endpoint's `/models` answer. Raises EndpointError when it cannot be had."""
        try:
            resp = await self.http.get("/models")
        except httpx.HTTPError as exc:
            raise TransportFailure(f"{self.config.base_url}/models: {_describe(exc)}") from None
        if resp.status_code != 200:
            raise HTTPFailure(resp.status_code, _error_text(resp.content))
        try:
            return orjson.loads(resp.content)
        except orjson.JSONDecodeError:
            raise ProtocolFailure(f"{self.config.base_url}/models did not answer JSON") from None

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one request with retries. Endpoint failures come back as `transport_error` responses."""
        body = orjson.dumps(build_body(request, self.config))
        attempts = 0
        failures: list[str] = []
        async with self._slots:
            try:
                async for attempt in AsyncRetrying(
                    retry=retry_if_exception(lambda e: isinstance(e, EndpointError) and e.retryable),
                    stop=stop_after_attempt(self.config.max_retries + 1),
                    wait=self._wait,
                    reraise=True,
                ):
                    with attempt:
                        attempts = attempt.retry_state.attempt_number
                        t0, sent_at = perf_counter(), time()
                        try:
                            got = await self._send_within_deadline(body, request.stream)
                        except EndpointError as exc:
                            failures.append(_failure_kind(exc))
                            raise
            except EndpointError as exc:
                failed = self._failed(request, attempts, getattr(exc, "status", None), str(exc))
                return failed.model_copy(update={"retried": failures})
        done = self._response(request, got, t0, attempts)
        return done.model_copy(update={"retried": failures, "sent_at": sent_at})

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        cfg = self.config
        hinted = getattr(exc, "retry_after", None)
        if hinted is not None:
            return min(hinted, cfg.backoff_max)
        # full jitter keeps many clients that failed together from retrying together
        return random.uniform(0, min(cfg.backoff_max, cfg.backoff_base * 2 ** (state.attempt_number - 1)))

    async def _send_within_deadline(self, body: bytes, stream: bool) -> _Attempt:
        try:
            return await asyncio.wait_for(self._send(body, stream), self.config.timeout)
        except asyncio.TimeoutError:
            raise TransportFailure(
                f"{self.config.base_url}: no complete response within {self.config.timeout:g}s"
            ) from None

    async def _send(self, body: bytes, stream: bool) -> _Attempt:
        try:
            async with self.http.stream("POST", "/chat/completions", content=body) as resp:
                first_byte = perf_counter()
                if resp.status_code != 200:
                    raw = await resp.aread()
                    raise HTTPFailure(resp.status_code, _error_text(raw), _retry_after(resp.headers.get("retry-after")))
                kind = resp.headers.get("content-type", "")
                if stream and kind.startswith("text/event-stream"):
                    return await self._read_stream(resp, first_byte)
                raw = await resp.aread()
                return self._read_whole(raw, kind, first_byte, perf_counter())
        except httpx.HTTPError as exc:
            raise TransportFailure(f"{self.config.base_url}: {_describe(exc)}") from None

    async def _read_stream(self, resp: httpx.Response, first_byte: float) -> _Attempt:
        decoder = SSEDecoder()
        acc = _Stream()
        loads = orjson.loads
        done = False
        async for chunk in resp.aiter_raw():
            now = perf_counter()
            for payload in decoder.feed(chunk):
                if payload == b"[DONE]":
                    done = True
                    continue
                try:
                    obj = loads(payload)
                except orjson.JSONDecodeError:
                    raise ProtocolFailure(f"malformed SSE data line: {payload[:80]!r}") from None
                if type(obj) is not dict:
                    raise ProtocolFailure(f"SSE data is not a JSON object: {payload[:80]!r}")
                acc.event(obj, now)
        end = perf_counter()
        for payload in decoder.close():
            if payload == b"[DONE]":
                done = True
        if not acc.seen_choice:
            raise ProtocolFailure("stream carried no choices")
        if not done and acc.finish is None:
            raise ProtocolFailure("stream ended before a finish_reason or [DONE]")
        return _Attempt(
            content="".join(acc.content) if acc.content else None,
            fields={k: "".join(v) for k, v in acc.reasoning.items()},
            finish=acc.finish,
            usage=acc.usage,
            timings=acc.timings,
            first_byte=first_byte,
            end=end,
            ttft=acc.ttft,
            reasoning_t=acc.reasoning_t,
            gaps=acc.gaps,
            stream=acc,
        )

    def _read_whole(self, raw: bytes, kind: str, first_byte: float, end: float) -> _Attempt:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            snippet = raw[:60].decode("utf-8", "replace").strip().replace("\n", " ")
            if "json" in kind:
                raise ProtocolFailure(f"malformed JSON in the response body: '{snippet}'") from None
            raise ProtocolFailure(
                f"expected a JSON chat completion, got {kind or 'no content type'}: '{snippet}'"
            ) from None
        if not isinstance(obj, dict):
            raise ProtocolFailure("chat completion body is not a JSON object")
        if "error" in obj:
            raise _in_band_error(obj["error"])
        choices = obj.get("choices")
        if not choices or not isinstance(choices, list):
            raise ProtocolFailure("chat completion has no choices")
        choice = choices[0]
        message = choice.get("message") or {}
        fields = {n: v for n in REASONING_FIELDS if isinstance(v := message.get(n), str) and v}
        picked = pick_reasoning(message)
        if picked and picked[0] == "reasoning_details":
            fields["reasoning_details"] = picked[1]
        content = message.get("content")
        return _Attempt(
            content=content if isinstance(content, str) else None,
            fields=fields,
            finish=choice.get("finish_reason"),
            usage=obj.get("usage"),
            timings=obj.get("timings"),
            first_byte=first_byte,
            end=end,
        )

    def _response(self, request: ChatRequest, got: _Attempt, t0: float, attempts: int) -> ChatResponse:
        picked = next(((n, got.fields[n]) for n in (*REASONING_FIELDS, "reasoning_details") if n in got.fields), None)
        error = None
        if got.finish == "abort":
            error = "the server aborted the generation (finish_reason 'abort')"
        split = split_completion(
            content=got.content,
            field=picked,
            finish_reason=got.finish,
            formats=self.formats,
            thinking=request.thinking,
            opened=self.config.thinking_opened,
            stops=request.stop,
            error=error,
        )
        done = split.completion
        timing = Timing(first_byte=_ms(got.first_byte, t0), end=_ms(got.end, t0))
        if got.stream is not None:
            acc: _Stream = got.stream
            inline = split.inline
            first_inline = acc.time_of(inline.reasoning_at) if inline else None
            first_r = min((t for t in (got.reasoning_t, first_inline) if t is not None), default=None)
            first_c = acc.time_of(inline.content_at) if inline and done.content else None
            if request.thinking is False and done.content and not got.content:
                first_c = got.reasoning_t  # the answer arrived in the reasoning field
            timing.ttft = _ms(got.ttft, t0)
            timing.first_reasoning = _ms(first_r, t0) if done.reasoning else None
            timing.first_content = _ms(first_c, t0)
            timing.itl = _itl(got.gaps)
        usage = _usage(got.usage, done.reasoning, done.content)
        if timing.ttft is not None and timing.end is not None and usage.completion_tokens:
            span = (timing.end - timing.ttft) / 1000.0
            if usage.completion_tokens > 1 and span > 0:
                timing.decode_rate = (usage.completion_tokens - 1) / span
        return ChatResponse(
            completion=done,
            raw_content=got.content,
            raw_reasoning=got.fields,
            finish_reason=got.finish,
            usage=usage,
            timing=timing,
            stream=request.stream,
            attempts=attempts,
            http_status=200,
            error=error,
            server_timings=got.timings,
        )

    def _failed(self, request: ChatRequest, attempts: int, status: int | None, error: str) -> ChatResponse:
        done = split_completion(content=None, field=None, finish_reason=None, formats=(), error=error)
        return ChatResponse(
            completion=done.completion, stream=request.stream, attempts=attempts, http_status=status, error=error
        )


def _failure_kind(exc: EndpointError) -> str:
    """A fault class for counting: the HTTP status, or connection, timeout, protocol."""
    if isinstance(exc, HTTPFailure):
        return str(exc.status)
    if isinstance(exc, ProtocolFailure):
        return "protocol"
    text = str(exc)
    return "timeout" if ("timed out" in text or "within" in text) else "connection"


def _describe(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]


def check_config(**values: Any) -> ClientConfig:
    """Build a ClientConfig, turning validation errors into one-line InputErrors naming the field."""
    from pydantic import ValidationError

    try:
        return ClientConfig(**values)
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{problem.field}: {problem.message}") from None
