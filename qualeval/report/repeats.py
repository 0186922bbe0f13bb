"""What repeats between requests that sent the same thing, said as findings (qualeval.figures.repeats computes
them): the share of prompt tokens a server served from its cache, a TTFT served from a cache the other side did
not have, and the greedy answers to identical input that differ.
"""

from __future__ import annotations

from qualeval.figures import cached_side
from qualeval.records import Comparison, Identical, PromptCache, RunSummary

__all__ = ["cache_gap", "cache_lines", "compare_lines", "finding", "identical_lines"]


def _items(ids: list[str]) -> str:
    return ", ".join(ids[:10]) + (", …" if len(ids) > 10 else "")


def finding(found: Identical, a: str, b: str) -> str:
    """'3 of 60 greedy answers to identical input differ between c=1 and c=16, and 1 of them flipped verdict:
    gsm8k/test/7'; identical answers judged apart are said on their own (the scoring differed, not the serving)."""
    differ = found.pairs - found.identical
    line = f"{differ} of {found.pairs} greedy answers to identical input differ between {a} and {b}"
    if found.flipped:
        line += f", and {len(found.flipped)} of them flipped verdict: {_items(found.flipped)}"
    if found.judged_apart:
        n = len(found.judged_apart)
        line += (
            f"; {n} identical answer{'s were' if n != 1 else ' was'} judged differently by the two (they were "
            f"scored differently, not served differently): {_items(found.judged_apart)}"
        )
    return line


def identical_lines(summary: RunSummary) -> list[str]:
    """Per task, each level of a load sweep at temperature 0 against the first level."""
    lines = []
    for name, t in summary.tasks.items():
        for label, level in t.levels.items():
            vs = level.vs_first
            if vs is not None and vs.identical is not None:
                lines.append(f"{name}: {finding(vs.identical, vs.against, label)}")
    return lines


def _cache_line(where: str, cache: PromptCache) -> str:
    return (
        f"{where}: prompt tokens from the server's cache: {cache.share:.0%} "
        f"({cache.cached_tokens:,} of {cache.prompt_tokens:,}, {cache.requests} requests reporting)"
    )


def cache_lines(summary: RunSummary) -> list[str]:
    """Per task (and per level when there are several), the share of prompt tokens served from the cache; and a
    level whose prompts came from the cache an earlier level filled, against the first level."""
    lines = []
    for name, t in summary.tasks.items():
        if len(t.levels) <= 1:
            lines += [_cache_line(name, t.speed.prompt_cache)] if t.speed.prompt_cache else []
            continue
        shares = {k: v.speed.prompt_cache for k, v in t.levels.items() if v.speed.prompt_cache}
        lines += [_cache_line(f"{name} @ {k}", v) for k, v in shares.items()]
        first = next(iter(t.levels))
        for label, cache in shares.items():
            gap = cache_gap(shares[first].share if first in shares else None, cache.share, (first, label))
            if label != first and gap is not None:
                lines.append(f"{name}: {gap}")
    return lines


def cache_gap(a: float | None, b: float | None, names: tuple[str, str] = ("A", "B")) -> str | None:
    """'B's prompts were 96% cached, A's 0%: its TTFT is not comparable', when one side was served from a cache
    and the other was not (or did not say; qualeval.figures.cached_side, which the gate acts on too); None when
    the two are alike. `names`: the sides, A's then B's."""
    side = cached_side(a, b)
    if side is None:
        return None
    shares = (a, b)
    mine, theirs = shares[side] or 0.0, shares[1 - side]
    other = "not reported" if theirs is None else f"{theirs:.0%}"
    return f"{names[side]}'s prompts were {mine:.0%} cached, {names[1 - side]}'s {other}: its TTFT is not comparable"


def compare_lines(result: Comparison) -> list[str]:
    """Per task of a comparison: a TTFT served from a cache the other side did not have, each side's cached
    share, and the greedy answers to identical input that differ between A and B."""
    lines = [result.streams] if result.streams else []
    if result.open_loop:
        lines.append(
            "open-loop runs (a set arrival rate): the aggregate output tok/s is the arrival rate's whatever the "
            "config, so it is not compared; output_rate (each request's) is"
        )
    for name, t in result.tasks.items():
        a, b = t.prompt_cache
        gap = cache_gap(a, b)
        if gap is not None:
            lines.append(f"{name}: {gap}")
        elif a is not None or b is not None:
            shown = ", ".join(f"{k} {'not reported' if v is None else f'{v:.0%}'}" for k, v in (("A", a), ("B", b)))
            lines.append(f"{name}: prompt tokens from the server's cache: {shown}")
        if t.identical is not None:
            lines.append(f"{name}: {finding(t.identical, 'A', 'B')}")
    return lines
