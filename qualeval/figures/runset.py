"""Several runs of the same items, read for `qualeval board` and `qualeval gate`: each run's records keyed by item,
a check that the runs hold the same items of the same tasks, and one config's figures on one task.

Records group by task, and by task and load level when the runs swept the same levels, as `qualeval compare`
groups them (one item at several levels is not independent evidence).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from qualeval.errors import InputError
from qualeval.figures.accuracy import cell_of
from qualeval.figures.rundir import item_name, read_run, refuse_repeats
from qualeval.figures.speeds import linked, speed, untimed
from qualeval.figures.streams import match_streams
from qualeval.records import (
    ENDPOINT_FAILED,
    NOT_THE_MODELS,
    TRUNCATED,
    Cell,
    Manifest,
    Parity,
    Record,
    RunSummary,
    Speed,
)

__all__ = ["Group", "Key", "Loaded", "PairCounts", "figures", "groups", "load_runs", "paired"]

Key = tuple[str, ...]
"""(task, sample id, repeat[, load level])."""


@dataclass(frozen=True)
class Loaded:
    path: Path
    manifest: Manifest
    summary: RunSummary | None
    records: dict[Key, Record]
    """The first record of each item. Warm-ups are in, since each run scores them (so accuracies are the runs'
    own); the speed figures leave them out. Of a --stream-parity run beside plain runs, one side
    (qualeval.figures.streams)."""
    parity: Mapping[tuple[str, str], Parity] = field(default_factory=dict)
    """Its own stream parity, over every record it holds (RunDir.parity)."""
    streams: str | None = None
    """Which side of a --stream-parity run is paired, said; the same on every run of a set."""


@dataclass(frozen=True)
class PairCounts:
    """Two configs on the items both answered: baseline right and other wrong (`down`), the reverse (`up`)."""

    pairs: int
    down: int
    up: int

    @property
    def difference(self) -> float:
        return (self.up - self.down) / self.pairs if self.pairs else 0.0


def _read(path: Path) -> Loaded:
    run = read_run(path)  # as compare reads a run directory
    return Loaded(path, run.manifest, run.summary, run.records, run.parity)


def _without_levels(run: Loaded) -> Loaded:
    """Keyed by item alone: runs of one level each, whose labels differ (c=4 beside c=8), pair so."""
    return replace(run, records={key[:3]: record for key, record in run.records.items()})


def _levels(run: Loaded) -> list[str]:
    return sorted({k[3] for k in run.records}, key=str)


def _same_items(first: Loaded, other: Loaded) -> None:
    """One `error:` line naming the run and an item it does not share (what the items asked, and the tasks they
    ran, are checked by rundir.refuse_same, pair by pair)."""
    a, b = set(first.records), set(other.records)
    if a != b:
        raise InputError(
            f"{other.path}: not the same items as {first.path}: {len(b - a)} item(s) only here, {len(a - b)} "
            f"missing (e.g. {item_name(min(b - a or a - b))})"
        )


def load_runs(paths: Sequence[Path]) -> list[Loaded]:
    """The runs, checked to hold the same items; keyed by level only when every run swept the same levels."""
    runs = [_read(p) for p in paths]
    for run in runs:
        refuse_repeats(run.path, run)
    matched, said = match_streams([(run.path, run.records) for run in runs])
    runs = [replace(run, records=dict(records), streams=said) for run, records in zip(runs, matched, strict=True)]
    if len({tuple(_levels(run)) for run in runs}) > 1:
        swept = next((run for run in runs if len(_levels(run)) > 1), None)
        if swept is not None:  # which of its levels would stand for the run is not ours to pick
            other = next(run for run in runs if _levels(run) != _levels(swept))
            raise InputError(
                f"{swept.path}: swept the levels {', '.join(_levels(swept))}, and {other.path} ran "
                f"{', '.join(_levels(other))}: set runs of one level each side by side, or sweeps of the same levels"
            )
        runs = [_without_levels(run) for run in runs]
    for run in runs[1:]:
        _same_items(runs[0], run)
    return runs


def grouper(run: Loaded) -> Callable[[Key], str]:
    """The group a key is figured under: its task, at its level when the run swept several."""
    levels = {k[3] for k in run.records if len(k) > 3}
    return lambda key: f"{key[0]} @ {key[3]}" if len(key) > 3 and len(levels) > 1 else key[0]


def groups(run: Loaded) -> dict[str, list[Key]]:
    """Each task's keys (and each level's, when there are several)."""
    group = grouper(run)
    out: dict[str, list[Key]] = defaultdict(list)
    for key in run.records:  # the order the run ran them in: levels come as swept (c=1, c=4, c=16)
        out[group(key)].append(key)
    return dict(out)


def paired(base: Loaded, other: Loaded, keys: Sequence[Key]) -> PairCounts:
    """McNemar's counts over the items both runs answered (an endpoint error is no wrong answer)."""
    both = [(base.records[k], other.records[k]) for k in keys]
    both = [(a, b) for a, b in both if a.status not in NOT_THE_MODELS and b.status not in NOT_THE_MODELS]
    down = sum(a.right and not b.right for a, b in both)
    up = sum(b.right and not a.right for a, b in both)
    return PairCounts(len(both), down, up)


