"""A board's speed ratios: each config against the baseline on TTFT, first-answer latency (the text's first token
or a tool call's first delta, as every speed figure: Record.timed) and latency p50 and on
output tok/s, over the requests both answered (warm-ups aside, as every speed figure), read against noise by the
rule compare reads its own by (qualeval.figures.noise.read_speed), on the p50 where compare reads means: faster or
slower only where the ratio's paired bootstrap interval excludes 1 and, with a rerun of the baseline, the ratio is
larger than the rerun moved on its own (noise.spread_factor, the gate's spread too). The aggregate output tok/s
is one statistic for all three: compare reads it through `paired_ratio` too, with the same seed.

Two cases are not read:
- TTFT and first-answer latency where one side's prompts came from a prefix cache the other's did not (the test
  compare and gate make, qualeval.figures.repeats.cached_side): the figure measured cache hits, not prompt
  processing. So with a rerun that was served from the cache the baseline filled: its spread is no spread.
- On open-loop runs (a set arrival rate) the aggregate tok/s is the arrival rate's whatever the config: output
  tok/s is then each request's mean, as the gate judges it (gate_clauses.open_loop).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from qualeval.figures.noise import read_speed, spread_factor
from qualeval.figures.repeats import cached_side
from qualeval.figures.runset import Group, Key, Loaded
from qualeval.figures.speeds import duration_of
from qualeval.records import SpeedRatio, Timed

__all__ = ["FIGURES", "output_rate", "paired_ratio", "speed_ratios"]

BOOTSTRAP = 2000
FIGURES = ("ttft_p50", "first_answer_p50", "latency_p50", "output_tps")
_CACHED = frozenset({"ttft_p50", "first_answer_p50"})
"""The figures that start at the request sent, so hold the prompt's processing that a prefix cache skips."""
_P50: dict[str, Callable[[Timed], float | None]] = {
    "ttft_p50": lambda t: t.ttft,
    "first_answer_p50": lambda t: t.first_content,
    "latency_p50": lambda t: t.end,
}

Pairs = list[tuple[Timed, Timed]]


def output_rate(group: Group, per_request: bool) -> float | None:
    """A config's output tok/s as the board shows and compares it: the aggregate, or on an open-loop board the
    mean of each request's."""
    if not per_request:
        return group.speed.output_throughput
    return group.speed.output_rate.mean if group.speed.output_rate else None


def _pairs(base: Loaded, other: Loaded, keys: Sequence[Key]) -> Pairs:
    """The requests both runs answered, warm-ups aside."""
    out = []
    for key in keys:
        a, b = base.records[key].timed(), other.records[key].timed()
        if a.the_models and b.the_models and not a.warmup and not b.warmup:
            out.append((a, b))
    return out


def _statistic(name: str, pairs: Pairs, per_request: bool) -> tuple[Any, Any, Callable[[Any, Any], Any]] | None:
    """Each side's per-request arrays for `name`, and the statistic of one side over resampled indices (rows of
    an index matrix); None where the figure is missing on a request or cannot be formed."""
    import numpy as np

    if name in _P50:
        read = _P50[name]
        kept = [(read(a), read(b)) for a, b in pairs]
        values = [(x, y) for x, y in kept if x is not None and y is not None]
        a, b = (np.array([v[i] for v in values], dtype=float) for i in (0, 1))
        return a, b, lambda side, index: np.median(side[index], axis=-1)
    if per_request:
        rates = [(a.output_rate, b.output_rate) for a, b in pairs]
        values = [(x, y) for x, y in rates if x is not None and y is not None]
        a, b = (np.array([v[i] for v in values], dtype=float) for i in (0, 1))
        return a, b, lambda side, index: side[index].mean(axis=-1)
    # the aggregate: tokens over the span from the first request sent to the last finished, as Speed has it
    sides = [[a for a, _ in pairs], [b for _, b in pairs]]
    if any(duration_of(side) is None for side in sides):
        return None  # a time missing, or requests spanning sessions: no rate
    # duration_of has checked that every request has its times
    rows = [[(r.completion_tokens or 0, r.sent_at or 0.0, (r.sent_at or 0.0) + (r.end or 0.0) / 1000) for r in side]
            for side in sides]  # fmt: skip
    arrays = [np.array(side, dtype=float) for side in rows]

    def aggregate(side: Any, index: Any) -> Any:
        rows = side[index]
        span = np.maximum(rows[..., 2].max(axis=-1) - rows[..., 1].min(axis=-1), 1e-9)
        return rows[..., 0].sum(axis=-1) / span

    return arrays[0], arrays[1], aggregate


