"""Wire formats of real servers, reproduced field for field (see shared docs: wire-formats.md).

A stream is a list of steps `(tokens, data)`: the server spends `tokens` decode steps, then sends `data`
(None: the tokens produced no chunk, like vLLM's dropped `<think>`/`</think>` deltas or OpenAI's hidden
reasoning).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from qualeval.sim import llamacpp, llamacpp_server
from qualeval.sim.behaviour import Constraint, Generation
from qualeval.sim.frames import DONE as _DONE
from qualeval.sim.frames import Ctx, RequestRejected, ServerHooks, Step
from qualeval.sim.frames import sse as _sse

__all__ = ["FLAVOURS", "Ctx", "Flavour", "RequestRejected", "completion_tokens", "read_constraint", "read_thinking"]


@dataclass(frozen=True, slots=True)
class Flavour:
    name: str
    description: str
    whole: Callable[[Generation, Ctx], bytes]
    stream: Callable[[Generation, Ctx], list[Step]]
    constraints: frozenset[str]
    """Request parameters this server applies: response_format, structured_outputs, guided, regex,
    json_schema."""
    thinking_switch: str = "template"  # template | effort | deepseek | openai | none
    reasoning_aware: bool = True
    """Grammar applies after the reasoning (a reasoning parser is on); False: from the first token."""
    reasoning: bool = True
    strict_response_format: bool = False
    known_params: frozenset[str] | None = None
    """When set, any other top-level request key is a 400, as OpenAI's API answers."""
    hooks: ServerHooks | None = None
    """The server reads requests and answers its other routes its own way (llama.cpp)."""


def _text(tokens: list[str]) -> str:
    return "".join(tokens)


def completion_tokens(gen: Generation) -> int:
    """Reasoning, the closing marker when the reasoning closed, and the answer."""
    return len(gen.reasoning) + len(gen.answer) + (1 if gen.reasoning and gen.closed else 0)


def _counts(gen: Generation, ctx: Ctx) -> tuple[int, int, int]:
    return ctx.prompt_tokens, completion_tokens(gen), len(gen.reasoning)


