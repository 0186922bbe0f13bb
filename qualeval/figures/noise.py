"""The noise floor under a comparison: the smallest difference its items can show, and how much two runs of the
same configuration differ on their own.

Two greedy runs of one server are not the same run: batching changes the arithmetic, and a same-server rerun
moved GSM8K from 82.79% to 82.41% with only 22.7% of its outputs byte-identical (vLLM PR #54705). A difference
between A and B smaller than that is noise, and one smaller than the minimum detectable difference cannot be told
from none.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

from qualeval.records import NOT_THE_MODELS, Noise, Record

__all__ = ["ALPHA", "mcnemar_exact", "minimum_detectable", "run_noise", "within_noise"]

ALPHA = 0.05
POWER = 0.8


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of b against b + c trials at one half."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def minimum_detectable(pairs: int, discordant: int, *, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest accuracy difference (a share) that McNemar's test finds with `power` at level `alpha`, on
    `pairs` paired items at the discordance seen. It solves the normal approximation (Connor 1987)
    sqrt(n) d = z(1 - alpha/2) sqrt(p) + z(power) sqrt(p - d^2) for d, p the share of discordant pairs. A
    difference d needs at least d of the pairs discordant, so where the discordance seen is smaller than the
    answer, p is d itself. None without pairs."""
    if pairs <= 0:
        return None
    seen = discordant / pairs
    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)

    def excess(d: float) -> float:
        p = max(seen, d)
        return math.sqrt(pairs) * d - z_a * math.sqrt(p) - z_b * math.sqrt(max(p - d * d, 0.0))

    low, high = 0.0, 1.0
    if excess(high) < 0:
        return None  # too few pairs: not even every item changing could be told from chance
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if excess(mid) < 0 else (low, mid)
    return high


def run_noise(
    first: dict[tuple[str, ...], Record], again: dict[tuple[str, ...], Record], group: Callable[[tuple[str, ...]], str]
) -> dict[str, Noise]:
    """Per group (`group` names a pair key's: the task, or the task at a load level, as the comparison groups
    its pairs), two runs of the same configuration side by side: the share of byte-identical outputs (reasoning
    and content), the discordant pairs, the accuracy difference (again - first) and the smallest difference
    these pairs could detect. Pairs where either request got no answer of the model's (an endpoint error, a
    reference server's refusal of a question it did not know) are left out."""
    by_task: dict[str, list[tuple[Record, Record]]] = {}
    for key in sorted(set(first) & set(again)):
        one, two = first[key], again[key]
        failed = one.status in NOT_THE_MODELS or two.status in NOT_THE_MODELS
        if not failed:
            by_task.setdefault(group(key), []).append((one, two))
    out = {}
    for task, pairs in by_task.items():
        same = sum(a.content == b.content and a.reasoning == b.reasoning for a, b in pairs)
        up = sum(b.score.correct and not a.score.correct for a, b in pairs)
        down = sum(a.score.correct and not b.score.correct for a, b in pairs)
        difference = (up - down) / len(pairs)
        detectable = minimum_detectable(len(pairs), up + down)
        out[task] = Noise(
            pairs=len(pairs),
            identical=same / len(pairs),
            discordant=up + down,
            difference=difference,
            detectable=detectable,
            # too few pairs to detect any difference: no B - A can be told from the noise
            floor=1.0 if detectable is None else max(abs(difference), detectable),
        )
    return out


def within_noise(difference: float, noise: Noise) -> bool:
    """Whether B - A is no larger than what two runs of A's configuration already differ by (the noise floor)."""
    return abs(difference) <= noise.floor
