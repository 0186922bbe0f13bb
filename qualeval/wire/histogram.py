"""A sparse log-scale histogram of milliseconds: pooled percentiles over many requests without keeping every
value. Buckets are 5% wide, so a percentile read back is within 2.5% of the exact one."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["bucket_of", "interpolated", "merge", "percentile"]

_BASE_MS = 0.01
_RATIO = 1.05
_LOG = math.log(_RATIO)


def bucket_of(ms: float) -> int:
    """-1 holds everything under 0.01 ms (chunks read in the same network read arrive together)."""
    return -1 if ms < _BASE_MS else int(math.log(ms / _BASE_MS) / _LOG)


def _value(bucket: int) -> float:
    return 0.0 if bucket < 0 else _BASE_MS * _RATIO ** (bucket + 0.5)


def merge(histograms: Iterable[Mapping[int, int]]) -> Counter[int]:
    total: Counter[int] = Counter()
    for hist in histograms:
        total.update({int(k): v for k, v in hist.items()})
    return total


def percentile(hist: Mapping[int, int], q: float) -> float | None:
    count = sum(hist.values())
    if count == 0:
        return None
    rank = q * (count - 1)
    seen = 0
    for bucket in sorted(hist):
        seen += hist[bucket]
        if seen > rank:
            return _value(bucket)
    return _value(max(hist))


def interpolated(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolating linearly between neighbours (numpy's default)."""
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
