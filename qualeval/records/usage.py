"""A request's usage and timing as records keep them (a Record's, a step's, a follow-up's): token counts, the
times on one clock from the send, the inter-token gaps, and llama.cpp's own timing report."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

__all__ = ["ItlSummary", "ServerTimings", "Timing", "Usage"]


def _unreported(value: object) -> bool:
    return value is None


class Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    answer_tokens: int | None = None
    reasoning_estimated: bool = False
    """True when the server reported no reasoning count and it was estimated from the text."""
    completion_estimated: bool = False
    """True when the server reported no usage at all and completion tokens were estimated."""
    cached_tokens: int | None = Field(None, exclude_if=_unreported)  # an older record is written back as it was
    """Prompt tokens the server took from its prefix cache (usage.prompt_tokens_details.cached_tokens, DeepSeek's
    prompt_cache_hit_tokens, llama.cpp's timings.cache_n); None when it reported none."""


class ItlSummary(BaseModel):
    """Gaps (ms) between consecutive chunks that carried text, reasoning included."""

    count: int
    mean: float
    p50: float
    p90: float
    p99: float
    max: float
    hist: dict[int, int] = Field(default_factory=dict)
    """The gaps as a sparse log-scale histogram (qualeval.wire.histogram), for percentiles pooled over requests."""


def _unretried(value: float | None) -> bool:
    return value is None


class Timing(BaseModel):
    """Milliseconds from the moment the request's first attempt was sent, on one monotonic clock."""

    first_byte: float | None = None
    ttft: float | None = None
    first_reasoning: float | None = None
    first_content: float | None = None
    end: float | None = None
    itl: ItlSummary | None = None
    decode_rate: float | None = None
    """Completion tokens per second after the first token: (completion_tokens - 1) / (end - ttft)."""
    queued: float | None = None
    """Milliseconds the request waited in the client for a free slot before it was sent: never server time."""
    retrying: float | None = Field(default=None, exclude_if=_unretried)
    """Milliseconds from the first attempt's send to the answering attempt's, for a request answered after failed
    attempts (None: the first attempt answered). Every time above counts from the first attempt, so includes it:
    what the caller waited, retries and the waits between them included. Written only when set."""


class ServerTimings(BaseModel):
    """llama.cpp's `timings` object (server_slot_stats::to_json): milliseconds and token counts as the server
    measured them. Its context holds prompt_n + cache_n + predicted_n tokens."""

    model_config = ConfigDict(extra="allow")  # a newer build's fields, kept as they came

    cache_n: int | None = None
    """Prompt tokens taken from the KV cache (builds from about b4000 on)."""
    prompt_n: int | None = None
    """Prompt tokens evaluated."""
    prompt_ms: float | None = None
    prompt_per_token_ms: float | None = None
    prompt_per_second: float | None = None
    predicted_n: int | None = None
    """Tokens generated."""
    predicted_ms: float | None = None
    predicted_per_token_ms: float | None = None
    predicted_per_second: float | None = None
    draft_n: int | None = None
    """Speculative decoding only: tokens drafted, and how many of them were accepted."""
    draft_n_accepted: int | None = None

    @model_serializer(mode="wrap")
    def _as_sent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # the keys the server sent and no others: an older build's report is not padded with nulls
        return {k: v for k, v in handler(self).items() if k in self.model_fields_set}
