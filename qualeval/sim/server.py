"""The reference server: a deterministic, OpenAI-compatible chat endpoint on 127.0.0.1.

Plain asyncio HTTP/1.1 (keep-alive, chunked SSE) so that it controls every byte it sends: faults such as a
connection dropped mid-stream or a malformed SSE line need that, and burst mode must outrun the client.
It shares no code with the client beyond the package: it is the opponent the client is tested against.
Every response carries `x-qualeval-simulated: true`, and `/v1/models` says `owned_by: qualeval-simulated`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from qualeval.errors import InputError
from qualeval.sim.behaviour import AnswerKey, Behaviour, _rng, generate, tokenize
from qualeval.sim.frames import ChatCall
from qualeval.sim.observe import (
    NO_EXTRAS,
    Observed,
    decay,
    force_length,
    log_record,
    metrics_text,
    spec_steps,
    speedup,
    tokenized,
)
from qualeval.sim.wire import FLAVOURS, Ctx, Flavour, RequestRejected, completion_tokens, read_constraint, read_thinking

__all__ = ["FAULTS", "Latency", "SimConfig", "SimServer", "parse_faults", "running_server"]

FAULTS = ("429", "500", "503", "drop", "malformed", "slow-headers", "empty-choices", "stall", "html", "context")
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class Latency:
    ttft_ms: float = 40.0
    prefill_ms_per_token: float = 0.02
    decode_ms: float = 8.0
    """Per-token interval of one lone request."""
    batch_slowdown: float = 0.03
    """Each further request in flight stretches the decode interval by this share, as a batch does."""
    jitter: float = 0.1
    burst: bool = False
    """No delays at all: for client benchmarks."""


@dataclass(frozen=True, slots=True)
class SimConfig:
    flavour: str = "vllm"
    host: str = "127.0.0.1"
    port: int = 8011
    model: str = "sim"
    answers: Path | None = None
    tasks: tuple[str, ...] = ()
    """Tasks whose samples form the answer key (with or instead of `answers`)."""
    task_data: Path | dict[str, Path] | None = None
    """Local data for `tasks`: one path for all, or by task name (`{"gsm8k": ..., "humaneval": ...}`)."""
    behaviour: Behaviour = field(default_factory=Behaviour)
    latency: Latency = field(default_factory=Latency)
    max_running: int = 0
    """Requests decoded at once; more wait in a queue (0: no limit)."""
    faults: dict[str, float] = field(default_factory=dict)
    """Fault name -> probability per request."""
    retry_after: float = 1.0
    slow_headers_s: float = 5.0
    stall_s: float = 3600.0
    ignore_constraints: bool = False
    """Ignore structured-output requests, like some vLLM versions with a reasoning parser on."""
    max_model_len: int = 32768
    api_key: str | None = None
    thinking_opened: bool = False
    """The chat template opens the think block itself, so the model writes only `</think>` (llamacpp)."""
    accuracy_half_tokens: int = 0
    """Accuracy halves every this many prompt tokens (0: the same at every length): long-context decay."""
    spec_draft: int = 0
    """Speculative decoding: draft tokens proposed per step (0: off)."""
    spec_accept: float = 0.6
    """Probability that each draft token is accepted (until the first rejection in a step)."""
    kv_tokens: int = 262144
    """KV-cache capacity in tokens, for the KV-cache usage gauge."""
    log: Path | None = None
    """Append one JSON line per request: what the server received and sent, and when."""

    def __post_init__(self) -> None:
        if self.flavour not in FLAVOURS:
            raise InputError(f"unknown flavour '{self.flavour}': expected one of {', '.join(FLAVOURS)}")
        for name, rate in self.faults.items():
            if name not in FAULTS:
                raise InputError(f"unknown fault '{name}': expected one of {', '.join(FAULTS)}")
            if not 0 <= rate <= 1:
                raise InputError(f"fault '{name}': rate must be between 0 and 1, got {rate}")


def parse_faults(spec: str) -> dict[str, float]:
    """'429=0.05,drop=0.01' -> {'429': 0.05, 'drop': 0.01}."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, sep, rate = part.partition("=")
        try:
            out[name.strip()] = float(rate) if sep else 1.0
        except ValueError:
            raise InputError(f"--faults: '{part}' is not NAME=RATE") from None
    return out


