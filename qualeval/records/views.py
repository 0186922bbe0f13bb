"""What the figures read of a record, compactly: never persisted, only derived from a Record (its outcome() and
timed() methods) or, offline, from a judged line. They live beside the record so that the modules computing
summaries and speed figures can import them without importing each other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qualeval.records.statuses import NOT_THE_MODELS, Agreement, Rung, Status

__all__ = ["Outcome", "Timed"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a summary needs of one final answer, from a live record or an offline item."""

    status: Status
    correct: bool
    rung: Rung
    meta: Mapping[str, Any] = field(default_factory=dict)
    naive_correct: bool | None = None
    held: bool | None = None
    """Whether a structured-output constraint held (None: none sent, or nothing to judge)."""
    rescued: bool = False
    rescue_correct: bool = False
    item: str | None = None
    """The item answered (its sample id): accuracy counts an item once. None: an item of its own."""
    measures: Mapping[str, Sequence[float]] | None = None
    """A scorer's own figures for this answer, each (hits, out of): IFEval's instruction-level counts."""
    agreement: Agreement | None = None
    """Followup mode: how the follow-up's answer stood to the content's (records.Agreement)."""
    error: str | None = None
    """The endpoint's reason, when the request failed for good (no answer of the model's to count)."""


@dataclass(frozen=True, slots=True)
class Timed:
    """One record's timing and tokens, compactly (runs can hold 100,000 records)."""

    level: str = ""
    warmup: bool = False
    session: str = ""
    sent_at: float | None = None
    correct: bool = False
    status: Status = "ok"
    ttft: float | None = None
    first_reasoning: float | None = None
    first_content: float | None = None
    """The first answer: the text answer's first token or, where the answer is a tool call, its first delta,
    whichever came first (Record.timed): a good call is as much an answer as text is."""
    end: float | None = None
    itl_hist: Mapping[int, int] = field(default_factory=dict)
    itl_count: int = 0
    itl_mean: float | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    answer_tokens: int | None = None
    budget: int | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    """Prompt tokens served from the server's prefix cache; None when it reported none."""
    episode: bool = False
    """An agent's episode: its times and tokens are summed over its requests (its steps)."""
    requests: int = 1
    """The requests the record stands for: an episode's steps (its times and tokens are summed over them)."""
    longest: int | None = None
    """An episode: the most completion tokens of one of its requests (the budget bounds each request, not their
    sum); None: the record's own completion tokens (Timed.request_tokens)."""

    @property
    def the_models(self) -> bool:
        """An answer of the model's: not an endpoint failure nor a reference server's unknown-question refusal,
        whose timing and tokens measure no model and so count in no speed figure."""
        return self.status not in NOT_THE_MODELS

    @property
    def request_tokens(self) -> int | None:
        """The completion tokens of its longest request: what a max_tokens budget bounds."""
        return self.longest if self.longest is not None else self.completion_tokens

    @property
    def tpot(self) -> float | None:
        """vllm bench serve: (latency - TTFT) / (output tokens - 1); output tokens include reasoning."""
        if self.ttft is None or self.end is None or not self.completion_tokens or self.completion_tokens < 2:
            return None
        if self.episode:  # an episode's time past its first token holds its other requests' TTFT
            return None
        return (self.end - self.ttft) / (self.completion_tokens - 1)

    @property
    def reasoning_duration(self) -> float | None:
        """From the first reasoning token to the first answer token (or the end, when none came)."""
        if self.first_reasoning is None:
            return None
        stop = self.first_content if self.first_content is not None else self.end
        return None if stop is None else max(0.0, stop - self.first_reasoning)

    @property
    def output_rate(self) -> float | None:
        """Output tokens per second of this request, over its whole latency."""
        if not self.end or not self.completion_tokens:
            return None
        return self.completion_tokens / (self.end / 1000.0)
