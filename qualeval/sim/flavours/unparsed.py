"""A server with no reasoning parser (vLLM's wire format): the model's raw text, markers included, in `content`.

Styles: "think" (`<think>...</think>`), "close-only" (the template opened the block, so only `</think>` shows),
"harmony" (gpt-oss channels), "plain" (a model that does not think).
"""

from __future__ import annotations

from functools import partial

from qualeval.sim.behaviour import PlannedReply
from qualeval.sim.flavours.vllm import Piece, Pieces

__all__ = ["raw_tokens", "unparsed"]


def raw_tokens(gen: PlannedReply, style: str) -> list[str]:
    """The model's raw output, markers included, as a server without a reasoning parser returns it."""
    harmony = style == "harmony"
    out: list[str] = []
    if gen.reasoning:
        if style == "think":
            out.append("<think>")
        elif harmony:
            out.append("<|channel|>analysis<|message|>")
        out += gen.reasoning
        if gen.closed:
            out += ["<|end|>", "<|start|>assistant<|channel|>final<|message|>"] if harmony else ["</think>"]
    elif harmony and gen.answer:
        out.append("<|channel|>final<|message|>")
    out += gen.answer
    if harmony and gen.finish == "stop" and gen.answer:
        out.append("<|return|>")
    return out


def _as_content(style: str, gen: PlannedReply, stream: bool) -> list[Piece]:
    return [("c", t) for t in raw_tokens(gen, style)]


def unparsed(style: str) -> Pieces:
    """vLLM's pieces for a model writing in this style: every token is content."""
    return partial(_as_content, style)
