"""Separate a model's reasoning from its final answer, whatever way the server returned them.

Two sources, used together:
- reasoning fields (`reasoning`, `reasoning_content`, `reasoning_details[].text`), taken by priority and
  never concatenated, because vLLM 0.11.1-0.15 and OpenRouter send the same text twice;
- inline markers in `content` (formats from parsers/*.yaml), which also runs when a field already carried
  reasoning, because servers leak tags into content.

The split is a pure function of the full text. Streaming callers keep the text and, separately, where each
chunk started (see `qualeval.wire.stream`), so a result never depends on how the bytes were chunked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualeval.reasoning.completion import Completion
from qualeval.reasoning.formats import ReasoningFormat
from qualeval.records import Status

__all__ = [
    "InlineSplit",
    "apply_stops",
    "completion_status",
    "known_finish",
    "pick_reasoning",
    "split_completion",
    "split_inline",
]

REASONING_FIELDS = ("reasoning", "reasoning_content")

FINISH_REASONS = {
    **dict.fromkeys(("stop", "end_turn", "eos", "eos_token", "stop_sequence"), "stop"),
    **dict.fromkeys(("length", "max_tokens", "max_output_tokens"), "length"),
    **dict.fromkeys(("content_filter", "safety", "recitation"), "content_filter"),
    **dict.fromkeys(("tool_calls", "tool_use"), "tool_calls"),
    "function_call": "function_call",
    **dict.fromkeys(("abort", "error"), "abort"),
}
"""Finish reasons by the names servers and APIs give them, in any case (Gemini's `MAX_TOKENS`, Anthropic's
`max_tokens` and `end_turn`, TGI's `eos_token`), to OpenAI's: the split judges a cut-off answer by `length`. A
generation that ended in an error (`error`, as some servers and recorders write it) is an aborted one: an endpoint
error, never an answer."""


def known_finish(value: str) -> str | None:
    """`value` in OpenAI's spelling, or None when it is none qualeval knows: whether the answer was cut off is
    then not known, and the caller says so rather than read it as finished."""
    return FINISH_REASONS.get(value.strip().lower())


def pick_reasoning(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """The reasoning text of a message or delta and the field it came from, or None.

    Null and "" mean "nothing here". `reasoning_details` counts only when neither plain field has text.
    """
    for name in REASONING_FIELDS:
        value = obj.get(name)
        if value and isinstance(value, str):
            return name, value
    details = obj.get("reasoning_details")
    if details and isinstance(details, list):
        text = "".join(d.get("text") or d.get("summary") or "" for d in details if isinstance(d, dict))
        if text:
            return "reasoning_details", text
    return None


@dataclass(frozen=True, slots=True)
class InlineSplit:
    reasoning: str
    content: str
    source: str
    closed: bool
    reasoning_at: int | None
    """Index in the input text of the first reasoning character (None when there is none)."""
    content_at: int | None
    """Index in the input text of the first character of the final content."""


def _earliest_marker(text: str, formats: Sequence[ReasoningFormat]) -> tuple[int, str, ReasoningFormat] | None:
    best: tuple[int, int, str, ReasoningFormat] | None = None
    for fmt in formats:
        for kind, marker in (("start", fmt.start), ("end", fmt.end), ("answer", fmt.answer_start)):
            if not marker:
                continue
            pos = text.find(marker)
            # at equal positions the longer marker wins: "<|end|>" must not shadow a longer one
            if pos != -1 and (best is None or (pos, -len(marker)) < (best[0], best[1])):
                best = (pos, -len(marker), kind, fmt)
    return None if best is None else (best[0], best[2], best[3])


def _strip_drops(text: str, base: int, fmt: ReasoningFormat) -> tuple[str, int | None]:
    """Remove the format's drop markers; return the text and the index of its first kept character."""
    if not fmt.drop:
        return text, (base if text else None)
    first: int | None = None
    out: list[str] = []
    i = 0
    while i < len(text):
        for marker in fmt.drop:
            if text.startswith(marker, i):
                i += len(marker)
                break
        else:
            j = min((k for m in fmt.drop if (k := text.find(m, i)) != -1), default=len(text))
            if first is None:
                first = base + i
            out.append(text[i:j])
            i = j
    return "".join(out), first


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    at: int | None
    """Index in the input text of its first character."""
    thought: str = ""
    """Reasoning blocks the model opened again after the first one closed: thinking, not the answer."""
    thought_at: int | None = None
    """Index in the input text of the first character of `thought`."""
    open: bool = False
    """The last of them never closed."""


def _outside_blocks(region: str, fmt: ReasoningFormat) -> tuple[list[tuple[int, str]], list[tuple[int, str]], bool]:
    """The pieces of `region` (offset, text) outside the format's reasoning blocks, the blocks' (offset, text), and
    whether the last block is left open. `<think>a</think> text <think>b</think> final` answers " text " + " final"."""
    if fmt.kind == "channel" or not fmt.start or not fmt.end:
        return [(0, region)], [], False
    pieces: list[tuple[int, str]] = []
    thought: list[tuple[int, str]] = []
    i = 0
    while (j := region.find(fmt.start, i)) != -1:
        pieces.append((i, region[i:j]))
        body = j + len(fmt.start)
        k = region.find(fmt.end, body)
        if k == -1:
            return pieces, [*thought, (body, region[body:])], True
        thought.append((body, region[body:k]))
        i = k + len(fmt.end)
    return [*pieces, (i, region[i:])], thought, False


def _answer_region(text: str, at: int, fmt: ReasoningFormat) -> _Answer:
    """The final answer that follows a closed reasoning block starting at index `at`: what stands outside any block
    the model opens again after it (a second `<think>...</think>` is thinking too, never the answer)."""
    region = text[at:]
    if fmt.answer_start:
        k = region.find(fmt.answer_start)
        if k != -1:
            at += k + len(fmt.answer_start)
            region = text[at:]
    pieces, thought, left_open = _outside_blocks(region, fmt)
    answer: list[str] = []
    first: int | None = None
    for offset, piece in pieces:
        kept, kept_at = _strip_drops(piece, at + offset, fmt)
        answer.append(kept)
        first = kept_at if first is None and kept else first
    said = [(offset, piece) for offset, piece in thought if piece]
    thought_at = at + said[0][0] if said else None
    return _Answer("".join(answer), first, "\n".join(piece for _, piece in said), thought_at, left_open)


def _implicit_end(body: str, formats: Sequence[ReasoningFormat]) -> int | None:
    """Where the earliest implicit end (a tool call written inside the thinking) starts in `body`, or None."""
    cuts = (m.start() for f in formats if f.implicit_end and (m := re.search(f.implicit_end, body)))
    return min(cuts, default=None)


def _open_to_end(
    text: str, body_at: int, head: tuple[str, int | None], prefix: str, formats: Sequence[ReasoningFormat], source: str
) -> InlineSplit:
    """A block open from `body_at` with no closing marker: reasoning to the end, unless an implicit end cuts it.

    `head` is reasoning that came before `body_at` (and its index); `prefix` is content that came before it.
    `source` names a block that an implicit end closed.
    """
    body = text[body_at:]
    cut = _implicit_end(body, formats)
    thought = body if cut is None else body[:cut]
    reasoning = head[0] + thought
    r_at = head[1] if head[1] is not None else (body_at if thought else None)
    if cut is None:
        return InlineSplit(reasoning, prefix, "inline:unclosed", False, r_at, 0 if prefix else None)
    return InlineSplit(reasoning, prefix + body[cut:], source, True, r_at, 0 if prefix else body_at + cut)


def _from_opening(text: str, pos: int, fmt: ReasoningFormat, opened: bool) -> InlineSplit:
    """Split text whose first marker is the opening marker at index `pos`."""
    prefix = text[:pos]
    if not prefix.strip():
        # whitespace before the tag is padding, neither answer nor thought: vLLM drops it (and any other prefix)
        prefix = ""
    body_at = pos + len(fmt.start)
    head: tuple[str, int | None] = ("", None)
    if opened:
        # the template already opened the block: a re-emitted opening marker is noise inside it
        head, prefix = (prefix, 0 if prefix else None), ""
    close = text.find(fmt.end, body_at)
    if close == -1:
        return _open_to_end(text, body_at, head, prefix, (fmt,), fmt.source_paired)
    body = text[body_at:close]
    answer = _answer_region(text, close + len(fmt.end), fmt)
    reasoning = _joined(head[0] + body, answer.thought)
    r_at = head[1] if head[1] is not None else (body_at if body else None)
    c_at = 0 if prefix else answer.at
    return InlineSplit(reasoning, prefix + answer.text, fmt.source_paired, not answer.open, r_at, c_at)


def _joined(first: str, later: str) -> str:
    return f"{first}\n{later}" if first and later else first or later


def split_inline(text: str, formats: Sequence[ReasoningFormat], *, opened: bool = False) -> InlineSplit:
    """Split text that may hold inline reasoning.

    Semantics follow current vLLM parsers (deepseek_r1, qwen3): a lone closing marker means the template
    opened the block, so the text before it is reasoning; an opening marker that never closes makes everything
    after it unfinished reasoning, unless the format's implicit end (a tool call) ends it; `opened` (the
    template opened the block) makes unmarked text unfinished reasoning. Unlike vLLM, text before an opening
    marker is kept as content rather than thrown away, unless it is only whitespace, and a block the model opens
    again after the first one closed is reasoning too, never content (`closed` is false when it stays open).
    """
    hit = _earliest_marker(text, formats)
    if hit is None:
        if opened and text:
            return _open_to_end(text, 0, ("", None), "", formats, "inline:close-only")
        return InlineSplit("", text, "none", False, None, 0 if text else None)
    pos, kind, fmt = hit
    if kind == "answer":
        prefix, prefix_at = _strip_drops(text[:pos], 0, fmt)
        body_at = pos + len(fmt.answer_start or "")
        answer, answer_at = _strip_drops(text[body_at:], body_at, fmt)
        first = prefix_at if prefix else answer_at
        return InlineSplit("", prefix + answer, "none", False, None, first)
    if kind == "end":
        after = _answer_region(text, pos + len(fmt.end), fmt)
        source = fmt.source_paired if fmt.kind == "channel" else "inline:close-only"
        r_at = 0 if pos else after.thought_at
        return InlineSplit(_joined(text[:pos], after.thought), after.text, source, not after.open, r_at, after.at)
    return _from_opening(text, pos, fmt, opened)


def apply_stops(content: str, stops: Sequence[str]) -> str:
    """Cut the content at the earliest stop string (stops are never sent to reasoning models)."""
    cut = min((i for s in stops if s and (i := content.find(s)) != -1), default=-1)
    return content if cut == -1 else content[:cut]


def completion_status(
    content: str,
    finish_reason: str | None,
    error: str | None = None,
    *,
    reasoning_open: bool = False,
    calls: bool = False,
) -> Status:
    """Exactly one status per response. Null and "" content are the same; so is whitespace-only.

    `calls`: the response carried tool calls. A call is an answer, so calls with no content are `ok`, not
    `empty_content` (which means the model said nothing), whatever the finish reason (`tool_calls`, or `stop`
    from a server that does not say `tool_calls`; the tool status judges that word). Cut by `length` while the
    calls were written, the answer was cut: `answer_truncated`.

    `reasoning_open`: the text shows a reasoning block that never closed. With no finish reason (an offline
    line that has none) that is the only evidence of how generation ended, and a block still open with no
    answer after it was cut off.
    """
    if error is not None:
        return "transport_error"
    if finish_reason == "content_filter":
        return "content_filter"
    empty = not content.strip() and not calls
    if finish_reason == "length":
        return "reasoning_truncated" if empty else "answer_truncated"
    if finish_reason is None and reasoning_open and empty:
        return "reasoning_truncated"
    return "empty_content" if empty else "ok"


@dataclass(frozen=True, slots=True)
class SplitResult:
    completion: Completion
    inline: InlineSplit | None
    """The inline split of the raw content, when it ran (its indices map back to arrival times)."""


def _thinking_off(
    raw: str,
    field: tuple[str, str] | None,
    finish_reason: str | None,
    formats: Sequence[ReasoningFormat],
    stops: Sequence[str],
    error: str | None,
    calls: bool = False,
) -> SplitResult:
    """With thinking off everything is content, but for a channel format's markers (gpt-oss Harmony): they frame
    every answer, thinking or not, so `<|channel|>final<|message|>{"answer":23}` is the answer `{"answer":23}`."""
    field_text = field[1] if field else ""
    # vLLM's deepseek_r1 parser (<= 0.16) puts the whole answer in the reasoning field with thinking off, so an
    # empty content takes the field's text
    moved = bool(field_text) and not raw.strip()
    channels = tuple(f for f in formats if f.kind == "channel")
    inline = split_inline(raw, channels) if channels and not moved else None
    text = apply_stops(field_text if moved else inline.content if inline else raw, stops)
    thought = inline.reasoning if inline else ""
    reasoning = "" if moved else field_text + thought
    left_open = inline is not None and inline.source == "inline:unclosed"
    status = completion_status(text, finish_reason, error, reasoning_open=left_open, calls=calls)
    if field and field_text and not moved:
        source = "field:" + field[0]
    else:
        source = inline.source if inline and thought else "none"
    closed = bool(reasoning) and not left_open
    done = Completion(
        reasoning=reasoning, content=text, reasoning_source=source, reasoning_closed=closed, status=status
    )
    return SplitResult(done, inline)


def split_completion(
    *,
    content: str | None,
    field: tuple[str, str] | None,
    finish_reason: str | None,
    formats: Sequence[ReasoningFormat],
    thinking: bool | None = None,
    opened: bool = False,
    stops: Sequence[str] = (),
    error: str | None = None,
    calls: bool = False,
) -> SplitResult:
    """Combine a reasoning field (name, text) and the raw content into one Completion with its status.
    `calls`: the response carried tool calls (an answer, even with no content: see completion_status)."""
    raw = content or ""
    field_text = field[1] if field else ""
    if thinking is False:
        return _thinking_off(raw, field, finish_reason, formats, stops, error, calls)
    inline = split_inline(raw, formats, opened=opened and not field_text)
    answer = apply_stops(inline.content, stops)
    if field:
        reasoning = field_text + inline.reasoning
        source = "field:" + field[0]
        # a server that separated the reasoning closed it unless the budget ran out before any answer (a call
        # is an answer: the thinking ended before it)
        closed = bool(answer.strip()) or calls or finish_reason != "length"
        left_open = not closed
    else:
        reasoning, source, closed = inline.reasoning, inline.source, inline.closed
        # an opening tag with nothing after it is still an open block
        left_open = source == "inline:unclosed"
    status = completion_status(answer, finish_reason, error, reasoning_open=left_open, calls=calls)
    done = Completion(
        reasoning=reasoning,
        content=answer,
        reasoning_source=source,
        reasoning_closed=closed and bool(reasoning),
        status=status,
    )
    return SplitResult(done, inline)