def _plain_usage(gen: Generation, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, _ = _counts(gen, ctx)
    return {"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion}


# --- vLLM, with a reasoning parser or without one -----------------------------------------------------

Piece = tuple[str, str]
"""("r", text) a reasoning delta, ("c", text) a content delta, ("drop", text) a token that yields no chunk."""


def _parsed(gen: Generation, stream: bool) -> list[Piece]:
    """A reasoning parser separates the thinking; the lone </think> token's delta is skipped."""
    pieces = [("r", t) for t in gen.reasoning]
    if gen.reasoning and gen.closed:
        pieces.append(("drop", "</think>"))
    return pieces + [("c", t) for t in gen.answer]


def _qwen3_leak(gen: Generation, stream: bool) -> list[Piece]:
    """vLLM's qwen3 parser <= 0.16 under a template that opens <think> needs both tags, so it separates
    nothing: the whole text keeps the literal </think>, the stream drops that token's chunk."""
    pieces = [("c", t) for t in gen.reasoning]
    if gen.reasoning and gen.closed:
        pieces.append(("drop" if stream else "c", "</think>"))
    return pieces + [("c", t) for t in gen.answer]


def _raw_tokens(gen: Generation, style: str) -> list[str]:
    """The model's raw output, markers included, as a server without a reasoning parser returns it."""
    out: list[str] = []
    if gen.reasoning:
        if style == "think":
            out.append("<think>")
        elif style == "harmony":
            out.append("<|channel|>analysis<|message|>")
        out += gen.reasoning
        if gen.closed:
            if style == "harmony":
                out += ["<|end|>", "<|start|>assistant<|channel|>final<|message|>"]
            else:
                out.append("</think>")
    elif style == "harmony" and gen.answer:
        out.append("<|channel|>final<|message|>")
    out += gen.answer
    if style == "harmony" and gen.finish == "stop" and gen.answer:
        out.append("<|return|>")
    return out


def _unparsed(style: str) -> Callable[[Generation, bool], list[Piece]]:
    def pieces(gen: Generation, stream: bool) -> list[Piece]:
        return [("c", t) for t in _raw_tokens(gen, style)]

    return pieces


def _usage_chunk(ctx: Ctx, usage: dict[str, Any]) -> bytes:
    return _sse(
        {
            "id": ctx.id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [],
            "usage": usage,
        }
    )


def _vllm(
    version: str, pieces_of: Callable[[Generation, bool], list[Piece]] = _parsed, parser: bool = True
) -> tuple[Callable[..., bytes], Callable[..., list[Step]]]:
    """vLLM's OpenAI server. version: "0.10" (`reasoning_content`), "0.13" (both fields, the deprecated one
    null on content deltas), "0.33" (`reasoning`). Non-stream bodies dump every field in class order; stream
    chunks keep only the keyword arguments the serving code passed (`exclude_unset`)."""
    both = version == "0.13"
    rfields = {"0.10": ("reasoning_content",), "0.13": ("reasoning", "reasoning_content"), "0.33": ("reasoning",)}[
        version
    ]
    counts_reasoning = version == "0.33" and parser  # completion_tokens_details since 0.28, parser only

    def usage(gen: Generation, ctx: Ctx, *, whole: bool) -> dict[str, Any]:
        out = _plain_usage(gen, ctx)
        if whole:
            out["prompt_tokens_details"] = None
        if counts_reasoning:
            out["completion_tokens_details"] = {"reasoning_tokens": _counts(gen, ctx)[2]}
        return out

    def message(gen: Generation) -> dict[str, Any]:
        pieces = pieces_of(gen, False)
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
        if version == "0.33":
            del msg["tool_calls"]  # >= 0.24 drops an empty tool_calls list
        for name in rfields:
            msg[name] = reasoning
        return msg

    def whole(gen: Generation, ctx: Ctx) -> bytes:
        choice: dict[str, Any] = {
            "index": 0,
            "message": message(gen),
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
            "usage": usage(gen, ctx, whole=True),
            "prompt_logprobs": None,
            "prompt_token_ids": None,
        }
        if version == "0.33":
            choice.update(routed_experts=None, weight_versions=None)
            body["prompt_text"] = None
        body["kv_transfer_params"] = None
        if version == "0.33":
            body.update(ec_transfer_params=None, metrics=None)
        return orjson.dumps(body)

    def chunk(delta: dict[str, Any], finish: str | None, ctx: Ctx) -> bytes:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        if finish is not None:
            choice["stop_reason"] = None
        choice["token_ids"] = None
        return _sse(
            {
                "id": ctx.id,
                "object": "chat.completion.chunk",
                "created": ctx.created,
                "model": ctx.model,
                "choices": [choice],
            }
        )

    def role_chunk(ctx: Ctx) -> bytes:
        delta: dict[str, Any] = {"role": "assistant", "content": ""}
        if both:
            delta["reasoning_content"] = None
        obj: dict[str, Any] = {
            "id": ctx.id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
        }
        if version != "0.10":
            obj["prompt_token_ids"] = None
        if version == "0.33":
            obj["prompt_text"] = None
        return _sse(obj)

    def content_delta(text: str) -> dict[str, Any]:
        return {"content": text, "reasoning_content": None} if both else {"content": text}

    def stream(gen: Generation, ctx: Ctx) -> list[Step]:
        pieces = pieces_of(gen, True)
        steps: list[Step] = [(1, role_chunk(ctx))]  # sent once the first token is ready
        for i, (kind, text) in enumerate(pieces):
            spent = 0 if i == 0 else 1
            finish = "length" if i == len(pieces) - 1 and gen.finish == "length" else None
            if kind == "drop":
                steps.append((spent, chunk(content_delta(""), finish, ctx) if finish else None))
            elif kind == "r":
                steps.append((spent, chunk({name: text for name in rfields}, finish, ctx)))
            else:
                steps.append((spent, chunk(content_delta(text), finish, ctx)))
        if gen.finish != "length" or not pieces:
            # the EOS token decodes to "": the finish rides on an empty content delta
            steps.append((1 if pieces else 0, chunk(content_delta(""), gen.finish, ctx)))
        if ctx.include_usage:
            steps.append((0, _usage_chunk(ctx, usage(gen, ctx, whole=False))))
        steps.append(_DONE)
        return steps

    return whole, stream


# --- SGLang (0.5.14 - 0.5.22: msgspec stream, top-level usage.reasoning_tokens) -----------------------


def _sglang_usage(gen: Generation, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, reasoning = _counts(gen, ctx)
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "reasoning_tokens": reasoning,
    }


def _sglang_whole(gen: Generation, ctx: Ctx) -> bytes:
    # the non-stream parser strips surrounding whitespace of both parts
    content = _text(gen.answer).strip() or None
    reasoning = _text(gen.reasoning).strip() or None
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "reasoning_content": reasoning,
                    "tool_calls": None,
                },
                "logprobs": None,
                "finish_reason": gen.finish,
                "matched_stop": 151645 if gen.finish == "stop" else None,
            }
        ],
        "usage": _sglang_usage(gen, ctx),
        "metadata": {"weight_version": "default"},
    }
    return orjson.dumps(body)