@dataclass(frozen=True)
class Group:
    """One run's figures on one task (or task and level)."""

    scored: bool
    answered: int
    endpoint_errors: int
    unknown_questions: int
    """Questions a reference server did not know: no answer of the model's, left out like endpoint errors."""
    accuracy: Cell | None
    truncated: float
    output_tokens: float | None
    """Mean completion tokens per answered request."""
    speed: Speed
    correct_per_minute: float | None
    spec_acceptance: float | None
    untimed: str | None = None
    """Why the measured requests have no one duration, so no aggregate rate (speeds.untimed); None: they have."""
    unit: str = "requests"
    """What one record is, as counts of records are worded: `episodes` for an agent's (each many requests)."""


def figures(run: Loaded, keys: Sequence[Key]) -> Group:
    records = [run.records[k] for k in keys]
    answered = [r for r in records if r.status not in NOT_THE_MODELS]  # no answer of the model's, none wrong
    scored = any(r.scored for r in records)
    timed = [r.timed() for r in records]
    measured = speed(timed)
    link = linked(timed, measured.duration_s)
    tokens = [r.usage.completion_tokens for r in answered if r.usage.completion_tokens is not None]
    return Group(
        scored=scored,
        answered=len(answered),
        endpoint_errors=sum(r.status in ENDPOINT_FAILED for r in records),
        unknown_questions=sum(r.status in NOT_THE_MODELS and r.status not in ENDPOINT_FAILED for r in records),
        accuracy=cell_of([r.right for r in answered]) if scored else None,
        truncated=sum(r.status in TRUNCATED for r in answered) / len(answered) if answered else 0.0,
        output_tokens=sum(tokens) / len(tokens) if tokens else None,
        speed=measured,
        correct_per_minute=link.correct_per_minute if scored else None,
        spec_acceptance=_acceptance(answered, run.summary),
        untimed=untimed(timed),
        unit="episodes" if any(r.episode is not None for r in records) else "requests",
    )


def _acceptance(records: Sequence[Record], summary: RunSummary | None) -> float | None:
    """Accepted / drafted tokens from the server's per-request timings, else its metrics' run-wide mean."""
    drafted = sum((r.server_timings.draft_n or 0) for r in records if r.server_timings)
    if drafted:
        return sum((r.server_timings.draft_n_accepted or 0) for r in records if r.server_timings) / drafted
    server = (summary.server if summary else None) or {}
    means = [f["spec_acceptance_rate"].mean for f in server.values() if "spec_acceptance_rate" in f]
    return sum(means) / len(means) if means else None
