"""Ollama >= v0.32.6's OpenAI-compatible route: `reasoning`, content "" when truncated, `reasoning_effort` as the
thinking switch."""

from __future__ import annotations

from typing import Any

import orjson

from qualeval.sim.behaviour import PlannedReply
from qualeval.sim.flavours.common import counts, text, token_steps
from qualeval.sim.frames import DONE, Ctx, RequestRejected, Step, sse

__all__ = ["response_id", "stream", "thinking", "whole"]

_EFFORTS = (None, "none", "minimal", "low", "medium", "high", "max", "xhigh", "ultra")


def response_id(hex_id: str, n: int) -> str:
    return f"chatcmpl-{n % 999}"


def thinking(body: dict[str, Any]) -> bool:
    """`reasoning_effort`: "none" turns thinking off; a value Ollama does not know is a 400."""
    effort = body.get("reasoning_effort")
    if effort not in _EFFORTS:
        raise RequestRejected(400, "invalid reasoning value")
    return effort != "none"


def _usage(gen: PlannedReply, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, _ = counts(gen, ctx)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def whole(gen: PlannedReply, ctx: Ctx) -> bytes:
    msg: dict[str, Any] = {"role": "assistant", "content": text(gen.answer).strip()}
    reasoning = text(gen.reasoning).strip()
    if reasoning:
        msg["reasoning"] = reasoning
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": msg, "finish_reason": gen.finish}],
        "usage": _usage(gen, ctx),
    }
    return orjson.dumps(body) + b"\n"  # json.NewEncoder().Encode ends with a newline


def _chunk(ctx: Ctx, choices: list[dict[str, Any]], **extra: Any) -> bytes:
    head = {"id": ctx.id, "object": "chat.completion.chunk", "created": ctx.created, "model": ctx.model}
    return sse({**head, "system_fingerprint": "fp_ollama", "choices": choices, **extra})


def _delta(ctx: Ctx, delta: dict[str, Any]) -> bytes:
    return _chunk(ctx, [{"index": 0, "delta": delta, "finish_reason": None}])


def stream(gen: PlannedReply, ctx: Ctx) -> list[Step]:
    role: dict[str, Any] = {"role": "assistant"}  # on the first chunk only
    steps = token_steps(
        gen,
        lambda token, first: _delta(ctx, {**(role if first else {}), "content": "", "reasoning": token}),
        lambda token, first: _delta(ctx, {**(role if first else {}), "content": token}),
    )
    finish = [{"index": 0, "delta": {}, "finish_reason": gen.finish}]
    steps.append((1 if gen.finish == "stop" else 0, _chunk(ctx, finish)))
    if ctx.include_usage:
        steps.append((0, _chunk(ctx, [], usage=_usage(gen, ctx))))
    steps.append(DONE)
    return steps