def _sglang_stream(gen: Generation, ctx: Ctx) -> list[Step]:
    def chunk(delta: dict[str, Any], finish: str | None = None, matched: int | None = None) -> bytes:
        return _sse(
            {
                "id": ctx.id,
                "object": "chat.completion.chunk",
                "created": ctx.created,
                "model": ctx.model,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish, "matched_stop": matched}
                ],
            }
        )

    steps: list[Step] = [(1, chunk({"reasoning_content": None, "role": "assistant", "content": ""}))]
    first = True
    for token in gen.reasoning:
        steps.append((0 if first else 1, chunk({"reasoning_content": token})))
        first = False
    if gen.reasoning and gen.closed:
        steps.append((1, None))
    for token in gen.answer:
        steps.append((0 if first else 1, chunk({"reasoning_content": None, "content": token})))
        first = False
    steps.append(
        (
            1 if gen.finish == "stop" else 0,
            chunk({"reasoning_content": None}, gen.finish, 151645 if gen.finish == "stop" else None),
        )
    )
    if ctx.include_usage:
        steps.append((0, _usage_chunk(ctx, _sglang_usage(gen, ctx))))
    steps.append(_DONE)
    return steps


# --- Ollama (>= v0.32.6 stream format) ----------------------------------------------------------------


def _ollama_usage(gen: Generation, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, _ = _counts(gen, ctx)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _ollama_whole(gen: Generation, ctx: Ctx) -> bytes:
    msg: dict[str, Any] = {"role": "assistant", "content": _text(gen.answer).strip()}
    reasoning = _text(gen.reasoning).strip()
    if reasoning:
        msg["reasoning"] = reasoning
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": msg, "finish_reason": gen.finish}],
        "usage": _ollama_usage(gen, ctx),
    }
    return orjson.dumps(body) + b"\n"  # json.NewEncoder().Encode ends with a newline


def _ollama_stream(gen: Generation, ctx: Ctx) -> list[Step]:
    def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return _sse(
            {
                "id": ctx.id,
                "object": "chat.completion.chunk",
                "created": ctx.created,
                "model": ctx.model,
                "system_fingerprint": "fp_ollama",
                "choices": choices,
                **extra,
            }
        )

    steps: list[Step] = []
    first = True
    for token in gen.reasoning:
        d: dict[str, Any] = {"role": "assistant"} if first else {}
        d.update(content="", reasoning=token)
        steps.append((1, chunk([{"index": 0, "delta": d, "finish_reason": None}])))
        first = False
    if gen.reasoning and gen.closed:
        steps.append((1, None))
    for token in gen.answer:
        d = {"role": "assistant"} if first else {}
        d["content"] = token
        steps.append((1, chunk([{"index": 0, "delta": d, "finish_reason": None}])))
        first = False
    steps.append((1 if gen.finish == "stop" else 0, chunk([{"index": 0, "delta": {}, "finish_reason": gen.finish}])))
    if ctx.include_usage:
        steps.append((0, chunk([], usage=_ollama_usage(gen, ctx))))
    steps.append(_DONE)
    return steps


# --- DeepSeek API -------------------------------------------------------------------------------------

DEEPSEEK_FINGERPRINT = "fp_ffc7281d48_prod0820_fp8_kvcache"


def _deepseek_usage(gen: Generation, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, reasoning = _counts(gen, ctx)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
        "prompt_cache_hit_tokens": 0,
        "prompt_cache_miss_tokens": prompt,
    }


