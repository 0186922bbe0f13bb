"""Figures across records: repeated sampling (mean, maj@K, pass@K) and speed."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

__all__ = ["Attempt", "Distribution", "Repeated", "Speed", "distribution", "repeated", "speed"]


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
    return Repeated(
        k=k,
        items=n,
        mean=sum(per_item) / n if n else 0.0,
        mean_se=_se(per_item),
        maj_at_k=sum(majority) / n if n else 0.0,
        maj_se=_se(majority),
        pass_at_k=sum(passed) / n if n else 0.0,
        pass_se=_se(passed),
    )


class Distribution(BaseModel):
    n: int
    mean: float
    p50: float
    p90: float
    p99: float


def _percentile(ordered: Sequence[float], q: float) -> float:
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
        p50=_percentile(ordered, 0.5),
        p90=_percentile(ordered, 0.9),
        p99=_percentile(ordered, 0.99),
    )


@dataclass(frozen=True, slots=True)
class Timed:
    ttft: float | None
    first_content: float | None
    end: float | None
    decode_rate: float | None
    reasoning_tokens: int | None
    answer_tokens: int | None
    completion_tokens: int | None


class Speed(BaseModel):
    """Milliseconds, tokens, tokens per second. `first_answer` is the time to the first answer token."""

    requests: int
    ttft: Distribution | None
    first_answer: Distribution | None
    latency: Distribution | None
    decode_rate: Distribution | None
    reasoning_tokens: Distribution | None
    answer_tokens: Distribution | None
    output_tokens_per_s: float | None
    """All completion tokens over the wall time of the run (aggregate throughput)."""
    requests_per_s: float | None


def speed(rows: Sequence[Timed], wall_s: float | None) -> Speed:
    tokens = sum(r.completion_tokens or 0 for r in rows)
    return Speed(
        requests=len(rows),
        ttft=distribution(r.ttft for r in rows),
        first_answer=distribution(r.first_content for r in rows),
        latency=distribution(r.end for r in rows),
        decode_rate=distribution(r.decode_rate for r in rows),
        reasoning_tokens=distribution(r.reasoning_tokens for r in rows),
        answer_tokens=distribution(r.answer_tokens for r in rows),
        output_tokens_per_s=tokens / wall_s if wall_s else None,
        requests_per_s=len(rows) / wall_s if wall_s else None,
    )
