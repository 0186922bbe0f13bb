"""What repeats between requests that sent the same thing: the greedy answers to identical input, paired, and
the share of prompt tokens served from the cache (qualeval.report.repeats says them as findings).

The prefix cache: a rerun of the same prompts (a task's items, a fixed-seed workload) is served from the cache
the first run filled, so its TTFT measures a cache hit, not prompt processing. Every run shows the share of its
prompt tokens the server reported as cached, and a comparison says when one side's TTFT came from a cache the
other side's did not.

Identical inputs at temperature 0 should give identical outputs: batching that changes answers is a serving
defect. Per task, each level of a load sweep against the first, and A against B in a comparison: how many greedy
answers to the same messages differ, and the items whose verdict flipped on that same input. An episode's
messages are every step's, compared up to the first step whose answers differ (EpisodeRecord.digests).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from qualeval.figures.speeds import prompt_cache
from qualeval.records import NOT_THE_MODELS, Identical, Record

__all__ = [
    "CACHED",
    "GAP",
    "Said",
    "by_item",
    "cached_share",
    "cached_side",
    "identical",
    "identical_pairs",
    "output_of",
    "said_of",
]

CACHED = 0.5
"""A side whose prompts were at least this share cached, against one whose share is at least GAP lower (or not
reported), had its TTFT served from a cache the other did not have."""
GAP = 0.25


@dataclass(frozen=True, slots=True)
class Said:
    """What an identical-output pair needs of one record, compactly (runs can hold 100,000 records)."""

    level: str
    item: tuple[str, int]
    asked: str
    """A digest of what was asked: the body sent but for the model's name and how it streamed."""
    said: str
    """A digest of the output (reasoning, content and the tool calls: output_of)."""
    correct: bool
    steps: tuple[tuple[str, str], ...] = ()
    """An episode: per step, the digests of what it sent and what the model said (EpisodeRecord.digests)."""


def _digest(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def output_of(record: Record) -> tuple[str, ...]:
    """Everything the model put out: reasoning, content and the tool calls the server returned (each one's name
    and arguments text, in order). Two answers are identical only where all of it is: the same text with other
    calls is another answer."""
    calls = record.tools.calls if record.tools is not None else ()
    return (record.reasoning, record.content, *(part for c in calls for part in (c.name, c.arguments)))


def said_of(record: Record) -> Said | None:
    """None for a record that is no greedy answer of the model's: an endpoint error or unknown question, a
    temperature other than 0 (sampling differs by design). A warm-up is one: each run scores it, and its accuracy
    is paired on it, so the identical-input figures stand on the same pairs. An episode is said by all its steps;
    one whose record keeps no step digests (written before they were kept) is None: it cannot be told apart."""
    if record.status in NOT_THE_MODELS or record.request.temperature != 0:
        return None
    steps = record.episode.digests if record.episode is not None else ()
    if steps is None:
        return None
    # two configurations may name the model apart and stream or not; a budget or sampling key that differs
    # makes the input another one
    asked = record.request.model_dump_json(exclude={"model", "stream", "stream_options"})
    said = _digest(*(out for _, out in steps)) if record.episode is not None else _digest(*output_of(record))
    return Said(record.level, (record.sample_id, record.repeat), _digest(asked), said, record.right, steps)


def _same_input(a: Said, b: Said) -> bool:
    """The same request, and for an episode the same history up to the first step whose answers differ: from
    there on each side's history holds its own answer (or, with another passback, its own way of sending the
    reasoning back), so a step sent apart before any answer differed is another input."""
    if a.asked != b.asked:
        return False
    for (sent_a, said_a), (sent_b, said_b) in zip(a.steps, b.steps, strict=False):
        if sent_a != sent_b:
            return False
        if said_a != said_b:
            return True
    return True


def identical(this: Mapping[tuple[str, int], Said], other: Mapping[tuple[str, int], Said]) -> Identical | None:
    """`this` side's greedy answers against `other`'s, item by item (sample id and repeat)."""
    return identical_pairs((a, other.get(key)) for key, a in sorted(this.items()))


def identical_pairs(pairs: Iterable[tuple[Said | None, Said | None]]) -> Identical | None:
    """Over the pairs of greedy answers that sent the same messages; None when there is no such pair."""
    same = [(a, b) for a, b in pairs if a is not None and b is not None and _same_input(a, b)]
    if not same:
        return None
    alike = sum(a.said == b.said for a, b in same)
    # a verdict that flipped with the output is the serving's; one that flipped on the same output is the scoring's
    flipped = sorted({a.item[0] for a, b in same if a.correct != b.correct and a.said != b.said})
    apart = sorted({a.item[0] for a, b in same if a.correct != b.correct and a.said == b.said})
    return Identical(pairs=len(same), identical=alike, flipped=flipped, judged_apart=apart)


def by_item(said: Iterable[Said | None], level: str | None = None) -> dict[tuple[str, int], Said]:
    """The greedy answers (at `level`, or at any), keyed by item and repeat; the first of a key is kept."""
    out: dict[tuple[str, int], Said] = {}
    for s in said:
        if s is not None and (level is None or s.level == level):
            out.setdefault(s.item, s)
    return out


def cached_share(records: Iterable[Record]) -> float | None:
    """The share of prompt tokens served from the cache over these records (warm-ups and endpoint errors
    aside, as in Speed); None when no server said."""
    found = prompt_cache([t for r in records if not (t := r.timed()).warmup and r.status not in NOT_THE_MODELS])
    return found.share if found else None


def cached_side(a: float | None, b: float | None) -> int | None:
    """Which side's TTFT was served from a prefix cache the other's was not (0: a, 1: b; b is asked first), by
    their shares of cached prompt tokens; None when the two are alike. What `qualeval compare` says of a pair of
    runs and `qualeval gate` refuses a TTFT clause on."""
    for side, mine, theirs in ((1, b, a), (0, a, b)):
        if mine is not None and mine >= CACHED and (theirs is None or mine - theirs >= GAP):
            return side
    return None
