"""Separate a model's reasoning from its final answer, whatever way the server returned them.

Two sources, used together:
- reasoning fields (`reasoning`, `reasoning_content`, `reasoning_details[].text`), taken by priority and
  never concatenated, because vLLM 0.11.1-0.15 and OpenRouter send the same text twice;
- inline markers in `content` (formats from parsers/*.yaml), which also runs when a field already carried
  reasoning, because servers leak tags into content.

The split is a pure function of the full text. Streaming callers keep the text and, separately, where each
chunk started (see `qualeval.client`), so a result never depends on how the bytes were chunked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualeval.formats import ReasoningFormat
from qualeval.models import Completion, Status

__all__ = [
    "InlineSplit",
    "apply_stops",
    "completion_status",
    "pick_reasoning",
    "split_completion",
    "split_inline",
]

REASONING_FIELDS = ("reasoning", "reasoning_content")


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


def _answer_region(text: str, at: int, fmt: ReasoningFormat) -> tuple[str, int | None]:
    """The final answer that follows a closed reasoning block starting at index `at`."""
    region = text[at:]
    if fmt.answer_start:
        k = region.find(fmt.answer_start)
        if k != -1:
            at += k + len(fmt.answer_start)
            region = text[at:]
    return _strip_drops(region, at, fmt)


def split_inline(text: str, formats: Sequence[ReasoningFormat], *, opened: bool = False) -> InlineSplit:
    """Split text that may hold inline reasoning.

    Semantics follow current vLLM parsers: a lone closing marker means the template opened the block, so
    the text before it is reasoning; an opening marker that never closes makes everything after it
    unfinished reasoning; `opened` (the template opened the block) makes unmarked text unfinished
    reasoning. Text before an opening marker is kept as content rather than thrown away.
    """
    hit = _earliest_marker(text, formats)
    if hit is None:
        if opened and text:
            return InlineSplit(text, "", "inline:unclosed", False, 0, None)
        return InlineSplit("", text, "none", False, None, 0 if text else None)
    pos, kind, fmt = hit
    if kind == "answer":
        prefix, prefix_at = _strip_drops(text[:pos], 0, fmt)
        body_at = pos + len(fmt.answer_start or "")
        answer, answer_at = _strip_drops(text[body_at:], body_at, fmt)
        first = prefix_at if prefix else answer_at
        return InlineSplit("", prefix + answer, "none", False, None, first)
    if kind == "end":
        answer, answer_at = _answer_region(text, pos + len(fmt.end), fmt)
        source = fmt.source_paired if fmt.kind == "channel" else "inline:close-only"
        return InlineSplit(text[:pos], answer, source, True, 0 if pos else None, answer_at)
    # an opening marker
    prefix = text[:pos]
    body_at = pos + len(fmt.start)
    close = text.find(fmt.end, body_at)
    if opened:
        # the template already opened the block: a re-emitted opening marker is noise inside it
        reasoning_head, head_at = prefix, (0 if prefix else None)
        prefix = ""
    else:
        reasoning_head, head_at = "", None
    if close == -1:
        body = text[body_at:]
        reasoning = reasoning_head + body
        r_at = head_at if head_at is not None else (body_at if body else None)
        return InlineSplit(reasoning, prefix, "inline:unclosed", False, r_at, 0 if prefix else None)
    body = text[body_at:close]
    reasoning = reasoning_head + body
    r_at = head_at if head_at is not None else (body_at if body else None)
    answer, answer_at = _answer_region(text, close + len(fmt.end), fmt)
    c_at = 0 if prefix else answer_at
    return InlineSplit(reasoning, prefix + answer, fmt.source_paired, True, r_at, c_at)


def apply_stops(content: str, stops: Sequence[str]) -> str:
    """Cut the content at the earliest stop string (stops are never sent to reasoning models)."""
    cut = min((i for s in stops if s and (i := content.find(s)) != -1), default=-1)
    return content if cut == -1 else content[:cut]


def completion_status(content: str, finish_reason: str | None, error: str | None = None) -> Status:
    """Exactly one status per response. Null and "" content are the same; so is whitespace-only."""
    if error is not None:
        return "transport_error"
    if finish_reason == "content_filter":
        return "content_filter"
    empty = not content.strip()
    if finish_reason == "length":
        return "reasoning_truncated" if empty else "answer_truncated"
    return "empty_content" if empty else "ok"


@dataclass(frozen=True, slots=True)
class SplitResult:
    completion: Completion
    inline: InlineSplit | None
    """The inline split of the raw content, when it ran (its indices map back to arrival times)."""


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
) -> SplitResult:
    """Combine a reasoning field (name, text) and the raw content into one Completion with its status."""
    raw = content or ""
    field_text = field[1] if field else ""
    if thinking is False:
        # With thinking off everything is content. vLLM's deepseek_r1 parser (<= 0.16) puts the whole
        # answer in the reasoning field in that case, so an empty content takes the field's text.
        moved = bool(field_text) and not raw.strip()
        text = apply_stops(field_text if moved else raw, stops)
        status = completion_status(text, finish_reason, error)
        reasoning = "" if moved else field_text
        source = ("field:" + field[0]) if (field and reasoning) else "none"
        done = Completion(
            reasoning=reasoning,
            content=text,
            reasoning_source=source,
            reasoning_closed=bool(reasoning),
            status=status,
        )
        return SplitResult(done, None)
    inline = split_inline(raw, formats, opened=opened and not field_text)
    answer = apply_stops(inline.content, stops)
    if field:
        reasoning = field_text + inline.reasoning
        source = "field:" + field[0]
        # a server that separated the reasoning closed it unless the budget ran out before any answer
        closed = bool(answer.strip()) or finish_reason != "length"
    else:
        reasoning, source, closed = inline.reasoning, inline.source, inline.closed
    status = completion_status(answer, finish_reason, error)
    done = Completion(
        reasoning=reasoning,
        content=answer,
        reasoning_source=source,
        reasoning_closed=closed and bool(reasoning),
        status=status,
    )
    return SplitResult(done, inline)
