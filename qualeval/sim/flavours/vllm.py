"""vLLM's OpenAI server, with a reasoning parser or without one, and its structured-output parameters.

Releases differ in the reasoning field: "0.10" (`reasoning_content`), "0.13" (both fields, the deprecated one
null on content deltas), "0.33" (`reasoning`). Non-stream bodies dump every field in class order; stream chunks
keep only the keyword arguments the serving code passed (`exclude_unset`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson

from qualeval.sim.behaviour import AskedConstraint, PlannedReply
from qualeval.sim.flavours.common import counts, plain_usage, schema_of, usage_chunk
from qualeval.sim.frames import DONE, Ctx, Step, sse
from qualeval.sim.observe import Metrics

__all__ = ["METRICS", "Piece", "guided", "parsed", "qwen3_leak", "structured_outputs", "wire"]

Piece = tuple[str, str]
"""("r", text) a reasoning delta, ("c", text) a content delta, ("drop", text) a token that yields no chunk."""
Pieces = Callable[[PlannedReply, bool], list[Piece]]
"""(generation, streamed) -> the deltas the server makes of it."""

METRICS = Metrics(
    (
        ("running", "vllm:num_requests_running", "gauge"),
        ("waiting", "vllm:num_requests_waiting", "gauge"),
        ("kv_usage", "vllm:kv_cache_usage_perc", "gauge"),
        ("prefix_queries", "vllm:prefix_cache_queries", "counter"),
        ("prefix_hits", "vllm:prefix_cache_hits", "counter"),
        ("preemptions", "vllm:num_preemptions", "counter"),
        ("prompt_tokens", "vllm:prompt_tokens", "counter"),
        ("generation_tokens", "vllm:generation_tokens", "counter"),
        ("requests", "vllm:request_success", "counter"),
        ("drafts", "vllm:spec_decode_num_drafts", "counter"),
        ("draft_tokens", "vllm:spec_decode_num_draft_tokens", "counter"),
        ("accepted_tokens", "vllm:spec_decode_num_accepted_tokens", "counter"),
    )
)
_FIELDS = {"0.10": ("reasoning_content",), "0.13": ("reasoning", "reasoning_content"), "0.33": ("reasoning",)}


def parsed(gen: PlannedReply, stream: bool) -> list[Piece]:
    """A reasoning parser separates the thinking; the lone </think> token's delta is skipped."""
    pieces = [("r", t) for t in gen.reasoning]
    if gen.reasoning and gen.closed:
        pieces.append(("drop", "</think>"))
    return pieces + [("c", t) for t in gen.answer]


def qwen3_leak(gen: PlannedReply, stream: bool) -> list[Piece]:
    """vLLM's qwen3 parser <= 0.16 under a template that opens <think> needs both tags, so it separates
    nothing: the whole text keeps the literal </think>, the stream drops that token's chunk."""
    pieces = [("c", t) for t in gen.reasoning]
    if gen.reasoning and gen.closed:
        pieces.append(("drop" if stream else "c", "</think>"))
    return pieces + [("c", t) for t in gen.answer]


@dataclass(frozen=True, slots=True)
class _Release:
    version: str
    pieces: Pieces
    parser: bool

    @property
    def both(self) -> bool:
        return self.version == "0.13"


def wire(
    version: str, pieces: Pieces = parsed, parser: bool = True
) -> tuple[Callable[[PlannedReply, Ctx], bytes], Callable[[PlannedReply, Ctx], list[Step]]]:
    """(whole, stream) of this vLLM release; `parser` False: no reasoning parser is on."""
    release = _Release(version, pieces, parser)
    return partial(_whole, release), partial(_stream, release)


def _usage(release: _Release, gen: PlannedReply, ctx: Ctx, *, whole: bool) -> dict[str, Any]:
    out = plain_usage(gen, ctx)
    if whole:
        out["prompt_tokens_details"] = None
    if release.version == "0.33" and release.parser:  # completion_tokens_details since 0.28, parser only
        out["completion_tokens_details"] = {"reasoning_tokens": counts(gen, ctx)[2]}
    return out


def _message(release: _Release, gen: PlannedReply) -> dict[str, Any]:
    pieces = release.pieces(gen, False)
    reasoning = "".join(t for k, t in pieces if k == "r") or None
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(t for k, t in pieces if k == "c") or None,
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
        "tool_calls": [],
    }
    if release.version == "0.33":
        del msg["tool_calls"]  # >= 0.24 drops an empty tool_calls list
    for name in _FIELDS[release.version]:
        msg[name] = reasoning
    return msg


