"""The chat client: the only place that opens sockets to an endpoint.

The wire is `qualeval.wire.transport` (an asyncio Protocol per connection that stamps each network read where it
arrives and parses it in the same call: `qualeval.wire.stream`), or httpx behind a proxy (`qualeval.wire.proxied`).
Retries (tenacity, once per attempt, never per chunk) cover connection failures, timeouts, malformed bodies,
429 (honouring Retry-After) and 5xx; other 4xx are final. A request never raises for an endpoint failure:
it comes back as a response with status `transport_error`. Time spent waiting for a free slot is recorded
apart (`timing.queued`); every other time is measured from the moment the request was written.
"""

from __future__ import annotations

import asyncio
import os
import random
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
    validation_problem,
)
from qualeval.reasoning.formats import ReasoningFormat, resolve_formats
from qualeval.records import ThinkingSwitch
from qualeval.wire.models import ChatRequest, ChatResponse
from qualeval.wire.proxied import HttpxEndpoint, proxy_for
from qualeval.wire.response import build_response, error_text, failed_response, retry_after
from qualeval.wire.stream import Attempt, StreamState, read_whole
from qualeval.wire.transport import Endpoint

__all__ = [
    "ChatClient",
    "ClientConfig",
    "MaxTokensField",
    "build_body",
    "check_config",
    "client_option",
    "env_base_url",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def env_base_url() -> str | None:
    """OPENAI_BASE_URL, the variable the openai SDK reads: every surface that defaults the endpoint reads it here."""
    return os.environ.get("OPENAI_BASE_URL") or None


THINKING_SWITCHES: tuple[ThinkingSwitch, ...] = ("chat_template_kwargs", "reasoning_effort", "deepseek")
THINKING_BUDGET_FIELD = "thinking_token_budget"
"""vLLM's per-request cap on thinking tokens: the reasoning parser ends the thinking when it is spent."""
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]


class ClientConfig(BaseModel):
    """How to talk to one endpoint. Defaults read OPENAI_BASE_URL and OPENAI_API_KEY like the openai SDK.

    Its fields are the declaration of the options a run (or a probe) hands on to its client: name, default and
    help are taken from here by `client_option`."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(
        default_factory=lambda: env_base_url() or DEFAULT_BASE_URL,
        validate_default=True,
        description="The endpoint's base URL (…/v1); default OPENAI_BASE_URL, else OpenAI's.",
    )
    api_key: SecretStr | None = Field(
        default_factory=lambda: SecretStr(k) if (k := os.environ.get("OPENAI_API_KEY")) else None,
        description="The endpoint's API key (default OPENAI_API_KEY); never written anywhere.",
    )
    timeout: float = Field(
        600.0, description="Seconds per request attempt; also the longest silence tolerated inside a stream."
    )
    connect_timeout: float = Field(10.0, description="Seconds to open a connection.")
    max_retries: int = Field(4, description="Retries on 429, 5xx and connection errors.")
    backoff_base: float = Field(0.5, description="Seconds before the first retry (doubled for each next, jittered).")
    backoff_max: float = Field(30.0, description="The longest wait between two attempts, Retry-After included.")
    concurrency: int = Field(16, description="Requests in flight at most; the others wait for a free slot.")
    formats: tuple[str, ...] | None = Field(
        None, description="Inline reasoning formats by name or YAML path; None means all built-in formats."
    )
    thinking_opened: bool = Field(
        False,
        description="The chat template opens the thinking block (only </think> comes back: Qwen3.5, QwQ, R1's "
        "updated template).",
    )
    max_tokens_field: MaxTokensField = Field(
        "max_tokens",
        description="The body key that carries the budget (OpenAI's newer models want max_completion_tokens).",
    )
    thinking_switch: ThinkingSwitch = Field(
        "chat_template_kwargs",
        description="How a request's thinking is switched on or off: chat_template_kwargs, reasoning_effort, "
        "deepseek or none.",
    )
    headers: dict[str, str] = Field(default_factory=dict, description="More HTTP headers for every request.")

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


def client_option(name: str, why: str = "", **own: Any) -> Any:
    """ClientConfig's declaration of option `name` (its default and help) for a model that hands the option on to
    a client (RunConfig, the probe's options). `own` is what that model declares differently, and `why` says why:
    it is kept with the field (`differs`), so a difference is never silent."""
    if bool(own.keys() - {"json_schema_extra"}) != bool(why):
        raise TypeError(f"client_option({name!r}): a field of its own needs a why, and a why needs a difference")
    field = ClientConfig.model_fields[name]
    declared: dict[str, Any] = {"description": field.description}
    if "default" not in own and "default_factory" not in own:
        declared.update(
            {"default_factory": field.default_factory} if field.default_factory else {"default": field.default}
        )
    extra = {**own.pop("json_schema_extra", {}), **({"differs": why} if why else {})}
    return Field(**{**declared, **own}, json_schema_extra=extra or None)


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
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
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
    body.update(request.extra_body)
    return body


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
                got, sent_at = await self._attempts(body, request.stream, failures)
            except EndpointError as exc:
                failed = failed_response(request, len(failures), getattr(exc, "status", None), str(exc))
                failed.retried, failed.timing.queued = failures, queued
                return failed
        attempts = len(failures) + 1
        # a template that opens the thinking block does so only when thinking is on: a request that switched it
        # off gets an answer with no block to close, which must not be read as reasoning cut off
        opened = self.config.thinking_opened and request.thinking is not False
        done = build_response(request, got, self.formats, opened=opened, attempts=attempts, queued=queued)
        done.retried, done.sent_at = failures, sent_at
        return done

    async def _attempts(self, body: bytes, stream: bool, failures: list[str]) -> tuple[Attempt, float]:
        """The first attempt is made directly; tenacity (waits, Retry-After, stop) takes over only once it
        failed, so a request that succeeds pays for no retry machinery. Appends each failure's fault class."""
        sent_at = time()
        try:
            return await self._attempt(body, stream), sent_at
        except EndpointError as exc:
            failures.append(_failure_kind(exc))
            if not exc.retryable or self.config.max_retries == 0:
                raise
            first = exc
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(lambda e: isinstance(e, EndpointError) and e.retryable),
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=self._wait,
            reraise=True,
        ):
            with attempt:
                if attempt.retry_state.attempt_number == 1:
                    raise first  # made above: tenacity decides how long to wait before the next
                sent_at = time()
                try:
                    return await self._attempt(body, stream), sent_at
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
            return sink.finish_attempt(reply.sent, reply.first_byte, reply.end)
        kind = reply.headers.get("content-type", "")
        return read_whole(reply.body, kind, reply.sent, reply.first_byte, reply.end)


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