def _deepseek_whole(gen: Generation, ctx: Ctx) -> bytes:
    msg = {"role": "assistant", "content": _text(gen.answer), "reasoning_content": _text(gen.reasoning) or None}
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [{"index": 0, "message": msg, "logprobs": None, "finish_reason": gen.finish}],
        "usage": _deepseek_usage(gen, ctx),
        "system_fingerprint": DEEPSEEK_FINGERPRINT,
    }
    return orjson.dumps(body)


def _deepseek_stream(gen: Generation, ctx: Ctx) -> list[Step]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return _sse(
            {
                "id": ctx.id,
                "object": "chat.completion.chunk",
                "created": ctx.created,
                "model": ctx.model,
                "system_fingerprint": DEEPSEEK_FINGERPRINT,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                **extra,
            }
        )

    steps: list[Step] = [(1, chunk({"role": "assistant", "content": None, "reasoning_content": ""}))]
    first = True
    for token in gen.reasoning:
        steps.append((0 if first else 1, chunk({"content": None, "reasoning_content": token})))
        first = False
    if gen.reasoning and gen.closed:
        steps.append((1, None))
    for token in gen.answer:
        steps.append((0 if first else 1, chunk({"content": token, "reasoning_content": None})))
        first = False
    # finish_reason and usage ride on the same last chunk
    steps.append(
        (
            1 if gen.finish == "stop" else 0,
            chunk({"content": "", "reasoning_content": None}, gen.finish, usage=_deepseek_usage(gen, ctx)),
        )
    )
    steps.append(_DONE)
    return steps


# --- OpenAI: reasoning text is never returned, only its token count ----------------------------------


def _openai_usage(gen: Generation, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, reasoning = _counts(gen, ctx)
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


def _openai_whole(gen: Generation, ctx: Ctx) -> bytes:
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": _text(gen.answer), "refusal": None, "annotations": []},
                "finish_reason": gen.finish,
            }
        ],
        "usage": _openai_usage(gen, ctx),
        "service_tier": "default",
        "system_fingerprint": None,
    }
    return orjson.dumps(body)


def _openai_stream(gen: Generation, ctx: Ctx) -> list[Step]:
    counter = iter(range(1 << 30))

    def chunk(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
        pad = "abcdefghijKLMNOP"[: 6 + next(counter) % 8]  # the `obfuscation` padding varies in length
        return _sse(
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

    steps: list[Step] = [
        (
            1,
            chunk(
                [{"index": 0, "delta": {"role": "assistant", "content": "", "refusal": None}, "finish_reason": None}]
            ),
        )
    ]
    hidden = len(gen.reasoning) + (1 if gen.reasoning and gen.closed else 0)
    if hidden:
        steps.append((hidden - 1, None))  # the thinking takes time and sends nothing
    for token in gen.answer:
        steps.append((1, chunk([{"index": 0, "delta": {"content": token}, "finish_reason": None}])))
    steps.append((1 if gen.finish == "stop" else 0, chunk([{"index": 0, "delta": {}, "finish_reason": gen.finish}])))
    if ctx.include_usage:
        steps.append((0, chunk([], _openai_usage(gen, ctx))))
    steps.append(_DONE)
    return steps


# --- OpenRouter: `reasoning` plus `reasoning_details` carrying the same text --------------------------


def _openrouter_whole(gen: Generation, ctx: Ctx) -> bytes:
    reasoning = _text(gen.reasoning) or None
    details = (
        [{"type": "reasoning.text", "text": reasoning, "format": "anthropic-claude-v1", "index": 0}]
        if reasoning
        else []
    )
    msg = {
        "role": "assistant",
        "content": _text(gen.answer) or None,
        "refusal": None,
        "reasoning": reasoning,
        "reasoning_details": details,
    }
    body = {
        "id": ctx.id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "provider": "Simulated",
        "system_fingerprint": None,
        "choices": [
            {
                "index": 0,
                "logprobs": None,
                "finish_reason": gen.finish,
                "native_finish_reason": "end_turn" if gen.finish == "stop" else "max_tokens",
                "message": msg,
            }
        ],
        "usage": {**_plain_usage(gen, ctx), "completion_tokens_details": {"reasoning_tokens": _counts(gen, ctx)[2]}},
    }
    return b"\n         \n\n         \n" + orjson.dumps(body)  # keep-alive padding before the JSON


def _openrouter_stream(gen: Generation, ctx: Ctx) -> list[Step]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        native = None if finish is None else ("end_turn" if finish == "stop" else "max_tokens")
        return _sse(
            {
                "id": ctx.id,
                "object": "chat.completion.chunk",
                "created": ctx.created,
                "model": ctx.model,
                "provider": "Simulated",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"content": "", "role": "assistant", **delta},
                        "finish_reason": finish,
                        "native_finish_reason": native,
                    }
                ],
                **extra,
            }
        )

    steps: list[Step] = [(0, b": OPENROUTER PROCESSING\n\n")]
    for token in gen.reasoning:
        detail = [{"type": "reasoning.text", "text": token, "format": "anthropic-claude-v1", "index": 0}]
        steps.append((1, chunk({"reasoning": token, "reasoning_details": detail})))
    if gen.reasoning and gen.closed:
        steps.append((1, None))
    for token in gen.answer:
        steps.append((1, chunk({"content": token})))
    usage = {**_plain_usage(gen, ctx), "completion_tokens_details": {"reasoning_tokens": _counts(gen, ctx)[2]}}
    steps.append((1 if gen.finish == "stop" else 0, chunk({}, gen.finish)))
    steps.append((0, chunk({}, gen.finish, usage=usage)))  # the finish is repeated, with usage
    steps.append(_DONE)
    return steps