def _whole(release: _Release, gen: PlannedReply, ctx: Ctx) -> bytes:
    newest = release.version == "0.33"
    choice: dict[str, Any] = {
        "index": 0,
        "message": _message(release, gen),
        "logprobs": None,
        "finish_reason": gen.finish,
        "stop_reason": None,
        "token_ids": None,
    }
    body: dict[str, Any] = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [choice],
        "service_tier": None,
        "system_fingerprint": None,
        "usage": _usage(release, gen, ctx, whole=True),
        "prompt_logprobs": None,
        "prompt_token_ids": None,
    }
    if newest:
        choice.update(routed_experts=None, weight_versions=None)
        body["prompt_text"] = None
    body["kv_transfer_params"] = None
    if newest:
        body.update(ec_transfer_params=None, metrics=None)
    return orjson.dumps(body)


def _chunk(delta: dict[str, Any], finish: str | None, ctx: Ctx) -> bytes:
    choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    if finish is not None:
        choice["stop_reason"] = None
    choice["token_ids"] = None
    head = {"id": ctx.id, "object": "chat.completion.chunk", "created": ctx.created, "model": ctx.model}
    return sse({**head, "choices": [choice]})


def _role_chunk(release: _Release, ctx: Ctx) -> bytes:
    delta: dict[str, Any] = {"role": "assistant", "content": ""}
    if release.both:
        delta["reasoning_content"] = None
    obj: dict[str, Any] = {
        "id": ctx.id,
        "object": "chat.completion.chunk",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
    }
    if release.version != "0.10":
        obj["prompt_token_ids"] = None
    if release.version == "0.33":
        obj["prompt_text"] = None
    return sse(obj)


def _content(release: _Release, text: str) -> dict[str, Any]:
    return {"content": text, "reasoning_content": None} if release.both else {"content": text}


def _stream(release: _Release, gen: PlannedReply, ctx: Ctx) -> list[Step]:
    pieces = release.pieces(gen, True)
    steps: list[Step] = [(1, _role_chunk(release, ctx))]  # sent once the first token is ready
    for i, (kind, text) in enumerate(pieces):
        spent = 0 if i == 0 else 1
        finish = "length" if i == len(pieces) - 1 and gen.finish == "length" else None
        if kind == "drop":
            steps.append((spent, _chunk(_content(release, ""), finish, ctx) if finish else None))
        elif kind == "r":
            steps.append((spent, _chunk({name: text for name in _FIELDS[release.version]}, finish, ctx)))
        else:
            steps.append((spent, _chunk(_content(release, text), finish, ctx)))
    if gen.finish != "length" or not pieces:
        # the EOS token decodes to "": the finish rides on an empty content delta
        steps.append((1 if pieces else 0, _chunk(_content(release, ""), gen.finish, ctx)))
    if ctx.include_usage:
        steps.append((0, usage_chunk(ctx, _usage(release, gen, ctx, whole=False))))
    steps.append(DONE)
    return steps


# --- structured outputs ---------------------------------------------------------------------------------


def structured_outputs(body: dict[str, Any]) -> AskedConstraint | None:
    """vLLM >= 0.11.1's `structured_outputs`."""
    so = body.get("structured_outputs")
    if not isinstance(so, dict):
        return None
    # the field is `choice`, singular; `choices` is accepted and constrains nothing
    if so.get("choice"):
        return AskedConstraint("choice", list(so["choice"]))
    if so.get("regex"):
        return AskedConstraint("regex", so["regex"])
    if so.get("json") is not None:
        return AskedConstraint("json", schema_of(so["json"]))
    if so.get("json_object"):
        return AskedConstraint("json", None)
    return None


def guided(body: dict[str, Any]) -> AskedConstraint | None:
    """vLLM <= 0.11.0's `guided_choice`, `guided_regex`, `guided_json`."""
    if body.get("guided_choice"):
        return AskedConstraint("choice", list(body["guided_choice"]))
    if body.get("guided_regex"):
        return AskedConstraint("regex", body["guided_regex"])
    if body.get("guided_json") is not None:
        return AskedConstraint("json", schema_of(body["guided_json"]))
    return None
