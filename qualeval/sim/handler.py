"""The request handler: one connection's requests routed to the chat route, the models list and the extras,
and every refusal answered in the flavour's own error shape."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from typing import Any

import orjson

from qualeval.sim.config import has_key
from qualeval.sim.faults import choose, directives, empty_choices, strike_early
from qualeval.sim.frames import RequestRejected
from qualeval.sim.httpio import REASONS, read_request, send, send_json
from qualeval.sim.observe import metrics_text, tokenized
from qualeval.sim.pacing import send_stream, send_whole
from qualeval.sim.passback import require_reasoning_content
from qualeval.sim.planning import plan
from qualeval.sim.state import ServerState

__all__ = ["serve_connection"]

_log = logging.getLogger(__name__)

_CHAT = ("/v1/chat/completions", "/chat/completions")
_MODELS = ("/v1/models", "/models")
"""With and without the `/v1` prefix; only flavours whose server has both (`bare_routes`) answer the second."""


async def serve_connection(state: ServerState, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer requests on one keep-alive connection until the client closes it or a fault cuts it."""
    try:
        while True:
            request = await read_request(reader)
            if request is None or not await _dispatch(state, *request, writer):
                break
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        pass  # the client went away or sent something that is not HTTP: nothing to answer
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def _dispatch(
    state: ServerState, method: str, path: str, headers: dict[str, str], body: bytes, writer: asyncio.StreamWriter
) -> bool:
    """Answer one request; False when the connection must not carry on."""
    received = time.perf_counter()
    try:
        return await _route(state, method, path, headers, body, writer, received)
    except RequestRejected as refused:
        await send_json(writer, refused.status, _error_body(state, refused), refused.headers)
        return True


async def _route(
    state: ServerState,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes,
    writer: asyncio.StreamWriter,
    received: float,
) -> bool:
    config, hooks = state.config, state.flavour.hooks
    if config.api_key and headers.get("authorization") != f"Bearer {config.api_key}":
        raise RequestRejected(401, "Incorrect API key provided")
    route = path.split("?", 1)[0].rstrip("/")
    if await _extras(state, method, route, body, writer):
        return True
    answer = hooks.route(method, route, body, config) if hooks is not None else None
    if answer is not None:
        await send_json(writer, *answer)
        return True
    prefixed = state.flavour.bare_routes or route.startswith("/v1/")
    if route in _MODELS and prefixed:
        if method != "GET":
            raise RequestRejected(405, f"{method} not allowed on {route}")
        await send_json(writer, 200, _models(state))
        return True
    if route not in _CHAT or not prefixed:
        raise RequestRejected(404, f"no route {method} {route}")
    if method != "POST":
        raise RequestRejected(405, f"{method} not allowed on {route}")
    return await _chat(state, headers, body, writer, received)


def _error_body(state: ServerState, refused: RequestRejected) -> bytes:
    hooks = state.flavour.hooks
    if hooks is not None:
        return hooks.error(refused.status, str(refused), refused.kind, refused.extra)
    kind = REASONS.get(refused.status, "Error")
    return orjson.dumps({"error": {"message": str(refused), "type": kind, "param": None, "code": refused.status}})


async def _extras(state: ServerState, method: str, route: str, body: bytes, writer: asyncio.StreamWriter) -> bool:
    """`/metrics` (every flavour with a real counterpart that has it) and `/tokenize` (those without their
    own routes; llama.cpp answers its own). True when answered here."""
    metrics = state.flavour.metrics
    if metrics is None:
        return False
    if route == "/metrics" and method == "GET":
        text = metrics_text(metrics, state.observed, state.in_flight, state.config.model)
        await send(writer, 200, text, "text/plain; version=0.0.4; charset=utf-8")
        return True
    if route in ("/tokenize", "/v1/tokenize") and method == "POST" and state.flavour.hooks is None:
        answer = tokenized(body, state.config.max_model_len)
        if answer is None:
            raise RequestRejected(400, "give 'prompt' (a string) or 'messages' to tokenize")
        await send_json(writer, 200, orjson.dumps(answer))
        return True
    return False


def _models(state: ServerState) -> bytes:
    model = {
        "id": state.config.model,
        "object": "model",
        "created": 1760000000,
        "owned_by": "qualeval-simulated",  # how a client tells the reference server from a real one
        "flavour": state.flavour.name,
        "max_model_len": state.config.max_model_len,
        "answer_key": has_key(state.config),
    }
    return orjson.dumps({"object": "list", "data": [model]})


def _parse(state: ServerState, raw: bytes) -> dict[str, Any]:
    """The chat request body; raises RequestRejected."""
    if state.flavour.hooks is not None:
        return state.flavour.hooks.parse(raw)
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise RequestRejected(400, "request body is not valid JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
        raise RequestRejected(400, "'messages' must be a non-empty list")
    return body


def _log_unknown(count: int, question: str) -> None:
    """The first unknown question is said in full, then only the count at 10, 100, 1000...: a client that repeats
    one (a probe's greeting) or a key made for other questions would otherwise flood the log with a line a request,
    and the client counts each refusal itself (its header)."""
    if count == 1:
        _log.warning(
            "warning: question not in the answer key, answered with a refusal marked x-qualeval-sim: "
            "unknown-question (later ones are counted, the count said at 10, 100, ...): %r",
            question,
        )
    elif str(count).strip("0") == "1":
        _log.warning("warning: %d requests so far with a question not in the answer key", count)


async def _chat(
    state: ServerState, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter, received: float
) -> bool:
    body = _parse(state, raw)
    if state.config.require_reasoning_content:
        require_reasoning_content(body)
    asked = body.get("model")
    if asked not in (None, state.config.model) and not state.flavour.any_model:
        raise RequestRejected(404, f"The model `{asked}` does not exist.")
    state.requests += 1
    digest = hashlib.sha256(raw).digest()
    state.seen[digest] += 1
    occurrence = state.seen[digest]
    wanted = directives(headers.get("x-qualeval-sim", ""))
    fault = choose(state.config, wanted, digest, occurrence)
    if await strike_early(fault, state.config, wanted, writer):
        return True
    planned = plan(state, body, wanted, occurrence, fault)
    if planned.unknown:
        state.unknown += 1
        _log_unknown(state.unknown, " ".join(planned.prompt.split())[:100])
    if fault == "empty-choices":
        await empty_choices(writer, body)
        return True
    if body.get("stream"):
        return await send_stream(state, planned, writer, received, fault)
    return await send_whole(state, planned, writer, received, fault)
