"""The DeepSeek API: `reasoning_content`, usage on the finish chunk, `thinking: {"type": "disabled"}` as the
switch, and no structured-output parameters."""

from __future__ import annotations

from typing import Any

import orjson

from qualeval.sim.behaviour import PlannedReply
from qualeval.sim.flavours.common import counts, text, token_steps
from qualeval.sim.frames import DONE, Ctx, Step, sse

__all__ = ["FINGERPRINT", "response_id", "stream", "thinking", "whole"]

FINGERPRINT = "fp_ffc7281d48_prod0820_fp8_kvcache"


def response_id(hex_id: str, n: int) -> str:
    return f"{hex_id[:8]}-{hex_id[8:12]}-{hex_id[12:16]}-{hex_id[16:20]}-{hex_id[20:32]}"


def thinking(body: dict[str, Any]) -> bool:
    switch = body.get("thinking")
    return not (isinstance(switch, dict) and switch.get("type") == "disabled")


def _usage(gen: PlannedReply, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, reasoning = counts(gen, ctx)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
        "prompt_cache_hit_tokens": 0,
        "prompt_cache_miss_tokens": prompt,
    }


def whole(gen: PlannedReply, ctx: Ctx) -> bytes:
    msg = {"role": "assistant", "content": text(gen.answer), "reasoning_content": text(gen.reasoning) or None}
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": gen.finish}],
        "usage": _usage(gen, ctx),
        "system_fingerprint": FINGERPRINT,
    }
    return orjson.dumps(body)


def _chunk(ctx: Ctx, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    return sse(
        {
            "id": ctx.id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }
    )


def stream(gen: PlannedReply, ctx: Ctx) -> list[Step]:
    steps: list[Step] = [(1, _chunk(ctx, {"role": "assistant", "content": None, "reasoning_content": ""}))]
    steps += token_steps(
        gen,
        lambda token, _: _chunk(ctx, {"content": None, "reasoning_content": token}),
        lambda token, _: _chunk(ctx, {"content": token, "reasoning_content": None}),
        first_tick=0,
    )
    # finish_reason and usage ride on the same last chunk
    last = _chunk(ctx, {"content": "", "reasoning_content": None}, gen.finish, usage=_usage(gen, ctx))
    steps.append((1 if gen.finish == "stop" else 0, last))
    steps.append(DONE)
    return steps
