"""Tool calls put on a flavour's wire, in OpenAI's shape: the flavour writes the reasoning (its field, or inline)
and the finish as for a text answer; the calls go into `message.tool_calls`, or, streamed, into deltas before the
finish chunk, each call's id and name in its first delta and its arguments in fragments, as the serving engine
(qualeval.sim.toolengine) chunks them."""

from __future__ import annotations

import copy
from typing import Any

import orjson

from qualeval.sim.behaviour import tokenize
from qualeval.sim.frames import Step, sse
from qualeval.sim.toolengine import Engine
from qualeval.sim.toolreply import ToolReply

__all__ = ["tool_steps", "tool_whole"]


def tool_whole(whole: bytes, reply: ToolReply, engine: Engine) -> bytes:
    """The non-streamed body with the calls in its message."""
    body = orjson.loads(whole)
    choice = body["choices"][0]
    message = choice.setdefault("message", {})
    message["tool_calls"] = []
    for cid, name, args in reply.calls:
        parts = {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
        message["tool_calls"].append({key: parts[key] for key in engine.whole_order})
    if not message.get("content"):
        message["content"] = None
    choice["finish_reason"] = reply.finish
    _count(body, reply.tokens)
    return orjson.dumps(body)


def tool_steps(steps: list[Step], reply: ToolReply, engine: Engine) -> list[Step]:
    """The stream with the calls' deltas before its finish chunk, and that chunk's finish reason the calls'."""
    at = _finish_at(steps)
    if at is None:
        return steps
    tokens, data = steps[at]
    finish = _load(data or b"")
    if finish is None:
        return steps  # not reached: _finish_at found a chunk there
    template = copy.deepcopy(finish)
    template.pop("usage", None)
    template["choices"][0]["finish_reason"] = None
    inserted = [(n, sse(_with_delta(template, delta))) for n, delta in _deltas(reply, engine)]
    finish["choices"][0]["finish_reason"] = reply.finish
    _count(finish, reply.tokens)
    out = steps[:at] + inserted + [(tokens, sse(finish))]
    for n, later in steps[at + 1 :]:
        obj = _load(later) if later else None
        if obj is not None and ("usage" in obj or _finish(obj) is not None):
            # the include_usage chunk counts the calls too; a repeated finish (OpenRouter's) says the calls' reason
            _count(obj, reply.tokens)
            if _finish(obj) is not None:
                obj["choices"][0]["finish_reason"] = reply.finish
            later = sse(obj)
        out.append((n, later))
    return out


def _deltas(reply: ToolReply, engine: Engine) -> list[tuple[int, dict[str, Any]]]:
    """(tokens, delta) per call piece: the call's header, then its arguments, `engine.per_delta` tokens a delta."""
    out: list[tuple[int, dict[str, Any]]] = []
    for index, (cid, name, args) in enumerate(reply.calls):
        tokens = tokenize(args)
        function: dict[str, Any] = {"name": name}
        if engine.head_arguments == "empty":
            function["arguments"] = ""
        elif engine.head_arguments == "first":
            function["arguments"], tokens = "".join(tokens[:1]), tokens[1:]
        head = _head(engine, cid, index, function, reply.indexed)
        out.append((len(tokenize(name)) + len(tokenize(function.get("arguments", ""))), {"tool_calls": [head]}))
        for start in range(0, len(tokens), engine.per_delta):
            taken = tokens[start : start + engine.per_delta]
            piece = {"function": {"arguments": "".join(taken)}}
            out.append((len(taken), {"tool_calls": [{"index": index, **piece} if reply.indexed else piece]}))
    return out


def _head(engine: Engine, cid: str, index: int, function: dict[str, Any], indexed: bool) -> dict[str, Any]:
    """A call's first delta, its keys in the engine's order."""
    parts: dict[str, Any] = {"index": index, "id": cid, "type": "function", "function": function}
    return {key: parts[key] for key in engine.head_order if indexed or key != "index"}


def _with_delta(template: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    chunk = copy.deepcopy(template)
    chunk["choices"][0]["delta"] = delta
    return chunk


def _load(data: bytes) -> dict[str, Any] | None:
    """The JSON object of an SSE `data:` frame (None: a comment, [DONE], or not one object)."""
    lines = [line for line in data.split(b"\n") if line.startswith(b"data: ")]
    if len(lines) != 1 or lines[0] == b"data: [DONE]":
        return None
    try:
        obj = orjson.loads(lines[0][6:])
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _finish(obj: dict[str, Any] | None) -> str | None:
    choices = obj.get("choices") if obj else None
    return choices[0].get("finish_reason") if choices and isinstance(choices[0], dict) else None


def _finish_at(steps: list[Step]) -> int | None:
    """The position of the first chunk that carries a finish reason."""
    for at, (_, data) in enumerate(steps):
        if data and _finish(_load(data)) is not None:
            return at
    return None


def _count(obj: dict[str, Any], tokens: int) -> None:
    """The calls' tokens added to the usage the flavour counted without them."""
    usage = obj.get("usage")
    if not isinstance(usage, dict) or not tokens:
        return
    for name in ("completion_tokens", "total_tokens"):
        if isinstance(usage.get(name), int):
            usage[name] += tokens
