"""What an earlier assistant message carries back of its reasoning, as the reference server reads it.

A stand-in for the table of which passback field each flavour consumes (issue 34: the probe's helper writes it,
with vLLM >= 0.16 reading only `reasoning`): until then every flavour reads any of them. The server's
`needs_reasoning` fault asks this one function, so the table replaces it here alone.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["passed_back"]

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def passed_back(flavour: str, message: dict[str, Any]) -> str:
    """The reasoning `message` (an assistant message of the request's history) hands the model, as `flavour`'s
    server reads it: the `reasoning` field, `reasoning_content`, or `<think>...</think>` inside the content."""
    parts = [message.get(name) for name in ("reasoning", "reasoning_content")]
    content = message.get("content")
    if isinstance(content, str):
        parts += _THINK.findall(content)
    return "\n".join(p for p in parts if isinstance(p, str))
