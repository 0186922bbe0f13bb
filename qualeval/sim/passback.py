"""What a server takes in from an earlier assistant turn: its content always (inline `<think>...</think>` there is
content), its calls, and its reasoning only under the field the server reads (`Flavour.reads_back`): vLLM >= 0.16
reads `reasoning` and drops `reasoning_content` without a word (vLLM #38488); llama.cpp, SGLang and DeepSeek read
`reasoning_content`. `usage.prompt_tokens` counts what was taken in and nothing that was dropped, so a client can
tell which field a server consumes by the count alone (`qualeval probe --passback`).

DeepSeek V3.2/V4 in thinking mode refuse a request whose assistant turn with tool calls lacks its
`reasoning_content` (HTTP 400); `SimConfig.require_reasoning_content` rehearses that on any flavour.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from qualeval.sim.frames import RequestRejected

if TYPE_CHECKING:  # the flavours import this module: no import of them at run time
    from qualeval.sim.flavours.common import Flavour

__all__ = [
    "MISSING_REASONING",
    "calls_text",
    "consumed_reasoning",
    "read_back",
    "require_reasoning_content",
    "taken_back",
]

MISSING_REASONING = "The `reasoning_content` in the thinking mode must be passed back to the API."
"""DeepSeek's own words for the refusal, as seen in the wild."""


def read_back(message: Mapping[str, Any], field: str | None) -> str:
    """The reasoning an assistant message carries under `field` (a server reading none: `None`), else ""."""
    if field is None or message.get("role") != "assistant":
        return ""
    value = message.get(field)
    return value if isinstance(value, str) else ""


def consumed_reasoning(message: Mapping[str, Any], flavour: Flavour) -> str:
    """The earlier reasoning this flavour's server takes in from `message`: the text under the one field it reads;
    "" for any other message, or a field it drops."""
    return read_back(message, flavour.reads_back)


def calls_text(message: Mapping[str, Any]) -> str:
    """An assistant message's tool calls as the template writes them into the prompt (name and arguments)."""
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    if not isinstance(calls, list):
        return ""
    out = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            shown = {"name": function.get("name"), "arguments": function.get("arguments")}
            out.append("<tool_call>\n" + json.dumps(shown) + "\n</tool_call>")  # as Jinja's tojson writes it
    return "\n".join(out)


def taken_back(messages: Any, flavour: Flavour) -> str:
    """What the server takes into the prompt from the messages beyond their content: the reasoning it reads back
    and the calls of earlier assistant turns (prompt tokens count them)."""
    parts = []
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict):
            parts += [consumed_reasoning(message, flavour), calls_text(message)]
    return "\n".join(p for p in parts if p)


def require_reasoning_content(body: Mapping[str, Any]) -> None:
    """Refuse (HTTP 400) a request with an assistant turn that made tool calls and carries no `reasoning_content`,
    as DeepSeek's API in thinking mode does."""
    for index, message in enumerate(body.get("messages") or ()):
        if not isinstance(message, dict) or message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        if not isinstance(message.get("reasoning_content"), str):
            raise RequestRejected(400, f"{MISSING_REASONING} (messages[{index}])", "invalid_request_error")
