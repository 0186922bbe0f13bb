"""From what an attempt read off the wire to a ChatResponse: the split, timing, usage; and error texts.

Runs once per request, after the body ended, so nothing here is on the per-chunk path.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from email.utils import parsedate_to_datetime
from time import time
from typing import Any

import orjson

from qualeval.errors import QualevalWarning
from qualeval.reasoning import REASONING_FIELDS, ReasoningFormat, known_finish, split_completion
from qualeval.records import CallTiming, ItlSummary, Timing, Usage
from qualeval.wire.histogram import bucket_of, interpolated
from qualeval.wire.models import ChatRequest, ChatResponse
from qualeval.wire.stream import Attempt

__all__ = ["build_response", "error_text", "failed_response", "retry_after", "usage_of"]


def itl_of(gaps: list[float]) -> ItlSummary | None:
    if not gaps:
        return None
    ordered = sorted(gaps)
    return ItlSummary(
        count=len(ordered),
        mean=sum(ordered) / len(ordered),
        p50=interpolated(ordered, 0.5),
        p90=interpolated(ordered, 0.9),
        p99=interpolated(ordered, 0.99),
        max=ordered[-1],
        hist=dict(Counter(map(bucket_of, gaps))),
    )


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time())
    except (TypeError, ValueError):
        return None


def error_text(body: bytes) -> str:
    """A one-line description of an error body, JSON or not."""
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body.decode("utf-8", "replace").strip().replace("\n", " ")
        return text[:200] or "(empty body)"
    err = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err)[:300]
    if isinstance(obj, dict) and "message" in obj:
        return str(obj["message"])[:300]
    return str(err or obj)[:300]


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _cached(raw: dict[str, Any], timings: dict[str, Any] | None) -> int | None:
    """Prompt tokens from the server's prefix cache, wherever this server reports them; None when it does not."""
    details = raw.get("prompt_tokens_details")
    found = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    if found is None:
        found = _count(raw.get("prompt_cache_hit_tokens"))  # DeepSeek's own key
    if found is None and timings:
        found = _count(timings.get("cache_n"))
    return found


def usage_of(raw: dict[str, Any] | None, timings: dict[str, Any] | None, reasoning: str, content: str) -> Usage:
    """Token counts as the server reported them; llama.cpp's `timings` when it sent no usage; else estimated."""
    raw = raw or {}
    completion, prompt = raw.get("completion_tokens"), raw.get("prompt_tokens")
    if completion is None and timings:
        # llama.cpp without a usage chunk: predicted_n is what it generated, prompt_n what it evaluated
        # after reusing cache_n tokens from its prompt cache (usage.prompt_tokens = prompt_n + cache_n)
        completion = _count(timings.get("predicted_n"))
        evaluated = _count(timings.get("prompt_n"))
        if prompt is None and evaluated is not None:
            prompt = evaluated + (_count(timings.get("cache_n")) or 0)
    details = raw.get("completion_tokens_details") or {}
    counted = details.get("reasoning_tokens")
    if counted is None:
        counted = raw.get("reasoning_tokens")  # SGLang 0.5.x puts it at the top level of usage
    usage = Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        reasoning_tokens=counted,
        cached_tokens=_cached(raw, timings),
    )
    made, thought = usage.completion_tokens, usage.reasoning_tokens
    if made is None:
        # no usage reported: roughly four characters per token for English text
        made = (len(reasoning) + len(content) + 3) // 4
        usage.completion_tokens, usage.completion_estimated = made, True
    if thought is None:
        total_chars = len(reasoning) + len(content)
        share = len(reasoning) / total_chars if total_chars else 0.0
        thought = round(made * share)
        usage.reasoning_tokens, usage.reasoning_estimated = thought, True
    usage.answer_tokens = max(0, made - thought)
    return usage


def _ms(t: float | None, t0: float) -> float | None:
    return None if t is None else (t - t0) * 1000.0


def _stream_timing(timing: Timing, got: Attempt, request: ChatRequest, split: Any) -> None:
    """TTFT, first reasoning and first answer character, ITL: from the arrival stamps of the chunks."""
    acc, t0, done = got.stream, got.sent, split.completion
    assert acc is not None
    inline = split.inline
    first_inline = acc.time_of(inline.reasoning_at) if inline else None
    first_r = min((t for t in (got.reasoning_t, first_inline) if t is not None), default=None)
    first_c = acc.time_of(inline.content_at) if inline and done.content else None
    if request.thinking is False and done.content and inline is None:
        # thinking off and no channel format to split: the answer is the content field, or (vLLM's deepseek_r1
        # parser) the reasoning field's text when content stayed empty
        moved = got.reasoning_t is not None and not (got.content or "").strip()
        first_c = got.reasoning_t if moved else acc.time_of(0)
    timing.ttft = _ms(got.ttft, t0)
    timing.first_reasoning = _ms(first_r, t0) if done.reasoning else None
    timing.first_content = _ms(first_c, t0)
    timing.itl = itl_of(got.gaps)


