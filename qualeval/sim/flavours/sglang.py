"""SGLang 0.5.14 - 0.5.22: `reasoning_content`, a msgspec stream, top-level `usage.reasoning_tokens`, and its
top-level `regex` parameter."""

from __future__ import annotations

from typing import Any

import orjson

from qualeval.sim.behaviour import AskedConstraint, PlannedReply
from qualeval.sim.flavours.common import counts, text, token_steps, usage_chunk
from qualeval.sim.frames import DONE, Ctx, Step, sse
from qualeval.sim.observe import Metrics

__all__ = ["METRICS", "regex", "response_id", "stream", "whole"]

METRICS = Metrics(
    (
        ("running", "sglang:num_running_reqs", "gauge"),
        ("waiting", "sglang:num_queue_reqs", "gauge"),
        ("kv_usage", "sglang:token_usage", "gauge"),
        ("hit_rate", "sglang:cache_hit_rate", "gauge"),
        ("prompt_tokens", "sglang:prompt_tokens", "counter"),
        ("generation_tokens", "sglang:generation_tokens", "counter"),
        ("accept_length", "sglang:spec_accept_length", "gauge"),
    )
)
_EOS = 151645  # `matched_stop`: the id of the stop token the model ended on


def response_id(hex_id: str, n: int) -> str:
    return hex_id


def regex(body: dict[str, Any]) -> AskedConstraint | None:
    """SGLang's top-level `regex`."""
    return AskedConstraint("regex", body["regex"]) if isinstance(body.get("regex"), str) else None


def _usage(gen: PlannedReply, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, reasoning = counts(gen, ctx)
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "reasoning_tokens": reasoning,
    }


def whole(gen: PlannedReply, ctx: Ctx) -> bytes:
    # the non-stream parser strips surrounding whitespace of both parts
    content = text(gen.answer).strip() or None
    reasoning = text(gen.reasoning).strip() or None
    message = {"role": "assistant", "content": content, "reasoning_content": reasoning, "tool_calls": None}
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": gen.finish,
                "matched_stop": _EOS if gen.finish == "stop" else None,
            }
        ],
        "usage": _usage(gen, ctx),
        "metadata": {"weight_version": "default"},
    }
    return orjson.dumps(body)


def _chunk(ctx: Ctx, delta: dict[str, Any], finish: str | None = None, matched: int | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish, "matched_stop": matched}
    return sse(
        {
            "id": ctx.id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [choice],
        }
    )


def stream(gen: PlannedReply, ctx: Ctx) -> list[Step]:
    steps: list[Step] = [(1, _chunk(ctx, {"reasoning_content": None, "role": "assistant", "content": ""}))]
    steps += token_steps(
        gen,
        lambda token, _: _chunk(ctx, {"reasoning_content": token}),
        lambda token, _: _chunk(ctx, {"reasoning_content": None, "content": token}),
        first_tick=0,
    )
    stop = gen.finish == "stop"
    steps.append((1 if stop else 0, _chunk(ctx, {"reasoning_content": None}, gen.finish, _EOS if stop else None)))
    if ctx.include_usage:
        steps.append((0, usage_chunk(ctx, _usage(gen, ctx))))
    steps.append(DONE)
    return steps
