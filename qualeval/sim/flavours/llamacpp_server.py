"""llama-server's request handling, as the reference server's `llamacpp` flavour: its request fields
(`grammar`, `json_schema`, `response_format`, `reasoning_format`, the thinking switches), its errors, its
prompt cache, and its other routes (`/health`, `/props`, `/tokenize`, `/apply-template`, `/v1/models`).
"""

from __future__ import annotations

import random
import zlib
from typing import Any

import orjson

from qualeval.sim.behaviour import AskedConstraint, PlannedReply, generate
from qualeval.sim.episodes import EpisodeAsk, answer_episode
from qualeval.sim.flavours.llamacpp import CLOSE, OPEN, Output, output_of, render, stream_of, tokenize, whole_of
from qualeval.sim.flavours.llamacpp_props import props
from qualeval.sim.frames import ChatCall, Ctx, Planned, RequestRejected, ServerHooks
from qualeval.sim.gbnf import Grammar, GrammarError, parse_grammar
from qualeval.sim.toolengine import LLAMACPP
from qualeval.sim.toolreply import ToolAsk, ToolReply, cut_to, tool_fault, tool_reply
from qualeval.sim.toolwire import tool_steps, tool_whole

__all__ = ["HOOKS"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    501: "not_supported_error",
    503: "unavailable_error",
}
_NOT_FOUND = orjson.dumps({"error": {"message": "File Not Found", "type": "not_found_error", "code": 404}})
_SLOTS = 4  # llama-server's default number of slots, each keeping its last prompt
_SAVED = 512
"""Prompts llama-server keeps in host memory once their slot moves on (`--cache-ram`, 8 GiB by default): a rerun of
the same prompts finds them there. A count rather than bytes, which depend on the model."""
_TOKEN_IDS = {"<|endoftext|>": 320, "<|im_start|>": 321, "<|im_end|>": 322, OPEN: 323, CLOSE: 324}


def error_body(status: int, message: str, kind: str | None, extra: dict[str, Any]) -> bytes:
    kind = kind or _ERROR_TYPES.get(status, "server_error")
    return orjson.dumps({"error": {"code": status, "message": message, "type": kind, **extra}})


def _json_type(value: Any) -> str:
    names = {bool: "boolean", str: "string", dict: "object", list: "array", type(None): "null"}
    return names.get(type(value), "number")


def parse_body(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise RequestRejected(
            400, f"[json.exception.parse_error.101] parse error at {where}: syntax error while parsing - {exc.msg}"
        ) from None
    if not isinstance(body, dict):
        raise RequestRejected(400, "the request body must be a JSON object")
    if "messages" not in body:
        raise RequestRejected(400, "'messages' is required")
    messages = body["messages"]
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise RequestRejected(400, "Expected 'messages' to be an array of objects")
    if not messages:
        raise RequestRejected(400, "'messages' must not be empty")
    return body


def read_thinking(body: dict[str, Any]) -> bool:
    """`chat_template_kwargs.enable_thinking` (a JSON boolean, or 400) or `reasoning_effort: "none"`."""
    thinking = True
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, dict) and "enable_thinking" in kwargs:
        value = kwargs["enable_thinking"]
        if not isinstance(value, bool):
            raise RequestRejected(
                400, f'invalid type for "enable_thinking" (expected boolean, got {_json_type(value)})'
            )
        thinking = value
    return thinking and body.get("reasoning_effort") != "none"


