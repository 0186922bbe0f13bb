"""OpenAI's API: the reasoning text is never returned, only its token count; unknown parameters are a 400."""

from __future__ import annotations

from itertools import count
from typing import Any

import orjson

from qualeval.sim.behaviour import PlannedReply
from qualeval.sim.flavours.common import counts, text
from qualeval.sim.frames import DONE, Ctx, Step, sse

__all__ = ["PARAMS", "stream", "thinking", "whole"]

PARAMS = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "stream",
        "stream_options",
        "stop",
        "response_format",
        "reasoning_effort",
        "n",
        "user",
        "logprobs",
        "top_logprobs",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "metadata",
        "store",
        "service_tier",
        "prediction",
        "modalities",
        "audio",
        "verbosity",
    }
)
"""The top-level request keys the API knows."""


def thinking(body: dict[str, Any]) -> bool:
    return body.get("reasoning_effort") != "none"


def _usage(gen: PlannedReply, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, reasoning = counts(gen, ctx)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def whole(gen: PlannedReply, ctx: Ctx) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": text(gen.answer), "refusal": None, "annotations": []}
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [{"index": 0, "message": message, "finish_reason": gen.finish}],
        "usage": _usage(gen, ctx),
        "service_tier": "default",
        "system_fingerprint": None,
    }
    return orjson.dumps(body)


def _chunk(ctx: Ctx, n: int, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
    pad = "abcdefghijKLMNOP"[: 6 + n % 8]  # the `obfuscation` padding varies in length
    return sse(
        {
            "id": ctx.id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "service_tier": "default",
            "system_fingerprint": None,
            "choices": choices,
            "usage": usage,
            "obfuscation": pad,
        }
    )


def stream(gen: PlannedReply, ctx: Ctx) -> list[Step]:
    n = count()
    role = {"role": "assistant", "content": "", "refusal": None}
    steps: list[Step] = [(1, _chunk(ctx, next(n), [{"index": 0, "delta": role, "finish_reason": None}]))]
    hidden = len(gen.reasoning) + (1 if gen.reasoning and gen.closed else 0)
    if hidden:
        steps.append((hidden - 1, None))  # the thinking takes time and sends nothing
    for token in gen.answer:
        steps.append((1, _chunk(ctx, next(n), [{"index": 0, "delta": {"content": token}, "finish_reason": None}])))
    finish = [{"index": 0, "delta": {}, "finish_reason": gen.finish}]
    steps.append((1 if gen.finish == "stop" else 0, _chunk(ctx, next(n), finish)))
    if ctx.include_usage:
        steps.append((0, _chunk(ctx, next(n), [], _usage(gen, ctx))))
    steps.append(DONE)
    return steps
