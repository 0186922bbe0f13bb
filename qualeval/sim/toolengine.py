"""How each serving engine puts a tool call on the wire: its call ids, how it writes the arguments, and how it
streams them. Each is what that engine sends, read from its source and, for llama.cpp, from real captures
(tests/data/tool_captures/).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["LLAMACPP", "OPENAI_API", "VLLM", "Engine"]


@dataclass(frozen=True, slots=True)
class Engine:
    per_delta: int
    """Argument tokens a streamed delta carries."""
    id_prefix: str
    id_length: int
    id_alphabet: str
    spaced: bool
    """Arguments as Python's json.dumps writes them (", " and ": "), else compact."""
    head_arguments: str
    """"empty": the first delta carries `arguments: ""`; "absent": no arguments key; "first": the first token."""
    head_order: tuple[str, ...] = ("index", "id", "type", "function")
    """The keys of a call's first streamed delta, in the engine's order."""
    whole_order: tuple[str, ...] = ("id", "type", "function")
    """The keys of a non-streamed call, in the engine's order."""

    def call_id(self, seed: str) -> str:
        """A call id in this engine's style, a function of `seed` (the request and the call's place)."""
        digest = hashlib.sha256(seed.encode()).digest()
        body = "".join(self.id_alphabet[b % len(self.id_alphabet)] for b in digest)
        return self.id_prefix + body[: self.id_length]

    def arguments(self, args: dict[str, Any]) -> str:
        if self.spaced:
            return json.dumps(args, ensure_ascii=False)
        return orjson.dumps(args).decode()


_HEX = "0123456789abcdef"
_VLLM_HEAD = ("id", "type", "index", "function")
"""vLLM's DeltaToolCall declares `index` after `type`, and its dump keeps that order."""
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

# OpenAI's API (and the servers that copy its ids): `call_` ids, compact arguments in small fragments
OPENAI_API = Engine(3, "call_", 24, _HEX, spaced=False, head_arguments="empty")
# vLLM: `chatcmpl-tool-` + a uuid4's hex; its parsers json.dumps the arguments; the first delta carries id, type and
# name only (None fields dropped), then the arguments in diffs of several tokens
VLLM = Engine(4, "chatcmpl-tool-", 32, _HEX, spaced=True, head_arguments="absent", head_order=_VLLM_HEAD)
# llama-server (captured, b11434): 32 random letters and digits, compact arguments; the first delta carries id,
# type, name and the first token of the arguments, then one token an event; a whole call's keys come as type,
# function, id
LLAMACPP = Engine(1, "", 32, _ALNUM, spaced=False, head_arguments="first", whole_order=("type", "function", "id"))