def read_shape(body: dict[str, Any]) -> tuple[AskedConstraint | None, Grammar | None]:
    """The JSON schema or GBNF grammar the output is held to; `response_format` silently beats `grammar`."""
    constraint = None
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        kind = fmt.get("type")
        if kind == "json_object":
            constraint = AskedConstraint("json", fmt.get("schema"))
        elif kind == "json_schema":
            spec = fmt.get("json_schema")
            constraint = AskedConstraint("json", spec.get("schema") if isinstance(spec, dict) else None)
        elif kind != "text":
            raise RequestRejected(400, f'response_format type must be one of "text" or "json_object", but got: {kind}')
    if constraint is None and isinstance(body.get("json_schema"), dict):
        if body.get("grammar"):
            raise RequestRejected(400, "Cannot use both json_schema and grammar")
        constraint = AskedConstraint("json", body["json_schema"])
    text = body.get("grammar")
    if constraint is not None or not isinstance(text, str) or not text.strip():
        return constraint, None
    try:
        return None, parse_grammar(text)
    except GrammarError:
        raise RequestRejected(400, "Failed to initialize samplers: failed to parse grammar") from None


def _budget(body: dict[str, Any], room: int) -> int:
    """Tokens the model may generate: max_tokens (-1: no limit), never past the end of the context."""
    value = body.get("max_completion_tokens", body.get("max_tokens", body.get("n_predict", -1)))
    if not isinstance(value, int) or isinstance(value, bool):
        raise RequestRejected(400, f"max_tokens must be an integer, got {_json_type(value)}")
    return room if value < 0 else min(value, room)


def _shared(a: list[str], b: list[str]) -> int:
    """Length of the common prefix of two token lists."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _cached(state: dict[str, Any], prompt: list[str], enabled: bool) -> int:
    """Prompt tokens the best-matching slot, or the host-memory prompt cache, still holds; the last prompt token is
    always evaluated again. The prompt a slot gives up goes to the host-memory cache, the oldest out first."""
    slots: list[list[str]] = state.setdefault("slots", [])
    saved: list[list[str]] = state.setdefault("saved", [])
    best, reuse = 0, None
    for place, held in enumerate(slots + saved):
        common = _shared(held, prompt)
        if common > best:
            best, reuse = common, place
    if reuse is not None and reuse >= len(slots):
        saved.pop(reuse - len(slots))  # loaded back into a slot
        reuse = None
    given_up = slots.pop(reuse if reuse is not None else 0) if reuse is not None or len(slots) >= _SLOTS else None
    if given_up is not None and _shared(given_up, prompt) < len(given_up):  # not a prefix of what replaces it
        saved.append(given_up)
        del saved[:-_SAVED]
    slots.append(prompt)
    return min(best, len(prompt) - 1) if enabled else 0


def _tokens(
    call: ChatCall, thinking: bool, shape: tuple[AskedConstraint | None, Grammar | None], prompt: str
) -> tuple[list[str], bool, ToolReply | None]:
    """What the model writes, before the budget cuts it, whether the question was not in the answer key, and the
    calls that follow the text when the request offers `tools` for a keyed call item."""
    body, directives = call.body, call.directives
    user = next((str(m.get("content")) for m in reversed(body["messages"]) if m.get("role") == "user"), prompt)
    constraint, grammar = shape
    if grammar is not None:
        rng = random.Random(zlib.crc32(f"{call.behaviour.seed}|{body.get('seed')}|{prompt}|{call.variant}".encode()))
        return tokenize(grammar.sample(rng)), False, None
    # `think=no`: the model skips the optional think block, as a random model under a JSON schema may
    thinks = thinking and directives.get("think") != "no"
    episode = _episode(call, thinks)
    if episode is not None:
        gen, reply = episode
    else:
        gen = generate(
            user,
            behaviour=call.behaviour,
            key=call.key,
            max_tokens=None,
            thinking=thinks,
            constraint=constraint,
            constraint_skips_thinking=False,
            directives=directives,
            variant=call.variant,
            conversation=prompt,
            tools=body.get("tools") or (),
        )
        reply = _calls(call, gen, user, prompt)
    opened = call.thinking_opened and thinking
    if opened and gen.reasoning and gen.reasoning[0] == "\n":
        gen.reasoning = gen.reasoning[1:]  # the template already wrote the newline after <think>
    tokens = list(output_of(gen, opened=opened).tokens)
    if directives.get("stop") == "no":
        # a model that never stops by itself (random weights): its text goes on until the budget ends
        head = [] if not thinks or opened else [OPEN]
        filler = (gen.reasoning if thinks else gen.answer) or tokenize(" and so on")
        tokens = head + filler * (call.n_ctx // len(filler) + 1)
        reply = None
    return tokens, gen.unknown, reply


_ENGINE = LLAMACPP
"""llama-server's tool-call wire (captured: tests/data/tool_captures/)."""


