"""Faults the reference server acts out: which one strikes a request, and how it breaks the response.

A fault is asked for by the `x-qualeval-sim` header (`fault=drop,fault_times=2`) or drawn at the configured
rates. Each is what a client meets in the wild: an error status, a proxy's HTML page, headers that take their
time, a body with no choices, a connection cut or stalled halfway, a malformed SSE line, a context overflow.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson

from qualeval.sim.behaviour import seeded
from qualeval.sim.config import EPISODE_FAULTS, TOOL_FAULTS, SimConfig
from qualeval.sim.frames import RequestRejected, Step
from qualeval.sim.httpio import END, chunk, head, send, send_json, send_stream

__all__ = ["choose", "cut_whole", "directives", "empty_choices", "ending", "framed", "strike_early"]

_BROKEN = b'data: {"id":"chatcmpl-broken","choices":[{"delta":{"content\n\n'


def directives(header: str) -> dict[str, str]:
    """`x-qualeval-sim: name=value,...` -> {name: value}."""
    out = {}
    for part in header.split(","):
        name, sep, value = part.strip().partition("=")
        if sep:
            out[name.strip()] = value.strip()
    return out


def choose(cfg: SimConfig, wanted: dict[str, str], digest: bytes, occurrence: int) -> str | None:
    """The fault for this arrival of the request (its body's digest, seen `occurrence` times), or None."""
    fault = wanted.get("fault") or _draw(cfg, digest, occurrence)
    if "fault" in wanted and occurrence > int(wanted.get("fault_times", 1 << 30)):
        return None  # fail only the first N attempts of this exact request
    return fault


def _draw(cfg: SimConfig, digest: bytes, occurrence: int) -> str | None:
    if not cfg.faults:
        return None
    # a function of the request and how often it was seen: reruns fail the same way, retries differ
    roll = seeded(cfg.behaviour.seed, "fault", digest.hex(), occurrence).random()
    edge = 0.0
    for name, rate in sorted(cfg.faults.items()):
        if name in TOOL_FAULTS or name in EPISODE_FAULTS:
            continue  # drawn per item when the answer is a call (qualeval.sim.toolreply), per episode's turn or step
        edge += rate
        if roll < edge:
            return name
    return None


async def strike_early(fault: str | None, cfg: SimConfig, wanted: dict[str, str], writer: asyncio.StreamWriter) -> bool:
    """Faults that strike before the model runs. True when the response is already sent; raises
    RequestRejected for an error status."""
    if fault in ("429", "500", "503"):
        headers = {"Retry-After": f"{cfg.retry_after:g}"} if fault == "429" else {}
        message = "Rate limit exceeded" if fault == "429" else "simulated server error"
        raise RequestRejected(int(fault), message, headers=headers)
    if fault == "html":
        await send(writer, 200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html; charset=utf-8")
        return True
    if fault == "slow-headers":
        await asyncio.sleep(float(wanted.get("delay", cfg.slow_headers_s)))
    return False


async def empty_choices(writer: asyncio.StreamWriter, body: dict[str, Any]) -> None:
    """A well-formed answer with no choices in it."""
    empty: dict[str, Any] = {
        "id": "chatcmpl-empty",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [],
    }
    if body.get("stream"):
        await send_stream(writer, [b"data: " + orjson.dumps(empty) + b"\n\n", b"data: [DONE]\n\n"])
    else:
        await send_json(writer, 200, orjson.dumps(empty))


async def cut_whole(writer: asyncio.StreamWriter, body: bytes, fault: str, stall_s: float) -> bool:
    """Half the body: malformed JSON (`malformed`), or short of its Content-Length before the connection is cut
    (`drop`) or goes quiet (`stall`). True when the connection may carry on."""
    half = body[: len(body) // 2]
    if fault == "malformed":
        await send_json(writer, 200, half)
        return True
    writer.write(head(200, "application/json", {"Content-Length": str(len(body))}) + half)
    await writer.drain()
    if fault == "stall":
        await asyncio.sleep(stall_s)
    return False


def framed(steps: list[Step], fault: str | None) -> tuple[list[Step], str | None]:
    """The stream's chunked frames, broken by the fault, and how the stream ends when it does not end well:
    "drop" or "stall" a third of the way in."""
    frames: list[Step] = [(n, chunk(d) if d else None) for n, d in steps]
    frames.append((0, END))
    cut = max(2, len(frames) // 3)
    if fault == "malformed":
        frames.insert(cut, (0, chunk(_BROKEN)))
    elif fault in ("drop", "stall"):
        return frames[:cut], fault
    return frames, None


async def ending(end: str | None, writer: asyncio.StreamWriter, stall_s: float) -> bool:
    """Act out a stream's fault ending; True when the stream ended normally."""
    if end == "drop":
        await writer.drain()
        writer.transport.abort()
        return False
    if end == "stall":
        await asyncio.sleep(stall_s)
        return False
    return True
