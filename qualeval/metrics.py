"""Figures across records: repeated sampling (mean, maj@K, pass@K) and speed."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from qualeval.histogram import merge, percentile
from qualeval.summary import Cell

__all__ = [
    "Attempt",
    "Distribution",
    "Linked",
    "Repeated",
    "Speed",
    "Timed",
    "Truncation",
    "distribution",
    "interpolated",
    "length_bucket",
    "linked",
    "repeated",
    "speed",
]


@dataclass(frozen=True, slots=True)
class Attempt:
    item: str
    correct: bool
    value: str | None


class Repeated(BaseModel):
    """K samples per item. Standard errors are clustered by item: the item, not the sample, is the unit."""

    k: int
    items: int
    mean: float
    mean_se: float
    maj_at_k: float
    maj_se: float
    pass_at_k: float
    pass_se: float
    pass_at: dict[int, float] = {}
    """Unbiased pass@k (Chen et al., 2021) for k = 1, 2, 5, 10, 20, 50, 100 and K, as far as K samples allow:
    per item 1 - C(n-c, k) / C(n, k) with c of its n samples right, averaged over items."""


def _se(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def repeated(attempts: Iterable[Attempt], k: int) -> Repeated:
    by_item: dict[str, list[Attempt]] = defaultdict(list)
    for a in attempts:
        by_item[a.item].append(a)
    per_item = [sum(a.correct for a in tries) / len(tries) for tries in by_item.values()]
    majority, passed = [], []
    for tries in by_item.values():
        votes = Counter(a.value for a in tries if a.value is not None)
        if votes:
            top = votes.most_common(1)[0][0]  # ties go to the value seen first
            majority.append(float(next(a.correct for a in tries if a.value == top)))
        else:
            majority.append(0.0)
        passed.append(float(any(a.correct for a in tries)))
    n = len(per_item)
    most = min((len(t) for t in by_item.values()), default=0)
    ks = sorted({size for size in (1, 2, 5, 10, 20, 50, 100, k) if size <= most})
    pass_at = {
        size: sum(pass_at_k(len(t), sum(a.correct for a in t), size) for t in by_item.values()) / n for size in ks
    }
    return Repeated(
        k=k,
        items=n,
        mean=sum(per_item) / n if n else 0.0,
        mean_se=_se(per_item),
        maj_at_k=sum(majority) / n if n else 0.0,
        maj_se=_se(majority),
        pass_at_k=sum(passed) / n if n else 0.0,
        pass_se=_se(passed),
        pass_at=pass_at,
    )


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that k of n samples, c of them right, drawn without replacement include a right one."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


class Distribution(BaseModel):
    n: int
    mean: float
    p50: float
    p90: float
    p99: float


def interpolated(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolating linearly between neighbours (numpy's default)."""
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def distribution(values: Iterable[float | None]) -> Distribution | None:
    ordered = sorted(v for v in values if v is not None)
    if not ordered:
        return None
    return Distribution(
        n=len(ordered),
        mean=sum(ordered) / len(ordered),
        p50=interpolated(ordered, 0.5),
        p90=interpolated(ordered, 0.9),
        p99=interpolated(ordered, 0.99),
    )


@dataclass(frozen=True, slots=True)
class Timed:
    """One record's timing and tokens, compactly (runs can hold 100,000 records)."""

    level: str = ""
    warmup: bool = False
    session: str = ""
    sent_at: float | None = None
    correct: bool = False
    status: str = "ok"
    ttft: float | None = None
    first_reasoning: float | None = None
    first_content: float | None = None
    end: float | None = None
    itl_hist: Mapping[int, int] = field(default_factory=dict)
    itl_count: int = 0
    itl_mean: float | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    answer_tokens: int | None = None
    budget: int | None = None

    @property
    def tpot(self) -> float | None:
        """vllm bench serve: (latency - TTFT) / (output tokens - 1); output tokens include reasoning."""
        if self.ttft is None or self.end is None or not self.completion_tokens or self.completion_tokens < 2:
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


class Speed(BaseModel):
    """Milliseconds, tokens, tokens per second; warm-up requests excluded. Definitions follow vllm bench serve
    where it has one; `first_answer` and `reasoning_duration` are what reasoning models add."""

    requests: int
    duration_s: float | None
    """From the first request sent to the last response finished; None when the records span sessions."""
    ttft: Distribution | None
    first_answer: Distribution | None
    reasoning_duration: Distribution | None
    latency: Distribution | None
    tpot: Distribution | None
    itl: Distribution | None
    """Pooled over every gap of every request (the mean is exact, percentiles within 2.5%)."""
    output_rate: Distribution | None
    reasoning_tokens: Distribution | None
    answer_tokens: Distribution | None
    output_throughput: float | None
    """All output tokens over the duration."""
    request_throughput: float | None
    goodput: float | None = None
    """Requests per second that met every SLO limit (None without an SLO)."""
    slo_met: float | None = None
    """The share of requests that met every SLO limit."""


def _duration(rows: Sequence[Timed]) -> float | None:
    if not rows or len({r.session for r in rows}) > 1 or any(r.sent_at is None or r.end is None for r in rows):
        return None
    start = min(r.sent_at for r in rows)  # type: ignore[type-var]
    finish = max(r.sent_at + r.end / 1000.0 for r in rows)  # type: ignore[operator]
    return max(finish - start, 1e-9)


