"""The noise under a comparison: whether B - A can be told from chance, how much two runs of the same
configuration differ on their own, and the smallest difference a comparison's items can detect.

One reading, which compare, board and gate all give (`read_noise`): B - A is beyond noise when McNemar's exact test
on its pairs rejects at 0.05 and, with a rerun of the baseline, it is larger than what the rerun moved on its own
(|A2 - A|). Two greedy runs of one server are not the same run: batching changes the arithmetic, and a same-server
rerun moved GSM8K from 82.79% to 82.41% with only 22.7% of its outputs byte-identical (vLLM PR #54705). The smallest
detectable difference (McNemar's power at the discordance seen) is said beside it: what a comparison of these
items could find, not a test of the difference found.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

from qualeval.figures.repeats import output_of
from qualeval.records import NOT_THE_MODELS, Noise, Record

__all__ = [
    "ALPHA",
    "Reading",
    "SpeedReading",
    "mcnemar_exact",
    "minimum_detectable",
    "read_noise",
    "read_speed",
    "run_noise",
    "spread_factor",
]

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


@dataclass(frozen=True)
class Reading:
    within: bool
    """B - A cannot be told from noise."""
    said: str
    """Why, in words every tool prints alike: 'beyond noise: McNemar p = 0.0391 (below 0.05), ...'."""


def read_noise(
    pairs: int,
    down: int,
    up: int,
    *,
    moved: float | None = None,
    p_value: float | None = None,
    test: str = "McNemar p",
    alpha: float = ALPHA,
) -> Reading:
    """B - A on `pairs` paired items, `down` right in A only and `up` right in B only, read against noise: beyond it
    when the test rejects at `alpha` and, with a rerun of A, |B - A| is larger than `moved` (|A2 - A|). `p_value`
    replaces McNemar's exact p (a board's Holm-adjusted one, named by `test`)."""
    p = mcnemar_exact(down, up) if p_value is None else p_value
    difference = (up - down) / pairs if pairs else 0.0
    shown = f"{test} = {p:.3g}"
    if p >= alpha:
        return Reading(
            True, f"within noise: {shown} (not below {alpha:g}), so on these items it cannot be told from chance"
        )
    rerun = f"the {100 * moved:.1f} points the rerun moved on its own" if moved is not None else ""
    if moved is not None and abs(difference) <= moved:
        return Reading(True, f"within noise: {shown} (below {alpha:g}), but no larger than {rerun}")
    return Reading(False, f"beyond noise: {shown} (below {alpha:g})" + (f", and larger than {rerun}" if rerun else ""))


def spread_factor(again: float | None, base: float | None) -> float | None:
    """How far a rerun of the baseline moved on its own on one speed figure, as a factor up or down: a rerun at
    × 0.56 the baseline's moved as far as one at × 1.79. The one spread compare, board and gate hold a speed ratio
    against; None without both figures."""
    if not again or not base or again < 0 or base < 0:
        return None
    return max(again / base, base / again)


@dataclass(frozen=True)
class SpeedReading:
    within: bool | None
    """The ratio cannot be told from noise; None: not read (no interval: fewer than two paired requests)."""
    within_spread: bool | None
    """The ratio, as a factor up or down, no larger than the rerun's spread; None without a rerun."""
    said: str


def read_speed(ratio: float, low: float | None, high: float | None, spread: float | None) -> SpeedReading:
    """A speed ratio (B / A of one figure over paired requests) read against noise, as compare and board read it:
    beyond noise when its 95% bootstrap interval excludes 1 and, with a rerun of A, the ratio as a factor up or
    down is larger than `spread` (`spread_factor`: what the rerun moved on its own)."""
    factor = max(ratio, 1 / ratio) if ratio > 0 else math.inf
    inside = factor <= spread if spread is not None else None
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return SpeedReading(None, inside, "not read: too few paired requests for an interval")
    interval = f"95% interval × {low:.3f} to × {high:.3f}"
    if low <= 1 <= high:
        return SpeedReading(True, inside, f"within noise: the {interval} holds × 1")
    rerun = f"the × {spread:.3f} the baseline's rerun moved on its own" if spread is not None else ""
    if inside:
        return SpeedReading(True, True, f"within noise: the {interval} excludes × 1, but it is no larger than {rerun}")
    larger = f", and it is larger than {rerun}" if rerun else ""
    return SpeedReading(False, inside, f"beyond noise: the {interval} excludes × 1{larger}")


def run_noise(
    first: dict[tuple[str, ...], Record], again: dict[tuple[str, ...], Record], group: Callable[[tuple[str, ...]], str]
) -> dict[str, Noise]:
    """Per group (`group` names a pair key's: the task, or the task at a load level, as the comparison groups
    its pairs), two runs of the same configuration side by side: the share of byte-identical outputs (reasoning,
    content and tool calls), the discordant pairs, the accuracy difference (again - first: what the rerun moved
    on its own, which `read_noise` holds B - A against) and the smallest difference these pairs could detect.
    Pairs where either request got no answer of the model's (an endpoint error, a reference server's refusal of
    a question it did not know) are left out."""
    by_task: dict[str, list[tuple[Record, Record]]] = {}
    for key in sorted(set(first) & set(again)):
        one, two = first[key], again[key]
        failed = one.status in NOT_THE_MODELS or two.status in NOT_THE_MODELS
        if not failed:
            by_task.setdefault(group(key), []).append((one, two))
    out = {}
    for task, pairs in by_task.items():
        same = sum(output_of(a) == output_of(b) for a, b in pairs)
        up = sum(b.right and not a.right for a, b in pairs)
        down = sum(a.right and not b.right for a, b in pairs)
        out[task] = Noise(
            pairs=len(pairs),
            identical=same / len(pairs),
            discordant=up + down,
            difference=(up - down) / len(pairs),
            detectable=minimum_detectable(len(pairs), up + down),
        )
    return out