# --- structured outputs and the thinking switch, as each server reads them ---------------------------


def read_constraint(flavour: Flavour, body: dict[str, Any]) -> Constraint | None:
    """The constraint this server would apply to the request, or None. Raises RequestRejected."""
    if flavour.known_params is not None:
        unknown = sorted(set(body) - flavour.known_params)
        if unknown:
            raise RequestRejected(400, f"Unrecognized request argument supplied: {', '.join(unknown)}")
    accepted = flavour.constraints
    found: Constraint | None = None
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and "response_format" in accepted:
        kind = fmt.get("type")
        if kind == "json_schema":
            spec = fmt.get("json_schema") or {}
            found = Constraint("json", spec.get("schema") if isinstance(spec, dict) else None)
        elif kind == "json_object":
            found = Constraint("json", fmt.get("schema"))
        elif kind != "text" and flavour.strict_response_format:
            raise RequestRejected(400, 'response_format type must be one of "text" or "json_object"')
        elif kind not in ("text", None):
            raise RequestRejected(400, f"unsupported response_format type: {kind!r}")
    so = body.get("structured_outputs")
    if isinstance(so, dict) and "structured_outputs" in accepted:
        # the field is `choice`, singular; `choices` is accepted and constrains nothing
        if so.get("choice"):
            found = Constraint("choice", list(so["choice"]))
        elif so.get("regex"):
            found = Constraint("regex", so["regex"])
        elif so.get("json") is not None:
            schema = so["json"]
            found = Constraint("json", orjson.loads(schema) if isinstance(schema, str) else schema)
        elif so.get("json_object"):
            found = Constraint("json", None)
    if "guided" in accepted:
        if body.get("guided_choice"):
            found = Constraint("choice", list(body["guided_choice"]))
        elif body.get("guided_regex"):
            found = Constraint("regex", body["guided_regex"])
        elif body.get("guided_json") is not None:
            schema = body["guided_json"]
            found = Constraint("json", orjson.loads(schema) if isinstance(schema, str) else schema)
    if "regex" in accepted and isinstance(body.get("regex"), str):
        found = Constraint("regex", body["regex"])
    if "json_schema" in accepted and isinstance(body.get("json_schema"), dict):
        found = Constraint("json", body["json_schema"])
    return found


def read_thinking(flavour: Flavour, body: dict[str, Any]) -> bool:
    """Whether the model thinks on this request, as the server's switch decides."""
    if not flavour.reasoning:
        return False
    switch = flavour.thinking_switch
    if switch == "template":
        kwargs = body.get("chat_template_kwargs") or {}
        value = kwargs.get("enable_thinking", True) if isinstance(kwargs, dict) else True
        if flavour.strict_response_format and not isinstance(value, bool):
            raise RequestRejected(400, 'invalid type for "enable_thinking" (not a boolean)')
        return bool(value)  # the template tests truthiness, so the string "false" leaves thinking on
    if switch in ("effort", "openai"):
        effort = body.get("reasoning_effort")
        if switch == "effort" and effort not in (
            None,
            "none",
            "minimal",
            "low",
            "medium",
            "high",
            "max",
            "xhigh",
            "ultra",
        ):
            raise RequestRejected(400, "invalid reasoning value")
        return effort != "none"
    if switch == "deepseek":
        thinking = body.get("thinking")
        return not (isinstance(thinking, dict) and thinking.get("type") == "disabled")
    return True


