"""A keyed tool-call item's answer to a request that offers `tools`: the calls from the key (some made wrong at the
configured accuracy), after the reasoning, and broken the way a server's tool parser breaks them when a fault says.

The calls are the key's, whatever the request offers: the server models a model that knows the answer, not a
checker of what it was sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qualeval.sim.answerkey import KeyedCall, KeyEntry
from qualeval.sim.behaviour import PlannedReply, seeded, tokenize
from qualeval.sim.config import TOOL_FAULTS
from qualeval.sim.toolengine import Engine
from qualeval.sim.toolwrite import write_calls

__all__ = ["ToolAsk", "ToolReply", "cut_to", "tool_fault", "tool_reply", "wrong_calls"]


@dataclass(slots=True)
class ToolReply:
    """The calls as they go on the wire: (id, name, arguments text) each, the finish reason, and how to stream."""

    calls: list[tuple[str, str, str]] = field(default_factory=list)
    finish: str = "tool_calls"
    indexed: bool = True
    """Streamed deltas carry `index` (False: the delta_without_index fault)."""
    tokens: int = 0
    """Tokens the calls cost (usage and pacing)."""


def tool_fault(faults: dict[str, float], seed: int, directives: dict[str, str], entry: KeyEntry) -> str | None:
    """The tool fault for this item: asked by the `x-qualeval-sim` header, else drawn on the item's question at the
    configured rates (one draw per item: streamed and non-streamed requests for it break alike)."""
    asked = directives.get("fault")
    if asked in TOOL_FAULTS:
        return asked
    rates = sorted((name, rate) for name, rate in faults.items() if name in TOOL_FAULTS)
    if not rates:
        return None
    roll = seeded(seed, "tool-fault", entry.draws or entry.question).random()
    edge = 0.0
    for name, rate in rates:
        edge += rate
        if roll < edge:
            return name
    return None


@dataclass(frozen=True, slots=True)
class ToolAsk:
    """What shapes the calls besides the key: the item's fault, the request, and how the server writes calls."""

    fault: str | None
    stream: bool
    engine: Engine
    markup: str | None = None
    """The format the model writes calls in (`--tool-format`), seen where a fault leaks them into the text."""
    effort: object = None
    """The request's `reasoning_effort`."""
    tool_choice: object = None


_HIGH_EFFORT = ("high", "xhigh")


def _leak(ask: ToolAsk) -> str | None:
    """Where the fault leaves the call's markup: "reasoning", "content", or None (the calls go out as calls)."""
    if ask.fault == "call_in_reasoning":
        return "reasoning"
    if ask.fault == "markup_in_content" or (ask.fault == "markup_in_content_stream" and ask.stream):
        return "content"
    if ask.fault == "calls_dropped_at_high_effort" and ask.effort in _HIGH_EFFORT:
        return "content"
    return None


def tool_reply(
    gen: PlannedReply,
    entry: KeyEntry,
    ask: ToolAsk,
    *,
    accuracy: float,
    outcome: str | None,
    max_tokens: int | None,
    variant: object,
    seed: int,
    request_id: str,
) -> ToolReply | None:
    """Turn the planned text answer into the item's calls; None when the answer stays text (the reasoning ran out
    of tokens, or a fault put the call's markup into the text)."""
    if not gen.closed and gen.finish == "length":
        return None  # the budget ended inside the thinking: no call was written
    if outcome == "empty":
        gen.answer = []  # only the thinking: no call, no text
        return None
    draws = entry.draws or entry.question
    correct = outcome == "correct" or (
        outcome != "wrong" and seeded(seed, "tool-call", draws, variant).random() < accuracy
    )
    calls = list(entry.calls or ())
    if not correct:
        calls = wrong_calls(calls, seeded(seed, "tool-wrong", draws, variant))
    if ask.fault == "whitespace_stripped":
        calls = [KeyedCall(c.name, _stripped(c.arguments)) for c in calls]
    gen.answer, gen.finish = [], "stop"
    leak = _leak(ask)
    if leak is not None:
        _leaked(gen, calls, leak, ask.markup)
        return None
    texts = [(c.name, ask.engine.arguments(c.arguments)) for c in calls]
    reply = ToolReply(indexed=ask.fault != "delta_without_index")
    if ask.fault == "empty_tool_calls" and ask.tool_choice == "required":
        texts = []  # a server that enforces `required` by a grammar, then parses nothing out (vLLM #53363)
    elif ask.fault == "stop_with_calls":
        reply.finish = "stop"
    elif ask.fault == "args_invalid_json":
        texts = [(name, _cut(args)) for name, args in texts]
    left = None if max_tokens is None else max_tokens - len(gen.reasoning) - (1 if gen.reasoning else 0)
    if ask.fault == "truncated_call" and texts:
        texts, reply.finish = [*texts[:-1], (texts[-1][0], _cut(texts[-1][1]))], "length"
    elif left is not None:
        texts, cut = _fit(texts, left)
        reply.finish = "length" if cut else reply.finish
    reply.calls = [(ask.engine.call_id(f"{request_id}|{i}"), name, args) for i, (name, args) in enumerate(texts)]
    reply.tokens = sum(len(tokenize(name)) + len(tokenize(args)) for name, args in texts)
    return reply


