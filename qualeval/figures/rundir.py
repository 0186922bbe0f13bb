"""A run directory read back (its manifest, its first record per item, its levels and summary), and the checks
that runs set beside each other are what they claim to be: not the same run twice, a rerun of A's configuration
and items. compare, board and gate read runs through these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from qualeval.errors import InputError
from qualeval.records import Manifest, Record, RunStore, RunSummary

__all__ = [
    "PairKey",
    "RunDir",
    "RunLike",
    "check_rerun",
    "read_run",
    "refuse_repeats",
    "refuse_same",
    "run_settings",
]

PairKey = tuple[str, ...]
"""(task, sample id, repeat, load level), or without the level when the runs swept different levels."""


@dataclass(frozen=True)
class RunDir:
    records: dict[PairKey, Record]
    """The first record of each key."""
    levels: set[str]
    manifest: Manifest
    summary: RunSummary | None
    """None when the run has no readable summary.json: the figures read from it are left out."""


def read_run(root: Path) -> RunDir:
    """A run directory's manifest, its first record per (task, sample, repeat, level), its levels and summary."""
    store = RunStore(root)
    manifest = store.manifest()
    if manifest is None:
        raise InputError(f"{root}: no manifest.json here; is this a qualeval run directory?")
    records: dict[PairKey, Record] = {}
    levels: set[str] = set()
    for record in store.records():
        levels.add(record.level)
        records.setdefault((record.task, record.sample_id, str(record.repeat), record.level), record)
    return RunDir(records, levels, manifest, _summary(root / "summary.json"))


def _summary(path: Path) -> RunSummary | None:
    if not path.exists():
        return None
    try:
        return RunSummary.model_validate_json(path.read_bytes())
    except ValidationError:  # a damaged or foreign summary costs only the figures read from it
        return None


def _flat(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as dotted keys (slo.ttft_ms); an empty mapping has no keys, so {} against a filled one
    shows only the keys that were set."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def run_settings(m: Manifest) -> dict[str, Any]:
    """A run's settings as dotted keys: the configuration (but `out`, which always differs and changes nothing
    measured) and what it pinned (but the notes, which explain)."""
    pinned = m.pinned.model_dump(mode="json", exclude={"notes"}) if m.pinned else {}
    config = m.config.model_dump(mode="json", exclude={"out"}) if m.config else {}
    return _flat(config) | _flat(pinned, "pinned.")


_MAY_DIFFER = frozenset(
    {"out", "base_url", "endpoints", "timeout", "max_retries", "fail_under", "probe", "published", "within"}
    | {"sample_seed", "arrival_seed"}
)
"""What a rerun of A may change: where it was served and written, how long it waited, how it is judged
afterwards, and its seeds (a rerun draws anew what was drawn); the rest is A's configuration."""


def _configuration(m: Manifest) -> dict[str, Any]:
    """A run's configuration as dotted keys: its settings but those a rerun may change, what it pinned, and each
    task as it ran (spec, version, samples; not where its file was)."""
    config = m.config.model_dump(mode="json", exclude=set(_MAY_DIFFER)) if m.config else {}
    pinned = m.pinned.fingerprinted() if m.pinned else {}
    tasks = {name: entry.model_dump(mode="json", exclude={"file"}) for name, entry in m.tasks.items()}
    shaping = m.shaping.model_dump(mode="json") if m.shaping else {}
    return _flat(config) | _flat(pinned, "pinned.") | _flat(tasks, "tasks.") | _flat(shaping, "shaping.")


class RunLike(Protocol):
    """What the checks below read of a run: compare's own, or board's and gate's (runset.Loaded)."""

    @property
    def manifest(self) -> Manifest: ...

    @property
    def records(self) -> Mapping[tuple[str, ...], Record]: ...


def check_rerun(a: RunLike, rerun: RunLike, again: Path, of: str = "A") -> None:
    """Refuse as `of`'s rerun a run of another configuration or other items: its noise would not be `of`'s."""
    ca, cr = _configuration(a.manifest), _configuration(rerun.manifest)
    differ = next((k for k in [*ca, *(k for k in cr if k not in ca)] if ca.get(k) != cr.get(k)), None)
    if differ is not None:
        raise InputError(
            f"{again}: not a rerun of {of}: its {differ} is {cr.get(differ)!r} where {of}'s is {ca.get(differ)!r} "
            f"(a rerun must have {of}'s configuration; only its seeds, server address and output folder may differ)"
        )
    apart = set(a.records) ^ set(rerun.records)
    if apart:
        raise InputError(
            f"{again}: not a rerun of {of}: {len(apart)} of its and {of}'s items (task, sample, repeat, level) are in "
            f"one run only ({len(rerun.records)} items against {of}'s {len(a.records)}); a rerun must run {of}'s items"
        )


def refuse_same(first: Path, one: RunLike, second: Path, two: RunLike, role: str) -> None:
    """The same run twice (the same directory, or a copy of it: the same run id; for runs older than the id, the
    same start and fingerprint) is no comparison: every difference would be zero by construction."""
    m1, m2 = one.manifest, two.manifest
    if m1.run_id is not None and m2.run_id is not None:
        same = m1.run_id == m2.run_id
    else:
        same = m1.started is not None and m1.started == m2.started and m1.fingerprint == m2.fingerprint
    if first.resolve() == second.resolve() or same:
        raise InputError(
            f"{second}: the same run as {first} (started {one.manifest.started or 'at the same time'}); "
            f"{role} must be another run"
        )


def refuse_repeats(root: Path, run: RunLike) -> None:
    """A run of K samples per item holds K records of each question: paired one record to one, its every sample
    would count as an item (30 paired items of 10 questions, a test and interval three times too sure), and beside
    a run of one sample its first sample alone would stand for it. Its own summary clusters them by item."""
    repeats: dict[tuple[str, ...], set[str]] = {}
    for key in run.records:  # the repeats an item holds, not their numbers (an older run's may start at 1)
        repeats.setdefault((*key[:2], *key[3:]), set()).add(key[2])
    samples = max(map(len, repeats.values()), default=1)
    if samples > 1:
        raise InputError(
            f"{root}: ran {samples} samples per item (--samples-per-item); compare, board and gate pair one answer "
            f"per item and would count each sample as a question: set side by side runs of one sample per item"
        )
