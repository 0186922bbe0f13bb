"""Planning one chat answer: what the model writes, in the flavour's wire format, and how fast it comes.

The plan is made whole before the first byte is sent, so pacing and faults only decide when and how much of it
goes out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time
from dataclasses import dataclass
from typing import Any

from qualeval.sim.behaviour import AskedConstraint, Behaviour, generate, seeded, tokenize
from qualeval.sim.config import SimConfig
from qualeval.sim.flavours.common import completion_tokens, read_constraint, read_effort, read_thinking
from qualeval.sim.frames import ChatCall, Ctx, RequestRejected, ServerHooks, Step
from qualeval.sim.harms import load_factor
from qualeval.sim.observe import decay, force_length, spec_steps, speedup
from qualeval.sim.passback import taken_back
from qualeval.sim.state import ServerState
from qualeval.sim.toolreply import ToolAsk, ToolReply, tool_fault, tool_reply
from qualeval.sim.toolwire import tool_steps, tool_whole

__all__ = ["Plan", "plan"]


@dataclass(slots=True)
class Plan:
    steps: list[Step]
    """The stream, when one was asked for."""
    whole: bytes
    """The body, when no stream was asked for."""
    ttft_s: float
    decode_s: float
    tokens: int
    prompt: str = ""
    prompt_tokens: int = 0
    spec: tuple[int, int, int] | None = None
    """Speculative decoding's (drafts, draft tokens, accepted tokens)."""
    unknown: bool = False
    """The question was not in the answer key: the response says so in its headers (UNKNOWN_QUESTION)."""


def plan(
    state: ServerState, body: dict[str, Any], directives: dict[str, str], occurrence: int, fault: str | None
) -> Plan:
    """The answer to a chat request; raises RequestRejected as the server would refuse it."""
    sampled = body.get("temperature") not in (None, 0, 0.0)
    # a sampled request varies with each repeat, and without a `seed` of its own with each server process (a real
    # server's sampler is not reseeded by a restart); a greedy one answers the same every time
    variant: tuple[object, ...] = (body.get("seed"), occurrence if sampled else 0)
    if sampled and body.get("seed") is None:
        variant += (state.nonce,)
    hooks = state.flavour.hooks
    if hooks is not None:
        return _hooked(state, hooks, body, directives, variant, fault)
    return _generic(state, body, directives, variant, fault)


def _request_id(seed: int, n: int) -> str:
    return hashlib.sha256(f"{seed}|{n}".encode()).hexdigest()[:32]


def _at_length(behaviour: Behaviour, cfg: SimConfig, prompt_tokens: int) -> Behaviour:
    """The model's behaviour at this prompt length: long prompts answered worse, by the configured decay."""
    if not cfg.accuracy_half_tokens:
        return behaviour
    return dataclasses.replace(behaviour, accuracy=decay(behaviour.accuracy, prompt_tokens, cfg.accuracy_half_tokens))


def _served(state: ServerState) -> Behaviour:
    """The model's behaviour as this server runs it now: accuracy falls with the requests decoded together (those
    decoding when this one arrives, and itself: at most --max-running); speculative decoding corrupts only while
    it is on; a model that does not reason has no thinking to switch off."""
    cfg, behaviour = state.config, state.config.behaviour
    batch = state.in_flight + 1 if cfg.max_running <= 0 else min(state.in_flight + 1, cfg.max_running)
    return dataclasses.replace(
        behaviour,
        accuracy=behaviour.accuracy * load_factor(behaviour.load_harm, batch),
        spec_corrupt=behaviour.spec_corrupt if cfg.spec_draft > 0 else 0.0,
        no_thinking_harm=behaviour.no_thinking_harm if state.flavour.reasoning else 0.0,
    )


