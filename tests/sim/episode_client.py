"""A scripted client for the reference server's multi-turn episodes: it executes nothing, it replays each served
call back as a `tool` message, and hands back (or drops) the reasoning it was given."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

_REASONING = ("reasoning", "reasoning_content")


@dataclass
class Walk:
    """What an episode's walk got: per turn, per step, the calls as (name, arguments object) and their ids; each
    turn's closing text."""

    calls: list[list[list[tuple[str, Any]]]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    finishes: list[str] = field(default_factory=list)

    def flat(self) -> list[list[tuple[str, Any]]]:
        """Each turn's calls in order, the steps joined."""
        return [[call for step in turn for call in step] for turn in self.calls]


def _streamed(response: httpx.Response) -> dict[str, Any]:
    """A streamed answer assembled into a message and its finish reason."""
    message: dict[str, Any] = {"content": ""}
    calls: dict[int, dict[str, Any]] = {}
    for line in response.iter_lines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = orjson.loads(line[6:])
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            message["content"] += delta.get("content") or ""
            for name in _REASONING:
                if delta.get(name):
                    message[name] = message.get(name, "") + delta[name]
            for piece in delta.get("tool_calls") or ():
                call = calls.setdefault(piece["index"], {"function": {"name": "", "arguments": ""}})
                call.update({k: piece[k] for k in ("id", "type") if k in piece})
                function = piece.get("function") or {}
                call["function"]["name"] += function.get("name") or ""
                call["function"]["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                message["finish_reason"] = choice["finish_reason"]
    message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


def ask(url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """One request's message, with its finish reason under `finish_reason`."""
    if body.get("stream"):
        with httpx.stream("POST", f"{url}/chat/completions", json=body, headers=headers, timeout=30) as response:
            response.raise_for_status()
            return _streamed(response)
    response = httpx.post(f"{url}/chat/completions", json=body, headers=headers, timeout=30)
    response.raise_for_status()
    choice = response.json()["choices"][0]
    return {**choice["message"], "finish_reason": choice["finish_reason"]}


def walk(
    url: str,
    turns: Sequence[str],
    tools_at: Callable[[int], list[dict[str, Any]]],
    *,
    stream: bool = False,
    passback: str | None = "reasoning",
    headers: dict[str, str] | None = None,
    max_steps: int = 20,
    inline: bool = False,
) -> Walk:
    """Each turn's prompt, then the served calls replayed as tool results until an answer without a call (or
        `max_steps`). `passback`: the field the reasoning goes back in (None: dropped); `inline`: the reasoning goes
    back as `<think>...</think>` before the content."""
    messages: list[dict[str, Any]] = []
    out = Walk()
    for turn, prompt in enumerate(turns):
        messages.append({"role": "user", "content": prompt})
        out.calls.append([])
        for _ in range(max_steps):
            body = {"model": "sim", "messages": messages, "tools": tools_at(turn), "stream": stream}
            got = ask(url, body, headers or {})
            out.finishes.append(got["finish_reason"])
            reasoning = next((got[name] for name in _REASONING if got.get(name)), None)
            sent: dict[str, Any] = {"role": "assistant", "content": got.get("content") or ""}
            if passback and reasoning:
                sent[passback] = reasoning
            if inline and reasoning:
                sent["content"] = f"<think>{reasoning}</think>{sent['content']}"
            calls = got.get("tool_calls") or []
            if not calls:
                out.texts.append(got.get("content") or "")
                messages.append(sent)
                break
            sent["tool_calls"] = calls
            messages.append(sent)
            out.calls[-1].append([(c["function"]["name"], orjson.loads(c["function"]["arguments"])) for c in calls])
            for c in calls:
                out.ids.append(c["id"])
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": f"ran {c['function']['name']}"})
    return out