def _call_timing(got: Attempt, split: Any) -> CallTiming | None:
    """The calls' timing, its reasoning before the first call counting the pieces of reasoning that came inline
    in content (`<think>` split out of it) as well as those of a reasoning field: streamed content pieces within
    the reasoning's span that arrived by the first tool-call delta."""
    timing, acc, inline = got.call_timing, got.stream, split.inline
    if timing is None or timing.first_delta is None or acc is None or inline is None or not inline.reasoning:
        return timing
    start = inline.reasoning_at or 0
    end, first = start + len(inline.reasoning), got.sent + timing.first_delta
    ends = [*acc.content_at[1:], acc.content_len]  # a piece overlaps the span: `<think>more` holds reasoning
    spans = zip(acc.content_at, ends, acc.content_t, strict=True)
    pieces = sum(1 for at, stop, t in spans if at < end and stop > start and t <= first + 1e-9)
    if not pieces:
        return timing
    return timing.model_copy(update={"reasoning_tokens_before": (timing.reasoning_tokens_before or 0) + pieces})


def _finish(request: ChatRequest, got: Attempt, told: set[str]) -> str | None:
    """The finish reason the split judges by, in OpenAI's spelling (`MAX_TOKENS` is `length`): a reply that made
    exactly `max_tokens` tokens and says "stop" was cut by the budget (some budget enforcers answer so), the same
    truncation as "length". A word qualeval does not know is a warning, once per word in `told`, and the answer is
    judged by its text alone. The server's own word is kept on the response as it sent it."""
    finish = known_finish(got.finish) if got.finish else None
    if got.finish and finish is None and got.finish not in told:
        told.add(got.finish)
        warnings.warn(
            f"the server ended a response with finish_reason '{got.finish}', which qualeval does not know: whether "
            "such answers were cut off is not known, so they are judged as ended (their records keep the word)",
            QualevalWarning,
            stacklevel=2,
        )
    if finish != "stop" or not request.max_tokens:
        return finish
    made = usage_of(got.usage, got.timings, "", "")  # counted by the server, never estimated from text
    return "length" if not made.completion_estimated and made.completion_tokens == request.max_tokens else "stop"


def build_response(
    request: ChatRequest,
    got: Attempt,
    formats: Sequence[ReasoningFormat],
    *,
    opened: bool,
    attempts: int,
    queued: float | None,
    told: set[str] | None = None,
) -> ChatResponse:
    """Split the attempt's text into reasoning and answer, and time and count it. `told`: the unknown finish
    reasons already warned of (the client's, so a server's word is said once, not once per response)."""
    picked = next(((n, got.fields[n]) for n in (*REASONING_FIELDS, "reasoning_details") if n in got.fields), None)
    aborted = known_finish(got.finish) == "abort" if got.finish else False
    error = f"the server aborted the generation (finish_reason '{got.finish}')" if aborted else None
    split = split_completion(
        content=got.content,
        field=picked,
        finish_reason=_finish(request, got, set() if told is None else told),
        formats=formats,
        thinking=request.thinking,
        opened=opened,
        stops=request.stop,
        error=error,
        calls=bool(got.calls),
    )
    done = split.completion
    timing = Timing(first_byte=_ms(got.first_byte, got.sent), end=_ms(got.end, got.sent), queued=queued)
    if got.stream is not None:
        _stream_timing(timing, got, request, split)
    usage = usage_of(got.usage, got.timings, done.reasoning, done.content)
    if timing.ttft is not None and timing.end is not None and usage.completion_tokens:
        span = (timing.end - timing.ttft) / 1000.0
        if usage.completion_tokens > 1 and span > 0:
            timing.decode_rate = (usage.completion_tokens - 1) / span
    return ChatResponse(
        completion=done,
        raw_content=got.content,
        raw_reasoning=got.fields,
        finish_reason=got.finish,
        tool_calls=got.calls,
        call_timing=_call_timing(got, split),
        delta_without_index=got.delta_without_index,
        usage=usage,
        timing=timing,
        stream=request.stream,
        attempts=attempts,
        http_status=200,
        error=error,
        server_timings=got.timings,
        unknown_question=got.unknown_question,
    )


def failed_response(request: ChatRequest, attempts: int, status: int | None, error: str) -> ChatResponse:
    done = split_completion(content=None, field=None, finish_reason=None, formats=(), error=error)
    return ChatResponse(
        completion=done.completion, stream=request.stream, attempts=attempts, http_status=status, error=error
    )
