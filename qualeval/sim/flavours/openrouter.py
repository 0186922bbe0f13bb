"""OpenRouter: `reasoning` plus `reasoning_details` carrying the same text, SSE comments while it waits, and
the finish repeated on the usage chunk."""

from __future__ import annotations

from typing import Any

import orjson

from qualeval.sim.behaviour import PlannedReply
from qualeval.sim.flavours.common import counts, plain_usage, text, token_steps
from qualeval.sim.frames import DONE, Ctx, Step, sse

__all__ = ["response_id", "stream", "whole"]


def response_id(hex_id: str, n: int) -> str:
    return f"gen-{1760000000 + n}-{hex_id[:20]}"


def _native(finish: str) -> str:
    return "end_turn" if finish == "stop" else "max_tokens"


def _details(reasoning: str) -> list[dict[str, Any]]:
    return [{"type": "reasoning.text", "text": reasoning, "format": "anthropic-claude-v1", "index": 0}]


def _usage(gen: PlannedReply, ctx: Ctx) -> dict[str, Any]:
    return {**plain_usage(gen, ctx), "completion_tokens_details": {"reasoning_tokens": counts(gen, ctx)[2]}}


def whole(gen: PlannedReply, ctx: Ctx) -> bytes:
    reasoning = text(gen.reasoning) or None
    msg = {
        "role": "assistant",
        "content": text(gen.answer) or None,
        "refusal": None,
        "reasoning": reasoning,
        "reasoning_details": _details(reasoning) if reasoning else [],
    }
    choice = {
        "index": 0,
        "logprobs": None,
        "finish_reason": gen.finish,
        "native_finish_reason": _native(gen.finish),
        "message": msg,
    }
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "provider": "Simulated",
        "system_fingerprint": None,
        "choices": [choice],
        "usage": _usage(gen, ctx),
    }
    return b"\n         \n\n         \n" + orjson.dumps(body)  # keep-alive padding before the JSON


def _chunk(ctx: Ctx, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    choice = {
        "index": 0,
        "delta": {"content": "", "role": "assistant", **delta},
        "finish_reason": finish,
        "native_finish_reason": None if finish is None else _native(finish),
    }
    head = {"id": ctx.id, "object": "chat.completion.chunk", "created": ctx.created, "model": ctx.model}
    return sse({**head, "provider": "Simulated", "choices": [choice], **extra})


def stream(gen: PlannedReply, ctx: Ctx) -> list[Step]:
    steps: list[Step] = [(0, b": OPENROUTER PROCESSING\n\n")]
    steps += token_steps(
        gen,
        lambda token, _: _chunk(ctx, {"reasoning": token, "reasoning_details": _details(token)}),
        lambda token, _: _chunk(ctx, {"content": token}),
    )
    steps.append((1 if gen.finish == "stop" else 0, _chunk(ctx, {}, gen.finish)))
    steps.append((0, _chunk(ctx, {}, gen.finish, usage=_usage(gen, ctx))))  # the finish is repeated, with usage
    steps.append(DONE)
    return steps