def _meets(row: Timed, slo: Mapping[str, float]) -> bool:
    values = {"ttft_ms": row.ttft, "first_answer_ms": row.first_content, "tpot_ms": row.tpot, "e2e_ms": row.end}
    return all(values[k] is not None and values[k] <= limit for k, limit in slo.items())  # type: ignore[operator]


def _itl(rows: Sequence[Timed]) -> Distribution | None:
    count = sum(r.itl_count for r in rows)
    if not count:
        return None
    hist = merge(r.itl_hist for r in rows)
    mean = sum((r.itl_mean or 0.0) * r.itl_count for r in rows) / count
    return Distribution(
        n=count,
        mean=mean,
        p50=percentile(hist, 0.5) or 0.0,
        p90=percentile(hist, 0.9) or 0.0,
        p99=percentile(hist, 0.99) or 0.0,
    )


def speed(rows: Sequence[Timed], slo: Mapping[str, float] | None = None, *, throughput: bool = True) -> Speed:
    """`throughput=False` for rows pooled across load levels, where a duration (and so any rate) means nothing."""
    timed = [r for r in rows if not r.warmup and r.status != "transport_error"]
    duration = _duration(timed) if throughput else None
    tokens = sum(r.completion_tokens or 0 for r in timed)
    met = [_meets(r, slo) for r in timed] if slo else []
    return Speed(
        requests=len(timed),
        duration_s=duration,
        ttft=distribution(r.ttft for r in timed),
        first_answer=distribution(r.first_content for r in timed),
        reasoning_duration=distribution(r.reasoning_duration for r in timed),
        latency=distribution(r.end for r in timed),
        tpot=distribution(r.tpot for r in timed),
        itl=_itl(timed),
        output_rate=distribution(r.output_rate for r in timed),
        reasoning_tokens=distribution(r.reasoning_tokens for r in timed),
        answer_tokens=distribution(r.answer_tokens for r in timed),
        output_throughput=tokens / duration if duration else None,
        request_throughput=len(timed) / duration if duration else None,
        goodput=sum(met) / duration if (met and duration) else None,
        slo_met=sum(met) / len(met) if met else None,
    )


LENGTH_EDGES = (0, 256, 512, 1024, 2048, 4096, 8192)


def length_bucket(tokens: int | None) -> str:
    if not tokens:
        return "0"
    for low, high in itertools.pairwise(LENGTH_EDGES):
        if tokens < high:
            return f"{max(low, 1)}-{high - 1}"
    return f"{LENGTH_EDGES[-1]}+"


class Truncation(BaseModel):
    budget: int | None
    """The max_tokens the requests were sent with (the most common one)."""
    truncated: int
    rate: float
    suggested_budget: int | None
    """The smallest multiple of 256 at least 1.25 x the p99 length of the answers that finished; at least
    double the budget when more than 5% were cut off (their true length is unknown, only that it was longer)."""


class Linked(BaseModel):
    """Speed and quality read together."""

    accuracy_by_reasoning_length: dict[str, Cell]
    latency_by_outcome: dict[str, Distribution]
    correct_per_minute: float | None
    tokens_per_correct: float | None
    seconds_per_correct: float | None
    truncation: Truncation


def linked(rows: Sequence[Timed], duration_s: float | None) -> Linked:
    buckets: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        buckets[length_bucket(r.reasoning_tokens)].append(r.correct)
    order = {b: i for i, b in enumerate(["0", *(length_bucket(low or 1) for low in LENGTH_EDGES)])}
    by_length = {b: Cell.of(flags) for b, flags in sorted(buckets.items(), key=lambda kv: order.get(kv[0], 99))}
    outcome = {
        name: d
        for name, flag in (("correct", True), ("wrong", False))
        if (d := distribution(r.end for r in rows if r.correct is flag and r.status != "transport_error"))
    }
    correct = sum(r.correct for r in rows)
    tokens = sum(r.completion_tokens or 0 for r in rows)
    cut = [r for r in rows if r.status in ("reasoning_truncated", "answer_truncated")]
    budgets = Counter(r.budget for r in rows if r.budget)
    budget = budgets.most_common(1)[0][0] if budgets else None
    finished = sorted(r.completion_tokens for r in rows if r.completion_tokens and r.status in ("ok", "empty_content"))
    suggested = None
    if finished:
        p99 = interpolated(finished, 0.99)
        suggested = 256 * math.ceil(1.25 * p99 / 256)
        if budget and rows and len(cut) / len(rows) > 0.05:
            suggested = max(suggested, 2 * budget)
    return Linked(
        accuracy_by_reasoning_length=by_length,
        latency_by_outcome=outcome,
        correct_per_minute=correct / (duration_s / 60.0) if duration_s else None,
        tokens_per_correct=tokens / correct if correct else None,
        seconds_per_correct=duration_s / correct if (duration_s and correct) else None,
        truncation=Truncation(
            budget=budget, truncated=len(cut), rate=len(cut) / len(rows) if rows else 0.0, suggested_budget=suggested
        ),
    )
