"""llama.cpp's llama-server (b11434, `--jinja --reasoning-format deepseek`): its chat template, tokens and
reasoning parser, and its wire format. Checked against real captures (shared/data/captures/llamacpp-b11434).

The server parses the model's raw text itself, on text rather than on tokens: the generation prompt the
template pre-filled (`<think>\\n` for templates that open the block) is put in front of the output, a
`<think>` block becomes `reasoning_content` with the whitespace after each tag dropped, partial tags are held
back, and a block that has not begun its first character yet stays raw `<think>` in the final content (the
1-2 token quirk) while the stream shows nothing. Request handling is in `llamacpp_server`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from qualeval.sim.behaviour import PlannedReply
from qualeval.sim.frames import DONE, Ctx, Step, sse
from qualeval.sim.observe import Metrics
from qualeval.sim.passback import calls_text, read_back

__all__ = ["FINGERPRINT", "METRICS", "Output", "output_of", "prefill", "render", "split", "stream", "tokenize", "whole"]

FINGERPRINT = "b0-unknown"  # what llama-server built from PyPI's sdist reports
METRICS = Metrics(
    (
        ("prompt_tokens", "llamacpp:prompt_tokens", "counter"),
        ("generation_tokens", "llamacpp:tokens_predicted", "counter"),
        ("running", "llamacpp:requests_processing", "gauge"),
        ("waiting", "llamacpp:requests_deferred", "gauge"),
        ("kv_usage", "llamacpp:kv_cache_usage_ratio", "gauge"),
    ),
    labelled=False,
)
SPECIALS = ("<think>", "</think>", "<|im_start|>", "<|im_end|>", "<|endoftext|>")
OPEN, CLOSE = "<think>", "</think>"
_SPACE = " \t\n\r\f\v"
_SPECIAL = re.compile("|".join(re.escape(s) for s in SPECIALS))
# Qwen2's pre-tokenizer; each piece stands for one token (a real BPE may split a piece further)
_PIECE = re.compile(
    r"'(?:[sStTmMdD]|[rR][eE]|[vV][eE]|[lL][lL])|(?:[^\r\n\w]|_)?[^\W\d_]+|\d| ?(?:[^\s\w]|_)+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def tokenize(text: str) -> list[str]:
    """Tokens that concatenate back to `text`; special tokens are whole."""
    out: list[str] = []
    start = 0
    for found in _SPECIAL.finditer(text):
        out += _PIECE.findall(text[start : found.start()])
        out.append(found.group())
        start = found.end()
    return out + _PIECE.findall(text[start:])


def prefill(thinking: bool, opened: bool) -> str:
    """What the template writes after `<|im_start|>assistant\\n`: the parser reads it before the output."""
    if not thinking:
        return "<think>\n\n</think>\n\n"
    return "<think>\n" if opened else ""


def render(messages: list[dict[str, Any]], *, thinking: bool = True, opened: bool = False) -> str:
    """The prompt the Qwen3-style hybrid template makes, generation prompt included."""
    parts = []
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        # an earlier turn's reasoning under `reasoning_content` (what llama-server reads back; `--reasoning-preserve`
        # is on by default) is written before its answer, and its calls after it
        thought = read_back(message, "reasoning_content")
        text = (f"<think>\n{thought}\n</think>\n\n" if thought else "") + text
        calls = calls_text(message)
        text += ("\n" + calls) if calls else ""
        parts.append(f"<|im_start|>{message.get('role')}\n{text}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n" + prefill(thinking, opened)


@dataclass(frozen=True, slots=True)
class Output:
    """What the model generated, and what the parser is told about it."""

    tokens: tuple[str, ...]
    finish: str
    prefix: str = ""
    """The pre-filled generation prompt, parsed as if the model had written it."""
    parse: bool = True
    """False: `reasoning_format: none`, the text is returned raw."""

    @property
    def completion_tokens(self) -> int:
        # the end-of-generation token counts when the model stopped by itself
        return len(self.tokens) + (1 if self.finish == "stop" else 0)


def output_of(gen: PlannedReply, *, opened: bool = False) -> Output:
    """The raw tokens behind a PlannedReply: the think tags are tokens of their own."""
    tokens: list[str] = []
    if gen.reasoning:
        tokens += [] if opened else [OPEN]
        tokens += gen.reasoning
        tokens += [CLOSE] if gen.closed else []
    tokens += gen.answer
    return Output(tuple(tokens), gen.finish, prefill(gen.thinking, opened))


def _held_back(text: str) -> str:
    """`text` without a trailing partial `</think>`, which the parser keeps until it knows what it is."""
    for size in range(min(len(CLOSE) - 1, len(text)), 0, -1):
        if CLOSE.startswith(text[-size:]):
            return text[:-size]
    return text


def split(text: str, *, final: bool) -> tuple[str | None, str]:
    """(reasoning or None, content) of the text so far; `final` once generation has ended."""
    if not text.startswith(OPEN):
        if not final and OPEN.startswith(text):
            return None, ""  # could still become <think>
        return None, text
    rest = text[len(OPEN) :]
    end = rest.find(CLOSE)
    if end >= 0:
        return rest[:end].lstrip(_SPACE), rest[end + len(CLOSE) :].lstrip(_SPACE)
    reasoning = _held_back(rest.lstrip(_SPACE))
    if not reasoning:
        # no reasoning character yet: the final answer is the raw tag, a stream has shown nothing
        return (None, text) if final else (None, "")
    return reasoning, ""


def _parsed(out: Output, upto: int, final: bool) -> tuple[str | None, str]:
    text = out.prefix + "".join(out.tokens[:upto])
    return split(text, final=final) if out.parse else (None, text)


def usage(out: Output, ctx: Ctx) -> dict[str, Any]:
    completion = out.completion_tokens
    return {
        "completion_tokens": completion,
        "prompt_tokens": ctx.prompt_tokens,
        "total_tokens": ctx.prompt_tokens + completion,
        "prompt_tokens_details": {"cached_tokens": ctx.cached_tokens},
    }


def _rate(n: int, ms: float) -> tuple[float, float]:
    return (ms / n if n else 0.0), (1000.0 * n / ms if ms > 0 else 0.0)


def timings(out: Output, ctx: Ctx) -> dict[str, Any]:
    prompt_n = ctx.prompt_tokens - ctx.cached_tokens
    predicted_n = out.completion_tokens
    prompt_ms = float(ctx.prompt_ms)
    predicted_ms = float(ctx.decode_ms * predicted_n)
    prompt_per_token, prompt_per_second = _rate(prompt_n, prompt_ms)
    predicted_per_token, predicted_per_second = _rate(predicted_n, predicted_ms)
    return {
        "cache_n": ctx.cached_tokens,
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_per_token,
        "prompt_per_second": prompt_per_second,
        "predicted_n": predicted_n,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_per_token,
        "predicted_per_second": predicted_per_second,
    }


def whole_of(out: Output, ctx: Ctx) -> bytes:
    reasoning, content = _parsed(out, len(out.tokens), final=True)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        message["reasoning_content"] = reasoning  # omitted when empty
    body = {
        "choices": [{"finish_reason": out.finish, "index": 0, "message": message}],
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": FINGERPRINT,
        "object": "chat.completion",
        "usage": usage(out, ctx),
        "id": ctx.id,
        "timings": timings(out, ctx),
    }
    return orjson.dumps(body)


def stream_of(out: Output, ctx: Ctx) -> list[Step]:
    def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        head = {"choices": choices, "created": ctx.created, "id": ctx.id, "model": ctx.model}
        return sse({**head, "system_fingerprint": FINGERPRINT, "object": "chat.completion.chunk", **extra})

    def delta(d: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
        return [{"finish_reason": finish, "index": 0, "delta": d}]

    steps: list[Step] = [(1, chunk(delta({"role": "assistant", "content": None})))]
    shown_r, shown_c = "", ""
    for i in range(len(out.tokens)):
        reasoning, content = _parsed(out, i + 1, final=False)
        data = b""
        # the parser's diff of the message so far: only text that extends what was sent goes out
        if reasoning and reasoning.startswith(shown_r) and len(reasoning) > len(shown_r):
            data += chunk(delta({"reasoning_content": reasoning[len(shown_r) :]}))
            shown_r = reasoning
        if content.startswith(shown_c) and len(content) > len(shown_c):
            data += chunk(delta({"content": content[len(shown_c) :]}))
            shown_c = content
        steps.append((0 if i == 0 else 1, data or None))
    eos = 1 if out.finish == "stop" else 0
    if ctx.include_usage:
        steps.append((eos, chunk(delta({}, out.finish))))
        steps.append((0, chunk([], usage=usage(out, ctx), timings=timings(out, ctx))))
    else:
        steps.append((eos, chunk(delta({}, out.finish), timings=timings(out, ctx))))
    steps.append(DONE)
    return steps


def whole(gen: PlannedReply, ctx: Ctx) -> bytes:
    return whole_of(output_of(gen), ctx)


def stream(gen: PlannedReply, ctx: Ctx) -> list[Step]:
    return stream_of(output_of(gen), ctx)