class _Reply(Exception):
    """Answer the request at once with this status and OpenAI-style error."""

    def __init__(
        self,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
        kind: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}
        self.kind = kind
        self.extra = extra or {}


@dataclass(slots=True)
class _Plan:
    steps: list[tuple[int, bytes | None]]
    whole: bytes
    ttft_s: float
    decode_s: float
    tokens: int
    prompt: str = ""
    prompt_tokens: int = 0
    spec: tuple[int, int, int] | None = None


class SimServer:
    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.flavour: Flavour = FLAVOURS[config.flavour]
        entries = list(AnswerKey.load(config.answers).entries) if config.answers else []
        if config.tasks:
            from qualeval.tasks import build_samples, load_task

            for ref in config.tasks:
                task = load_task(ref)
                data = config.task_data
                if isinstance(data, dict):
                    data = data.get(task.name) or data.get(task.name.split(":", 1)[0]) or data.get("*")
                # a reference program (HumanEval's gold) is sent as the answer itself, not as "The answer is ..."
                verbatim = "code" if task.spec.scorer.kind == "code" else None
                entries += AnswerKey.from_samples(build_samples(task, data=data), verbatim).entries
        self.key = AnswerKey(entries) if entries else None
        self.in_flight = 0
        self.requests = 0
        self._seen: Counter[bytes] = Counter()
        self._slots = asyncio.Semaphore(config.max_running) if config.max_running > 0 else None
        self._server: asyncio.Server | None = None
        self._state: dict[str, Any] = {}  # what a flavour with hooks keeps between requests
        self.observed = Observed(kv_tokens=config.kv_tokens)
        if config.log is not None:
            try:
                self.observed.log = config.log.open("ab")
            except OSError as exc:
                raise InputError(f"{config.log}: cannot write the server log ({exc.strerror})") from None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._connection, self.config.host, self.config.port, limit=1 << 22)
        return self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
        if self.observed.log is not None:
            self.observed.log.close()
            self.observed.log = None

    # --- HTTP -----------------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                keep = await self._dispatch(*request, writer)
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _dispatch(
        self, method: str, path: str, headers: dict[str, str], body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        received = time.perf_counter()
        try:
            self._check_auth(headers)
            route = path.split("?", 1)[0].rstrip("/")
            if await self._observe(method, route, body, writer):
                return True
            answer = self.flavour.hooks.route(method, route, body, self.config) if self.flavour.hooks else None
            if answer is not None:
                await _send_json(writer, *answer)
                return True
            if route in ("/v1/models", "/models"):
                if method != "GET":
                    raise _Reply(405, f"{method} not allowed on {route}")
                await _send_json(writer, 200, self._models())
                return True
            if route not in ("/v1/chat/completions", "/chat/completions"):
                raise _Reply(404, f"no route {method} {route}")
            if method != "POST":
                raise _Reply(405, f"{method} not allowed on {route}")
            return await self._chat(headers, body, writer, received)
        except _Reply as reply:
            if self.flavour.hooks is not None:
                payload = self.flavour.hooks.error(reply.status, str(reply), reply.kind, reply.extra)
                await _send_json(writer, reply.status, payload, reply.headers)
                return True
            err = {
                "error": {
                    "message": str(reply),
                    "type": _REASONS.get(reply.status, "Error"),
                    "param": None,
                    "code": reply.status,
                }
            }
            await _send_json(writer, reply.status, orjson.dumps(err), reply.headers)
            return True

    async def _observe(self, method: str, route: str, body: bytes, writer: asyncio.StreamWriter) -> bool:
        """`/metrics` (every flavour with a real counterpart that has it) and `/tokenize` (those without their
        own routes; llama.cpp answers its own). True when answered here."""
        if self.flavour.name in NO_EXTRAS:
            return False
        if route == "/metrics" and method == "GET":
            text = metrics_text(self.flavour.name, self.observed, self.in_flight, self.config.model)
            await _send(writer, 200, text, "text/plain; version=0.0.4; charset=utf-8")
            return True
        if route in ("/tokenize", "/v1/tokenize") and method == "POST" and self.flavour.hooks is None:
            answer = tokenized(body, self.config.max_model_len)
            if answer is None:
                raise _Reply(400, "give 'prompt' (a string) or 'messages' to tokenize")
            await _send_json(writer, 200, orjson.dumps(answer))
            return True
        return False

    def _check_auth(self, headers: dict[str, str]) -> None:
        if self.config.api_key and headers.get("authorization") != f"Bearer {self.config.api_key}":
            raise _Reply(401, "Incorrect API key provided")

    def _models(self) -> bytes:
        return orjson.dumps(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.config.model,
                        "object": "model",
                        "created": 1760000000,
                        "owned_by": "qualeval-simulated",
                        "flavour": self.flavour.name,
                        "max_model_len": self.config.max_model_len,
                    }
                ],
            }
        )

    # --- chat -----------------------------------------------------------------------------------------

    async def _chat(self, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter, received: float) -> bool:
        body = self._parse(raw)
        self.requests += 1
        digest = hashlib.sha256(raw).digest()
        self._seen[digest] += 1
        occurrence = self._seen[digest]
        directives = _directives(headers.get("x-qualeval-sim", ""))
        fault = directives.get("fault") or self._draw_fault(digest, occurrence)
        if "fault" in directives and occurrence > int(directives.get("fault_times", 1 << 30)):
            fault = None  # fail only the first N attempts of this exact request
        stream = bool(body.get("stream"))
        if fault in ("429", "500", "503"):
            extra = {"Retry-After": f"{self.config.retry_after:g}"} if fault == "429" else {}
            message = "Rate limit exceeded" if fault == "429" else "simulated server error"
            raise _Reply(int(fault), message, extra)
        if fault == "html":
            await _send(writer, 200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html; charset=utf-8")
            return True
        if fault == "slow-headers":
            await asyncio.sleep(float(directives.get("delay", self.config.slow_headers_s)))
        plan = self._plan(body, directives, occurrence, fault)
        if fault == "empty-choices":
            empty = {
                "id": "chatcmpl-empty",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model"),
                "choices": [],
            }
            if stream:
                await _send_stream(
                    writer,
                    [
                        (0, _frame(b"data: " + orjson.dumps(empty) + b"\n\n")),
                        (0, _frame(b"data: [DONE]\n\n")),
                        (0, b"0\r\n\r\n"),
                    ],
                )
            else:
                await _send_json(writer, 200, orjson.dumps(empty))
            return True
        if not stream:
            return await self._whole(plan, writer, received, fault)
        return await self._stream(plan, writer, received, fault)

    def _parse(self, raw: bytes) -> dict[str, Any]:
        if self.flavour.hooks is not None:
            try:
                return self.flavour.hooks.parse(raw)
            except RequestRejected as exc:
                raise _Reply(exc.status, str(exc), kind=exc.kind, extra=exc.extra) from None
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise _Reply(400, "request body is not valid JSON") from None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            raise _Reply(400, "'messages' must be a non-empty list")
        return body

    def _draw_fault(self, digest: bytes, occurrence: int) -> str | None:
        if not self.config.faults:
            return None
        # a function of the request and how often it was seen: reruns fail the same way, retries differ
        roll = _rng(self.config.behaviour.seed, "fault", digest.hex(), occurrence).random()
        edge = 0.0
        for name, rate in sorted(self.config.faults.items()):
            edge += rate
            if roll < edge:
                return name
        return None

    def _plan(self, body: dict[str, Any], directives: dict[str, str], occurrence: int, fault: str | None) -> _Plan:
        cfg = self.config
        flavour = self.flavour
        if flavour.hooks is not None:
            return self._plan_hooked(body, directives, occurrence, fault)
        messages = body["messages"]
        try:
            prompt = "\n".join(str(m.get("content", "")) for m in messages)
            user = next((str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user"), prompt)
        except AttributeError:
            raise _Reply(400, "each message must be an object with 'role' and 'content'") from None
        prompt_tokens = len(tokenize(prompt)) + 4 * len(messages)
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 0):
            raise _Reply(400, "max_tokens must be a non-negative integer")
        if prompt_tokens + (max_tokens or 0) > cfg.max_model_len or fault == "context":
            raise _Reply(
                400,
                f"This model's maximum context length is {cfg.max_model_len} tokens. However, "
                f"you requested {prompt_tokens + (max_tokens or 0)} tokens "
                f"({prompt_tokens} in the messages, {max_tokens or 0} in the completion).",
            )
        try:
            constraint = None if cfg.ignore_constraints else read_constraint(flavour, body)
            thinking = read_thinking(flavour, body)
        except RequestRejected as exc:
            raise _Reply(exc.status, str(exc)) from None
        temperature = body.get("temperature")
        variant = (body.get("seed"), occurrence if temperature not in (None, 0, 0.0) else 0)
        gen = generate(
            user,
            behaviour=_at_length(cfg, prompt_tokens),
            key=self.key,
            max_tokens=max_tokens,
            thinking=thinking,
            constraint=constraint,
            constraint_skips_thinking=not flavour.reasoning_aware,
            directives=directives,
            variant=variant,
            conversation=prompt,
        )
        force_length(gen, body, max_tokens)
        rng = _rng(cfg.behaviour.seed, "latency", user, variant)
        ctx = Ctx(
            id=_id_for(flavour.name, _request_id(cfg, self.requests), self.requests),
            created=int(time.time()),
            model=str(body.get("model") or cfg.model),
            prompt_tokens=prompt_tokens,
            include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
        )
        lat = cfg.latency
        ttft_ms = float(directives.get("ttft_ms", lat.ttft_ms + lat.prefill_ms_per_token * prompt_tokens))
        decode_ms = float(directives.get("decode_ms", lat.decode_ms))
        jitter = 1.0 + lat.jitter * (2 * rng.random() - 1) if "ttft_ms" not in directives else 1.0
        steps = flavour.stream(gen, ctx) if body.get("stream") else []
        whole = b"" if body.get("stream") else flavour.whole(gen, ctx)
        n = completion_tokens(gen)
        spec = spec_steps(n, cfg.spec_draft, cfg.spec_accept, (cfg.behaviour.seed, user, variant))
        return _Plan(steps, whole, ttft_ms / 1e3 * jitter, decode_ms / 1e3 * jitter * speedup(n, spec), n, prompt,
                     prompt_tokens, spec)  # fmt: skip

    def _plan_hooked(
        self, body: dict[str, Any], directives: dict[str, str], occurrence: int, fault: str | None
    ) -> _Plan:
        """The flavour reads the request and shapes the answer; pacing stays the server's."""
        cfg, lat = self.config, self.config.latency
        temperature = body.get("temperature")
        variant = (body.get("seed"), occurrence if temperature not in (None, 0, 0.0) else 0)
        jitter = 1.0 + lat.jitter * (2 * _rng(cfg.behaviour.seed, "latency", self.requests).random() - 1)

        def latency(prompt_tokens: int) -> tuple[float, float]:
            if lat.burst:
                return 0.0, 0.0
            if "ttft_ms" in directives:
                return float(directives["ttft_ms"]) / 1000.0, float(directives.get("decode_ms", lat.decode_ms)) / 1000.0
            ttft_ms = lat.ttft_ms + lat.prefill_ms_per_token * prompt_tokens
            return ttft_ms / 1000.0 * jitter, float(directives.get("decode_ms", lat.decode_ms)) / 1000.0 * jitter

        call = ChatCall(
            body=body,
            behaviour=cfg.behaviour,
            key=self.key,
            directives=directives,
            variant=variant,
            model=cfg.model,
            n_ctx=cfg.max_model_len,
            thinking_opened=cfg.thinking_opened,
            ignore_constraints=cfg.ignore_constraints,
            overflow=fault == "context",
            request_id=hashlib.sha256(f"{cfg.behaviour.seed}|{self.requests}".encode()).hexdigest()[:32],
            created=int(time.time()),
            latency=latency,
            state=self._state,
        )
        try:
            planned = self.flavour.hooks.plan(call)  # type: ignore[union-attr]
        except RequestRejected as exc:
            raise _Reply(exc.status, str(exc), kind=exc.kind, extra=exc.extra) from None
        prompt = "\n".join(str(m.get("content", "")) for m in body["messages"] if isinstance(m, dict))
        return _Plan(planned.steps, planned.whole, planned.ttft_s, planned.decode_s, planned.tokens, prompt)

    async def _admitted(self) -> contextlib.AbstractAsyncContextManager[Any]:
        return self._slots if self._slots is not None else contextlib.nullcontext()

    def _interval(self, plan: _Plan) -> float:
        return plan.decode_s * (1 + self.config.latency.batch_slowdown * max(self.in_flight - 1, 0))

    @contextlib.asynccontextmanager
    async def _running(self, plan: _Plan, received: float) -> AsyncIterator[tuple[float, list[int]]]:
        """Wait for a slot (the waiting gauge), then run (the running gauge, KV-cache use) until the body ends.
        Yields when prefill starts (queueing delays the first token) and a list that the pacing loop adds the
        tokens it sent to; the server's counters and log are updated at the end."""
        queued = time.perf_counter()
        self.observed.waiting += 1
        admitted = False
        try:
            async with await self._admitted():
                self.observed.waiting -= 1
                admitted = True
                start = received + (time.perf_counter() - queued)
                self.in_flight += 1
                held = self.observed.admitted(plan.prompt, plan.prompt_tokens, plan.tokens)
                sent = [0]
                try:
                    yield start, sent
                finally:
                    self.in_flight -= 1
                    self.observed.add("generation_tokens", -sent[0])  # counted live already; the total is exact
                    first = start + plan.ttft_s
                    record = log_record(received, plan.prompt_tokens, plan.tokens, first, time.perf_counter())
                    self.observed.finished(held, plan.tokens, plan.spec, record)
        finally:
            if not admitted:
                self.observed.waiting -= 1

    async def _whole(self, plan: _Plan, writer: asyncio.StreamWriter, received: float, fault: str | None) -> bool:
        async with self._running(plan, received) as (start, _):
            if not self.config.latency.burst:
                await _sleep_until(start + plan.ttft_s, precise=True)
                for _ in range(max(plan.tokens - 1, 0)):
                    await asyncio.sleep(self._interval(plan))
        if fault in ("drop", "malformed", "stall"):
            half = plan.whole[: len(plan.whole) // 2]
            if fault == "drop":
                head = _head(200, "application/json", {"Content-Length": str(len(plan.whole))})
                writer.write(head + half)
                await writer.drain()
                return False
            if fault == "stall":
                writer.write(_head(200, "application/json", {"Content-Length": str(len(plan.whole))}) + half)
                await writer.drain()
                await asyncio.sleep(self.config.stall_s)
                return False
            await _send_json(writer, 200, half)
            return True
        await _send_json(writer, 200, plan.whole)
        return True

    async def _stream(self, plan: _Plan, writer: asyncio.StreamWriter, received: float, fault: str | None) -> bool:
        frames: list[tuple[int, bytes | None]] = [(n, _frame(d) if d else None) for n, d in plan.steps]
        frames.append((0, b"0\r\n\r\n"))
        cut = max(2, len(frames) // 3)
        if fault == "malformed":
            frames.insert(cut, (0, _frame(b'data: {"id":"chatcmpl-broken","choices":[{"delta":{"content\n\n')))
        elif fault in ("drop", "stall"):
            frames = [*frames[:cut], (0, b"__" + fault.encode())]
        writer.write(_head(200, "text/event-stream", {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache"}))
        async with self._running(plan, received) as (start, sent):
            return await self._pace(frames, plan, writer, start, sent)

    async def _pace(
        self,
        frames: list[tuple[int, bytes | None]],
        plan: _Plan,
        writer: asyncio.StreamWriter,
        start: float,
        sent: list[int],
    ) -> bool:
        burst = self.config.latency.burst
        if burst:
            ready = [d for _, d in frames if d and not d.startswith(b"__")]
            writer.write(b"".join(ready))
            await writer.drain()
            return await _ending(frames[-1][1], writer, self.config.stall_s)
        started = False
        due = start + plan.ttft_s
        for tokens, data in frames:
            first = not started
            for _ in range(tokens):
                if started:
                    due += self._interval(plan)
                started = True
            if tokens:
                await _sleep_until(due, precise=first)
                sent[0] += tokens
                self.observed.add("generation_tokens", tokens)  # live, as an engine counts each step
            if data is None:
                continue
            if data.startswith(b"__"):
                return await _ending(data, writer, self.config.stall_s)
            writer.write(data)
            await writer.drain()
        return True


async def _ending(last: bytes | None, writer: asyncio.StreamWriter, stall_s: float) -> bool:
    """Act out a stream's fault ending; True when the stream ended normally."""
    if last == b"__drop":
        await writer.drain()
        writer.transport.abort()
        return False
    if last == b"__stall":
        await asyncio.sleep(stall_s)
        return False
    return True


def _request_id(cfg: SimConfig, n: int) -> str:
    return hashlib.sha256(f"{cfg.behaviour.seed}|{n}".encode()).hexdigest()[:32]


def _at_length(cfg: SimConfig, prompt_tokens: int) -> Behaviour:
    """The model's behaviour at this prompt length: long prompts answered worse, by the configured decay."""
    if not cfg.accuracy_half_tokens:
        return cfg.behaviour
    accuracy = decay(cfg.behaviour.accuracy, prompt_tokens, cfg.accuracy_half_tokens)
    return dataclasses.replace(cfg.behaviour, accuracy=accuracy)


def _id_for(flavour: str, hex_id: str, n: int) -> str:
    if flavour == "sglang":
        return hex_id
    if flavour == "ollama":
        return f"chatcmpl-{n % 999}"
    if flavour == "deepseek":
        return f"{hex_id[:8]}-{hex_id[8:12]}-{hex_id[12:16]}-{hex_id[16:20]}-{hex_id[20:32]}"
    if flavour == "openrouter":
        return f"gen-{1760000000 + n}-{hex_id[:20]}"
    return f"chatcmpl-{hex_id}"


def _directives(header: str) -> dict[str, str]:
    out = {}
    for part in header.split(","):
        name, sep, value = part.strip().partition("=")
        if sep:
            out[name.strip()] = value.strip()
    return out


async def _sleep_until(when: float, precise: bool = False) -> None:
    """Sleep until `when`. The event loop's timers can wake up to a millisecond late, so for the first
    token (where TTFT precision matters) sleep short and yield-spin the last two milliseconds."""
    margin = 0.002 if precise else 0.0
    delay = when - time.perf_counter() - margin
    if delay > 0:
        await asyncio.sleep(delay)
    while precise and time.perf_counter() < when:
        await asyncio.sleep(0)


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, target, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    body = await reader.readexactly(length) if length else b""
    return method, target, headers, body


def _head(status: int, kind: str, extra: dict[str, str]) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
        f"Content-Type: {kind}",
        "x-qualeval-simulated: true",
        *(f"{k}: {v}" for k, v in extra.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _frame(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


async def _send(
    writer: asyncio.StreamWriter, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None
) -> None:
    writer.write(_head(status, kind, {"Content-Length": str(len(body)), **(extra or {})}) + body)
    await writer.drain()


async def _send_json(
    writer: asyncio.StreamWriter, status: int, body: bytes, extra: dict[str, str] | None = None
) -> None:
    await _send(writer, status, body, "application/json", extra)


async def _send_stream(writer: asyncio.StreamWriter, frames: list[tuple[int, bytes]]) -> None:
    writer.write(_head(200, "text/event-stream", {"Transfer-Encoding": "chunked"}))
    writer.write(b"".join(f for _, f in frames))
    await writer.drain()


@contextlib.contextmanager
def running_server(config: SimConfig) -> Iterator[str]:
    """Run the server on a background thread with its own event loop; yields the base URL (…/v1)."""
    loop = asyncio.new_event_loop()
    server = SimServer(config)
    port = loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, name="qualeval-sim", daemon=True)
    thread.start()
    try:
        yield f"http://{config.host}:{port}/v1"
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        with contextlib.suppress(Exception):
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
        loop.close()