def _leaked(gen: PlannedReply, calls: list[KeyedCall], where: str, markup: str | None) -> None:
    """The calls written as markup into the text, finish `stop`: at the end of a reasoning that never closed (the
    parser never saw the end of the thinking; Qwen3 XML unless a format is set), or as the content (Hermes)."""
    pairs = [(c.name, c.arguments) for c in calls]
    if where == "reasoning":
        gen.reasoning = gen.reasoning + tokenize("\n" + write_calls(markup or "qwen3_xml", pairs))
        gen.closed = False
    else:
        gen.answer = tokenize(write_calls(markup or "hermes", pairs))


def cut_to(reply: ToolReply, left: int) -> None:
    """The calls cut to the `left` tokens a budget leaves them (finish `length` when it ends inside one)."""
    texts, cut = _fit([(name, args) for _, name, args in reply.calls], max(left, 0))
    if cut:
        reply.calls = [(cid, *text) for (cid, _, _), text in zip(reply.calls, texts, strict=False)]
        reply.finish = "length"
        reply.tokens = sum(len(tokenize(name)) + len(tokenize(args)) for name, args in texts)


def _cut(args: str) -> str:
    """Arguments cut short of their end: never JSON ('{' at the least)."""
    return args[: max(1, len(args) // 2)]


def _fit(texts: list[tuple[str, str]], left: int) -> tuple[list[tuple[str, str]], bool]:
    """The calls that fit in `left` tokens, the last cut inside its arguments; True when something was cut."""
    out: list[tuple[str, str]] = []
    for name, args in texts:
        tokens = tokenize(args)
        cost = len(tokenize(name)) + len(tokens)
        if cost > left:
            if left > len(tokenize(name)):
                out.append((name, "".join(tokens[: left - len(tokenize(name))])))
            return out, True
        out.append((name, args))
        left -= cost
    return out, False


def wrong_calls(calls: list[KeyedCall], rng: Any) -> list[KeyedCall]:
    """The calls with one mistake a model makes: a wrong value for a parameter, or a wrong function name."""
    if not calls:
        return calls
    n = rng.randrange(len(calls))
    call = calls[n]
    if call.arguments:
        param = sorted(call.arguments)[rng.randrange(len(call.arguments))]
        changed = KeyedCall(call.name, {**call.arguments, param: _other(call.arguments[param])})
    else:
        changed = KeyedCall(call.name + "_v2", call.arguments)
    return [*calls[:n], changed, *calls[n + 1 :]]


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + " (other)" if value else "other"
    if isinstance(value, list):
        return value[:-1] if value else ["other"]
    return None if value is not None else "other"


def _stripped(value: Any) -> Any:
    """String values without their spaces, at any depth, as a parser that trims each token's whitespace leaves them."""
    if isinstance(value, str):
        return value.replace(" ", "")
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items()}
    return value