def _episode(call: ChatCall, thinking: bool) -> tuple[PlannedReply, ToolReply | None] | None:
    """The answer to a request of a keyed multi-turn episode, before the budget cuts it (None: not one)."""
    if call.episodes is None:
        return None
    ask = EpisodeAsk(
        seed=call.behaviour.seed,
        accuracy=call.behaviour.accuracy,
        faults=call.faults,
        directives=call.directives,
        reads_back="reasoning_content",  # as its prompt renders it (llamacpp.render)
        thinking=thinking,
        variant=call.variant,
        at_once=call.calls_at_once,
        reasoning_tokens=call.behaviour.reasoning_tokens,
    )
    tools = ToolAsk(
        fault=None,
        stream=bool(call.body.get("stream")),
        engine=_ENGINE,
        markup=call.tool_format,
        effort=call.body.get("reasoning_effort"),
        tool_choice=call.body.get("tool_choice"),
    )
    return answer_episode(call.episodes, call.body, ask, tools, max_tokens=None, request_id=call.request_id)


def _calls(call: ChatCall, gen: Any, user: str, prompt: str) -> ToolReply | None:
    if not call.body.get("tools") or call.key is None:
        return None
    entry = call.key.find(user, call.body["tools"]) or call.key.find(prompt, call.body["tools"])
    if entry is None or not entry.calls:
        return None
    ask = ToolAsk(
        fault=tool_fault(call.faults, call.behaviour.seed, call.directives, entry),
        stream=bool(call.body.get("stream")),
        engine=_ENGINE,
        markup=call.tool_format,
        effort=call.body.get("reasoning_effort"),
        tool_choice=call.body.get("tool_choice"),
    )
    return tool_reply(
        gen,
        entry,
        ask,
        accuracy=call.behaviour.accuracy,
        outcome=call.directives.get("outcome"),
        max_tokens=None,  # the budget is applied below, to the text and the calls together
        variant=call.variant,
        seed=call.behaviour.seed,
        request_id=call.request_id,
    )


def plan(call: ChatCall) -> Planned:
    body = call.body
    thinking = read_thinking(body)
    shape = (None, None) if call.ignore_constraints else read_shape(body)
    prompt = render(body["messages"], thinking=thinking, opened=call.thinking_opened)
    prompt_tokens = tokenize(prompt)
    n_prompt = len(prompt_tokens)
    if n_prompt > call.n_ctx or call.overflow:  # the prompt alone counts, not the completion budget
        raise RequestRejected(
            400,
            f"request ({n_prompt} tokens) exceeds the available context size ({call.n_ctx} tokens), try increasing it",
            "exceed_context_size_error",
            {"n_prompt_tokens": n_prompt, "n_ctx": call.n_ctx},
        )
    budget = _budget(body, call.n_ctx - n_prompt)
    tokens, unknown, reply = _tokens(call, thinking, shape, prompt)
    finish = "stop" if len(tokens) < budget else "length"  # stopping takes one more token
    if reply is not None and finish == "length":
        reply = None  # the budget ended inside the text: no call was written
    elif reply is not None:
        cut_to(reply, budget - len(tokens))
    prefix = prompt.rsplit("<|im_start|>assistant\n", 1)[1]
    out = Output(tuple(tokens[:budget]), finish, prefix, body.get("reasoning_format") != "none")
    cached = _cached(call.state, prompt_tokens, body.get("cache_prompt", True) is not False)
    ttft_s, decode_s = call.latency(n_prompt - cached)
    ctx = Ctx(
        id=f"chatcmpl-{call.request_id}",
        created=call.created,
        model=call.model,  # whatever name was asked for, the loaded model answers
        prompt_tokens=n_prompt,
        include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
        cached_tokens=cached,
        prompt_ms=ttft_s * 1000.0,
        decode_ms=decode_s * 1000.0,
    )
    extra = reply.tokens if reply is not None else 0
    if body.get("stream"):
        steps = stream_of(out, ctx)
        steps = tool_steps(steps, reply, _ENGINE) if reply is not None else steps
        return Planned(steps, b"", ttft_s, decode_s, out.completion_tokens + extra, unknown)
    whole = whole_of(out, ctx)
    whole = tool_whole(whole, reply, _ENGINE) if reply is not None else whole
    return Planned([], whole, ttft_s, decode_s, out.completion_tokens + extra, unknown)


