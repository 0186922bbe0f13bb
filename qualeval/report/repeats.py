"""What repeats between requests that sent the same thing, said as findings.

The prefix cache: a rerun of the same prompts (a task's items, a fixed-seed workload) is served from the cache
the first run filled, so its TTFT measures a cache hit, not prompt processing. Every run shows the share of its
prompt tokens the server reported as cached, and a comparison says when one side's TTFT came from a cache the
other side's did not.

Identical inputs at temperature 0 should give identical outputs: batching that changes answers is a serving
defect. Per task, each level of a load sweep against the first, and A against B in a comparison: how many greedy
answers to the same messages differ, and the items whose verdict flipped on that same input.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from qualeval.records import NOT_THE_MODELS, Comparison, Identical, PromptCache, Record, RunSummary
from qualeval.report.speed import prompt_cache

__all__ = [
    "CACHED",
    "GAP",
    "Said",
    "by_item",
    "cache_gap",
    "cache_lines",
    "cached_share",
    "compare_lines",
    "identical",
    "identical_lines",
    "identical_pairs",
    "said_of",
]

CACHED = 0.5
"""A side whose prompts were at least this share cached, against one whose share is at least GAP lower, had its
TTFT served from a cache the other did not have."""
GAP = 0.25


@dataclass(frozen=True, slots=True)
class Said:
    """What an identical-output pair needs of one record, compactly (runs can hold 100,000 records)."""

    level: str
    item: tuple[str, int]
    asked: str
    """A digest of what was asked: the body sent but for the model's name and how it streamed."""
    said: str
    """A digest of the output (reasoning and content)."""
    correct: bool


def _digest(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def said_of(record: Record) -> Said | None:
    """None for a record that is no greedy answer of the model's: an endpoint error or unknown question, a
    temperature other than 0 (sampling differs by design). A warm-up is one: each run scores it, and its accuracy
    is paired on it, so the identical-input figures stand on the same pairs."""
    if record.status in NOT_THE_MODELS or record.request.temperature != 0:
        return None
    # two configurations may name the model apart and stream or not; a budget or sampling key that differs
    # makes the input another one
    asked = record.request.model_dump_json(exclude={"model", "stream", "stream_options"})
    return Said(
        record.level, (record.sample_id, record.repeat), _digest(asked), _digest(record.reasoning, record.content),
        record.score.correct,
    )  # fmt: skip


def identical(this: Mapping[tuple[str, int], Said], other: Mapping[tuple[str, int], Said]) -> Identical | None:
    """`this` side's greedy answers against `other`'s, item by item (sample id and repeat)."""
    return identical_pairs((a, other.get(key)) for key, a in sorted(this.items()))


def identical_pairs(pairs: Iterable[tuple[Said | None, Said | None]]) -> Identical | None:
    """Over the pairs of greedy answers that sent the same messages; None when there is no such pair."""
    same = [(a, b) for a, b in pairs if a is not None and b is not None and a.asked == b.asked]
    if not same:
        return None
    alike = sum(a.said == b.said for a, b in same)
    flipped = sorted({a.item[0] for a, b in same if a.correct != b.correct})
    return Identical(pairs=len(same), identical=alike, flipped=flipped)


def by_item(said: Iterable[Said | None], level: str | None = None) -> dict[tuple[str, int], Said]:
    """The greedy answers (at `level`, or at any), keyed by item and repeat; the first of a key is kept."""
    out: dict[tuple[str, int], Said] = {}
    for s in said:
        if s is not None and (level is None or s.level == level):
            out.setdefault(s.item, s)
    return out


def finding(found: Identical, a: str, b: str) -> str:
    """'3 of 60 greedy answers to identical input differ between c=1 and c=16; of these, 1 item flipped verdict:
    gsm8k/test/7'."""
    differ = found.pairs - found.identical
    line = f"{differ} of {found.pairs} greedy answers to identical input differ between {a} and {b}"
    if found.flipped:
        shown = ", ".join(found.flipped[:10]) + (", …" if len(found.flipped) > 10 else "")
        # of the identical-input pairs only: items whose input differed may have flipped too, and are not counted
        line += f"; of these, {len(found.flipped)} item{'s' * (len(found.flipped) != 1)} flipped verdict: {shown}"
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


def cached_share(records: Iterable[Record]) -> float | None:
    """The share of prompt tokens served from the cache over these records (warm-ups and endpoint errors
    aside, as in Speed); None when no server said."""
    found = prompt_cache([t for r in records if not (t := r.timed()).warmup and r.status not in NOT_THE_MODELS])
    return found.share if found else None


def cache_gap(a: float | None, b: float | None, names: tuple[str, str] = ("A", "B")) -> str | None:
    """'B's prompts were 96% cached, A's 0%: its TTFT is not comparable', when one side was served from a cache
    and the other was not (or did not say); None when the two are alike. `names`: the sides, A's then B's."""
    for mine, theirs, (side, other_side) in ((b, a, names[::-1]), (a, b, names)):
        if mine is not None and mine >= CACHED and (theirs is None or mine - theirs >= GAP):
            other = "not reported" if theirs is None else f"{theirs:.0%}"
            return f"{side}'s prompts were {mine:.0%} cached, {other_side}'s {other}: its TTFT is not comparable"
    return None


def compare_lines(result: Comparison) -> list[str]:
    """Per task of a comparison: a TTFT served from a cache the other side did not have, each side's cached
    share, and the greedy answers to identical input that differ between A and B."""
    lines = []
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