def _flavour(
    name: str,
    description: str,
    pair: tuple[Callable[..., bytes], Callable[..., list[Step]]],
    constraints: set[str],
    **kw: Any,
) -> Flavour:
    return Flavour(name, description, pair[0], pair[1], frozenset(constraints), **kw)


_VLLM_NEW = {"response_format", "structured_outputs"}
_OPENAI_PARAMS = frozenset(
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
_OPEN = {"response_format"}

FLAVOURS: dict[str, Flavour] = {
    f.name: f
    for f in [
        _flavour("vllm", "vLLM >= 0.16 (as 0.33): `reasoning`, usage reasoning_tokens", _vllm("0.33"), _VLLM_NEW),
        _flavour("vllm-0.13", "vLLM 0.11.1-0.15: `reasoning` and `reasoning_content` both", _vllm("0.13"), _VLLM_NEW),
        _flavour(
            "vllm-0.10",
            "vLLM <= 0.11.0: `reasoning_content`, guided_* parameters",
            _vllm("0.10"),
            {"response_format", "guided"},
        ),
        _flavour(
            "vllm-qwen3-leak",
            "vLLM 0.13 qwen3 parser with a template that opens <think>: leaks",
            _vllm("0.13", _qwen3_leak),
            _VLLM_NEW,
        ),
        _flavour(
            "sglang",
            "SGLang 0.5.14-0.5.22: `reasoning_content`, top-level usage.reasoning_tokens",
            (_sglang_whole, _sglang_stream),
            {"response_format", "regex"},
        ),
        _flavour(
            "llamacpp",
            "llama-server b11434: `reasoning_content`, `timings`, GBNF `grammar`, its own errors and routes",
            (llamacpp.whole, llamacpp.stream),
            {"response_format", "json_schema", "grammar"},
            strict_response_format=True,
            hooks=llamacpp_server.HOOKS,
        ),
        _flavour(
            "ollama",
            'Ollama >= v0.32.6: `reasoning`, content "" when truncated',
            (_ollama_whole, _ollama_stream),
            _OPEN,
            thinking_switch="effort",
            reasoning_aware=False,
        ),
        _flavour(
            "deepseek",
            "DeepSeek API: `reasoning_content`, usage on the finish chunk",
            (_deepseek_whole, _deepseek_stream),
            set(),
            thinking_switch="deepseek",
        ),
        _flavour(
            "openai",
            "OpenAI: no reasoning text, only usage reasoning_tokens",
            (_openai_whole, _openai_stream),
            _OPEN,
            thinking_switch="openai",
            known_params=_OPENAI_PARAMS,
        ),
        _flavour(
            "openrouter",
            "OpenRouter: `reasoning` + `reasoning_details`, SSE comments",
            (_openrouter_whole, _openrouter_stream),
            _OPEN,
            thinking_switch="none",
        ),
        _flavour(
            "inline-think",
            "no reasoning parser: <think>...</think> inside content",
            _vllm("0.33", _unparsed("think"), parser=False),
            _OPEN,
            reasoning_aware=False,
        ),
        _flavour(
            "think-close-only",
            "template opens <think>: content holds reasoning...</think>answer",
            _vllm("0.33", _unparsed("close-only"), parser=False),
            _OPEN,
            reasoning_aware=False,
        ),
        _flavour(
            "harmony",
            "gpt-oss Harmony channels inside content (no parser)",
            _vllm("0.33", _unparsed("harmony"), parser=False),
            _OPEN,
            reasoning_aware=False,
            thinking_switch="none",
        ),
        _flavour(
            "plain",
            "a non-reasoning model: content only",
            _vllm("0.33", _unparsed("plain"), parser=False),
            _OPEN,
            reasoning=False,
            reasoning_aware=False,
        ),
    ]
}