def paired_ratio(
    name: str, pairs: Pairs, again: Pairs | None, per_request: bool, seed: int
) -> tuple[float, float | None, float | None, float | None] | None:
    """(ratio, low, high, spread) of config over baseline; None where the figure is missing."""
    import numpy as np

    found = _statistic(name, pairs, per_request)
    if found is None or len(found[0]) == 0:
        return None
    a, b, stat = found
    every = np.arange(len(a))
    base, value = float(stat(a, every)), float(stat(b, every))
    if not base or value <= 0:
        return None
    low = high = None
    if len(a) >= 2:
        index = np.random.default_rng(seed).integers(0, len(a), size=(BOOTSTRAP, len(a)))
        ratios = stat(b, index) / np.where((d := stat(a, index)) == 0, np.nan, d)
        low, high = (float(x) for x in np.nanpercentile(ratios, [2.5, 97.5]))
    spread = None
    if again is not None:
        rerun = _statistic(name, again, per_request)
        if rerun is not None and len(rerun[0]):
            whole = np.arange(len(rerun[0]))
            spread = spread_factor(float(rerun[2](rerun[1], whole)), float(rerun[2](rerun[0], whole)))
    return value / base, low, high, spread


def _cached(name: str, shares: tuple[float | None, float | None], again: tuple[float | None] | None) -> str | None:
    """Why a TTFT-like figure is not comparable: a side (or the baseline's rerun) served from a prefix cache."""
    if name not in _CACHED:
        return None
    base, other = shares
    side = cached_side(base, other)
    if side is not None:
        who, mine, theirs = (("the baseline", base, other), ("this config", other, base))[side]
        told = "not reported" if theirs is None else f"{theirs:.0%}"
        return (
            f"not comparable (cached): {who}'s prompts were {mine or 0:.0%} served from a prefix cache, the "
            f"other's {told}, so its figure measured cache hits, not prompt processing"
        )
    if again is not None and cached_side(base, again[0]) is not None:
        return (
            "not comparable (cached): the baseline's rerun and the baseline took their prompts from a prefix cache "
            "unalike, so the rerun's spread is no spread"
        )
    return None


def speed_ratios(
    base: Loaded, other: Loaded, again: Loaded | None, keys: Sequence[Key], shares: tuple[float | None, ...], *,
    per_request: bool, seed: int = 0,
) -> dict[str, SpeedRatio]:  # fmt: skip
    """Each figure of `other` against `base` over the requests both answered, read against noise; `shares`: the
    baseline's, this config's and (with `again`) the rerun's share of prompt tokens served from a prefix cache
    (None: not reported)."""
    pairs = _pairs(base, other, keys)
    rerun = _pairs(base, again, keys) if again is not None else None
    out = {}
    for name in FIGURES:
        found = paired_ratio(name, pairs, rerun, per_request, seed)
        if found is None:
            continue
        ratio, low, high, spread = found
        cached = _cached(name, (shares[0], shares[1]), (shares[2],) if again is not None else None)
        if cached is not None:
            out[name] = SpeedRatio(ratio=ratio, low=low, high=high, reading=cached, not_comparable="cached")
            continue
        reading = read_speed(ratio, low, high, spread)
        out[name] = SpeedRatio(
            ratio=ratio, low=low, high=high, spread=spread, within_spread=reading.within_spread,
            within_noise=reading.within, reading=reading.said,
        )  # fmt: skip
    return out
