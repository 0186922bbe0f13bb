"""Speed figures across records: latency distributions, throughput, goodput, and speed beside correctness.
First answer is Timed.first_content: the text's first token or a tool call's first delta (Record.timed)."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from qualeval.figures.accuracy import cell_of
from qualeval.records import (
    TRUNCATED,
    Distribution,
    Linked,
    PromptCache,
    Speed,
    Timed,
    Truncation,
)
from qualeval.wire import interpolated, merge, percentile

__all__ = [
    "distribution",
    "duration_of",
    "length_bucket",
    "linked",
    "prompt_cache",
    "speed",
    "untimed",
]


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


def duration_of(rows: Sequence[Timed]) -> float | None:
    """Seconds from the first request sent to the last response finished; None when a time is missing or the
    rows span sessions (a resumed run's pause is no part of any rate)."""
    if not rows or len({r.session for r in rows}) > 1 or any(r.sent_at is None or r.end is None for r in rows):
        return None
    sent = [(r.sent_at, r.end) for r in rows if r.sent_at is not None and r.end is not None]  # all of them, as checked
    start = min(at for at, _ in sent)
    finish = max(at + end / 1000.0 for at, end in sent)
    return max(finish - start, 1e-9)


def untimed(rows: Sequence[Timed]) -> str | None:
    """Why the measured rows have no duration, and so no aggregate rate (tok/s, requests/s); None when they have
    one."""
    timed = [r for r in rows if not r.warmup and r.the_models]
    if not timed:
        return "no measured request"
    sessions = len({r.session for r in timed})
    if sessions > 1:
        return (
            f"its requests span {sessions} sessions (the run was resumed), and the pause between sessions is no "
            "part of any rate, so there is no one duration to divide by"
        )
    if any(r.sent_at is None or r.end is None for r in timed):
        return "a request lacks its send time or its end, so the run has no duration"
    return None


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
    timed = [r for r in rows if not r.warmup and r.the_models]
    duration = duration_of(timed) if throughput else None
    tokens = sum(r.completion_tokens or 0 for r in timed)
    met = [_meets(r, slo) for r in timed] if slo else []
    sent = sum(r.requests for r in timed)
    return Speed(
        requests=sent,
        episodes=sum(r.episode for r in timed) or None,
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
        request_throughput=sent / duration if duration else None,
        goodput=sum(met) / duration if (met and duration) else None,
        slo_met=sum(met) / len(met) if met else None,
        prompt_cache=prompt_cache(timed),
    )


def prompt_cache(rows: Sequence[Timed]) -> PromptCache | None:
    """The prompt tokens the server took from its prefix cache, over the requests that say how many; None when
    none does (a server that reports nothing is not a server with a cold cache)."""
    told = [r for r in rows if r.cached_tokens is not None and r.prompt_tokens]
    if not told:
        return None
    prompt = sum(r.prompt_tokens or 0 for r in told)
    cached = sum(r.cached_tokens or 0 for r in told)
    return PromptCache(requests=len(told), prompt_tokens=prompt, cached_tokens=cached, share=cached / prompt)


LENGTH_EDGES = (0, 256, 512, 1024, 2048, 4096, 8192)


def length_bucket(tokens: int | None) -> str:
    if not tokens:
        return "0"
    for low, high in itertools.pairwise(LENGTH_EDGES):
        if tokens < high:
            return f"{max(low, 1)}-{high - 1}"
    return f"{LENGTH_EDGES[-1]}+"


def linked(rows: Sequence[Timed], duration_s: float | None) -> Linked:
    """Speed read with quality. `duration_s` is the measured requests' time (`speed`'s, warm-ups left out): the
    figures per minute and per second count the right answers of those requests alone."""
    buckets: dict[str, list[bool]] = defaultdict(list)
    answered = [r for r in rows if r.the_models]  # a failed request or a refusal has no answer to count
    for r in answered:
        buckets[length_bucket(r.reasoning_tokens)].append(r.correct)
    order = {b: i for i, b in enumerate(["0", *(length_bucket(low or 1) for low in LENGTH_EDGES)])}
    by_length = {b: cell_of(flags) for b, flags in sorted(buckets.items(), key=lambda kv: order.get(kv[0], 99))}
    outcome = {
        name: d
        for name, flag in (("correct", True), ("wrong", False))
        if (d := distribution(r.end for r in answered if r.correct is flag))
    }
    correct = sum(r.correct for r in answered)
    # a rate over `duration_s` counts the requests that time spans: the measured ones, never a warm-up
    timed_correct = sum(r.correct for r in answered if not r.warmup)
    tokens = sum(r.completion_tokens or 0 for r in answered)
    cut = [r for r in answered if r.status in TRUNCATED]
    budgets = Counter(r.budget for r in answered if r.budget)
    budget = next(iter(budgets)) if len(budgets) == 1 else None
    finished = sorted(n for r in answered if (n := r.request_tokens) and r.status in ("ok", "empty_content"))
    suggested = 256 * math.ceil(1.25 * interpolated(finished, 0.99) / 256) if finished else None
    if len(budgets) > 1:  # budget levels: lengths pooled over them suggest nothing; the frontier reads each budget
        suggested = None
    if budget and answered and len(cut) / len(answered) > 0.05:
        # every answer cut off says only that they are longer than the budget: double it, at the least
        suggested = max(suggested or 0, 2 * budget)
    return Linked(
        accuracy_by_reasoning_length=by_length,
        latency_by_outcome=outcome,
        correct_per_minute=timed_correct / (duration_s / 60.0) if duration_s else None,
        tokens_per_correct=tokens / correct if correct else None,
        seconds_per_correct=duration_s / timed_correct if (duration_s and timed_correct) else None,
        truncation=Truncation(
            budget=budget,
            truncated=len(cut),
            rate=len(cut) / len(answered),
            suggested_budget=suggested,
        )
        if answered
        else None,
    )