# --- the other routes ---------------------------------------------------------------------------------


def _models(config: Any) -> dict[str, Any]:
    name = config.model
    details = {
        "parent_model": "",
        "format": "gguf",
        "family": "",
        "families": [""],
        "parameter_size": "",
        "quantization_level": "",
    }
    listed = {
        "name": name,
        "model": name,
        "modified_at": "",
        "size": "",
        "digest": "",
        "type": "model",
        "description": "",
        "tags": [""],
        "capabilities": ["completion"],
        "parameters": "",
        "details": details,
    }
    meta = {
        "vocab_type": 2,
        "n_vocab": 325,
        "n_ctx": config.max_model_len,
        "n_ctx_train": config.max_model_len,
        "n_embd": 64,
        "n_params": 0,
        "size": 0,
        "ftype": "simulated",
    }
    served = {
        "id": name,
        "aliases": [name],
        "tags": [],
        "object": "model",
        "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]},
        "created": 1760000000,
        "owned_by": "qualeval-simulated",
        "meta": meta,
    }
    return {"models": [listed], "object": "list", "data": [served]}


def _tokenized(raw: bytes) -> dict[str, Any]:
    body = parse_request(raw)
    text = str(body.get("content", ""))
    pieces = tokenize(text) if body.get("parse_special", True) else tokenize(text.replace("<", "<\u200b"))
    pieces = [p.replace("<\u200b", "<") for p in pieces]
    ids = [_TOKEN_IDS.get(p, zlib.crc32(p.encode()) % 320) for p in pieces]
    if body.get("with_pieces"):
        return {"tokens": [{"id": i, "piece": p} for i, p in zip(ids, pieces, strict=True)]}
    return {"tokens": ids}


def parse_request(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError:
        raise RequestRejected(400, "[json.exception.parse_error.101] parse error") from None
    if not isinstance(body, dict):
        raise RequestRejected(400, "the request body must be a JSON object")
    return body


def _applied(raw: bytes, config: Any) -> dict[str, Any]:
    body = parse_body(raw)
    return {"prompt": render(body["messages"], thinking=read_thinking(body), opened=config.thinking_opened)}


def route(method: str, path: str, raw: bytes, config: Any) -> tuple[int, bytes] | None:
    """Every route but chat completions: llama-server answers unknown paths and methods with a 404."""
    if (method, path) in (("POST", "/v1/chat/completions"), ("POST", "/chat/completions")):
        return None
    answers = {
        ("GET", "/health"): lambda: {"status": "ok"},
        ("GET", "/v1/health"): lambda: {"status": "ok"},
        ("GET", "/v1/models"): lambda: _models(config),
        ("GET", "/models"): lambda: _models(config),
        ("GET", "/props"): lambda: props(config),
        ("POST", "/tokenize"): lambda: _tokenized(raw),
        ("POST", "/apply-template"): lambda: _applied(raw, config),
    }
    answer = answers.get((method, path))
    if answer is None:
        return 404, _NOT_FOUND
    return 200, orjson.dumps(answer())


HOOKS = ServerHooks(route=route, error=error_body, parse=parse_body, plan=plan)