def _read(state: ServerState, body: dict[str, Any], fault: str | None) -> tuple[str, str, int, int | None]:
    """(conversation, last user message, prompt tokens, max_tokens) of a request the server accepts."""
    cfg, messages = state.config, body["messages"]
    try:
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        user = next((str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user"), prompt)
    except AttributeError:
        raise RequestRejected(400, "each message must be an object with 'role' and 'content'") from None
    # earlier reasoning counts only under the field this server reads back; a field it drops adds nothing
    prompt_tokens = len(tokenize(prompt)) + len(tokenize(taken_back(messages, state.flavour))) + 4 * len(messages)
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 0):
        raise RequestRejected(400, "max_tokens must be a non-negative integer")
    asked = prompt_tokens + (max_tokens or 0)
    if asked > cfg.max_model_len or fault == "context":
        raise RequestRejected(
            400,
            f"This model's maximum context length is {cfg.max_model_len} tokens. However, you requested {asked} "
            f"tokens ({prompt_tokens} in the messages, {max_tokens or 0} in the completion).",
        )
    return prompt, user, prompt_tokens, max_tokens


def _shape(state: ServerState, body: dict[str, Any]) -> tuple[AskedConstraint | None, bool]:
    """(constraint, thinking) as the flavour reads the request."""
    constraint = None if state.config.ignore_constraints else read_constraint(state.flavour, body)
    return constraint, read_thinking(state.flavour, body)


def _pacing(cfg: SimConfig, directives: dict[str, str], prompt_tokens: int, rng: random.Random) -> tuple[float, float]:
    """(seconds to the first token, seconds per further token) before speculative decoding."""
    lat = cfg.latency
    ttft_ms = float(directives.get("ttft_ms", lat.ttft_ms + lat.prefill_ms_per_token * prompt_tokens))
    decode_ms = float(directives.get("decode_ms", lat.decode_ms))
    jitter = 1.0 + lat.jitter * (2 * rng.random() - 1) if "ttft_ms" not in directives else 1.0
    return ttft_ms / 1e3 * jitter, decode_ms / 1e3 * jitter


def _generic(
    state: ServerState, body: dict[str, Any], directives: dict[str, str], variant: object, fault: str | None
) -> Plan:
    cfg, flavour = state.config, state.flavour
    prompt, user, prompt_tokens, max_tokens = _read(state, body, fault)
    constraint, thinking = _shape(state, body)
    seen = {k: v for k, v in body.items() if k != "reasoning_effort"} if cfg.ignore_effort else body
    effort = read_effort(flavour, seen)
    behaviour = _at_length(_served(state), cfg, prompt_tokens)
    gen = generate(
        user,
        behaviour=behaviour,
        key=state.key,
        max_tokens=max_tokens,
        thinking=thinking,
        constraint=constraint,
        constraint_skips_thinking=not flavour.reasoning_aware,
        directives=directives,
        variant=variant,
        conversation=prompt,
        effort=effort,
        tools=body.get("tools") or (),
    )
    rid = _request_id(cfg.behaviour.seed, state.requests)
    calls = _calls(state, body, directives, gen, behaviour, (user, prompt), max_tokens, variant, rid)
    if calls is None:
        force_length(gen, body, max_tokens)
    ttft_s, decode_s = _pacing(cfg, directives, prompt_tokens, seeded(cfg.behaviour.seed, "latency", user, variant))
    ctx = Ctx(
        id=flavour.response_id(rid, state.requests),
        created=int(time.time()),
        model=str(body.get("model") or cfg.model),
        prompt_tokens=prompt_tokens,
        include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
    )
    stream = bool(body.get("stream"))
    steps = flavour.stream(gen, ctx) if stream else []
    whole = b"" if stream else flavour.whole(gen, ctx)
    n = completion_tokens(gen)
    if calls is not None:
        engine = flavour.tool_engine
        if stream:
            steps = tool_steps(steps, calls, engine)
        else:
            whole = tool_whole(whole, calls, engine)
        n += calls.tokens
    spec = spec_steps(n, cfg.spec_draft, cfg.spec_accept, (cfg.behaviour.seed, user, variant))
    return Plan(steps, whole, ttft_s, decode_s * speedup(n, spec), n, prompt, prompt_tokens, spec, gen.unknown)


def _calls(
    state: ServerState,
    body: dict[str, Any],
    directives: dict[str, str],
    gen: Any,
    behaviour: Behaviour,
    asked: tuple[str, str],
    max_tokens: int | None,
    variant: object,
    rid: str,
) -> ToolReply | None:
    """The calls that answer a request offering `tools` for a keyed tool-call item (None: the answer is text)."""
    if not body.get("tools") or state.key is None:
        return None
    user, conversation = asked
    tools = body["tools"]
    entry = state.key.find(user, tools) or state.key.find(conversation, tools)
    if entry is None or not entry.calls:
        return None  # not a tool-call item, or one that expects no call: answered with text
    ask = ToolAsk(
        fault=tool_fault(state.config.faults, state.config.behaviour.seed, directives, entry),
        stream=bool(body.get("stream")),
        engine=state.flavour.tool_engine,
        markup=state.config.tool_format,
        effort=body.get("reasoning_effort"),
        tool_choice=body.get("tool_choice"),
    )
    return tool_reply(
        gen,
        entry,
        ask,
        accuracy=behaviour.accuracy,
        outcome=directives.get("outcome"),
        max_tokens=max_tokens,
        variant=variant,
        seed=state.config.behaviour.seed,
        request_id=rid,
    )


def _hooked(
    state: ServerState,
    hooks: ServerHooks,
    body: dict[str, Any],
    directives: dict[str, str],
    variant: object,
    fault: str | None,
) -> Plan:
    """The flavour reads the request and shapes the answer; pacing stays the server's."""
    cfg, lat = state.config, state.config.latency
    jitter = 1.0 + lat.jitter * (2 * seeded(cfg.behaviour.seed, "latency", state.requests).random() - 1)

    def latency(prompt_tokens: int) -> tuple[float, float]:
        if lat.burst:
            return 0.0, 0.0
        if "ttft_ms" in directives:
            return float(directives["ttft_ms"]) / 1000.0, float(directives.get("decode_ms", lat.decode_ms)) / 1000.0
        ttft_ms = lat.ttft_ms + lat.prefill_ms_per_token * prompt_tokens
        return ttft_ms / 1000.0 * jitter, float(directives.get("decode_ms", lat.decode_ms)) / 1000.0 * jitter

    call = ChatCall(
        body=body,
        behaviour=_served(state),
        key=state.key,
        directives=directives,
        variant=variant,
        model=cfg.model,
        n_ctx=cfg.max_model_len,
        thinking_opened=cfg.thinking_opened,
        ignore_constraints=cfg.ignore_constraints,
        overflow=fault == "context",
        request_id=_request_id(cfg.behaviour.seed, state.requests),
        created=int(time.time()),
        latency=latency,
        state=state.memory,
        faults=cfg.faults,
        tool_format=cfg.tool_format,
    )
    planned = hooks.plan(call)
    prompt = "\n".join(str(m.get("content", "")) for m in body["messages"] if isinstance(m, dict))
    return Plan(
        planned.steps, planned.whole, planned.ttft_s, planned.decode_s, planned.tokens, prompt, unknown=planned.unknown
    )
