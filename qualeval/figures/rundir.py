"""A run directory read back (its manifest, its first record per item, its levels and summary), and the checks
that runs set beside each other are what they claim to be: not the same run twice, runs that sent the same prompts
under the same items, a rerun of A's configuration and items. compare, board and gate read runs through these.

Which verdicts a run is read with (the same for `compare`, `board`, `gate` and their functions):
- `RUN`: its rescore's (`RUN/rescore`, written by `qualeval rescore`) where it has one, with a note saying so; else
  the verdicts the run gave.
- `RUN/rescore`: the rescore's; `RUN/records.jsonl`: the run's own, rescored or not.
The manifest is the run's in every case: a rescore sends nothing, so what was sent and how is the run's.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from qualeval.errors import InputError, QualevalNote, QualevalWarning
from qualeval.figures.toolfigures import parity_by_level, tool_view
from qualeval.records import Manifest, Parity, Record, RunStore, RunSummary

__all__ = [
    "PairKey",
    "RunDir",
    "RunLike",
    "check_rerun",
    "item_name",
    "read_run",
    "refuse_repeats",
    "refuse_same",
    "run_settings",
    "settings_apart",
]

PairKey = tuple[str, ...]
"""(task, sample id, repeat, load level), or without the level when the runs swept different levels."""

RESCORE = "rescore"
RECORDS = "records.jsonl"


@dataclass(frozen=True)
class RunDir:
    records: dict[PairKey, Record]
    """The first record of each key."""
    levels: set[str]
    manifest: Manifest
    summary: RunSummary | None
    """None when the run has no readable summary.json: the figures read from it are left out."""
    parity: Mapping[tuple[str, str], Parity] = field(default_factory=dict)
    """Its stream parity (--stream-parity) per task and level (the level's stream part aside), over every record
    it holds: `records` keeps one response per key, the parity pairs two (toolfigures.parity_by_level)."""
    streams: str | None = None
    """Which side of a --stream-parity run is paired, said (qualeval.figures.streams); None: no parity run."""


def _located(root: Path) -> tuple[Path, Path]:
    """(the run directory, the folder whose records.jsonl and summary.json are read)."""
    chosen = root.name == RECORDS and root.is_file()  # RUN/records.jsonl, RUN/rescore/records.jsonl: as named
    folder = root.parent if chosen else root
    if (folder / "manifest.json").exists():
        rescored = folder / RESCORE
        return folder, rescored if not chosen and (rescored / RECORDS).exists() else folder
    if folder.name == RESCORE and (folder / RECORDS).exists() and (folder.parent / "manifest.json").exists():
        return folder.parent, folder
    raise InputError(f"{root}: no manifest.json here; is this a qualeval run directory?")


def read_run(root: Path) -> RunDir:
    """A run directory's manifest, its first record per (task, sample, repeat, level), its levels and summary,
    with the verdicts the path names (see the module's docstring); a note says when they are its rescore's
    without the path naming it."""
    root = Path(root)
    run, folder = _located(root)
    manifest = RunStore(run).manifest()
    if manifest is None:
        raise InputError(f"{run}: no manifest.json here; is this a qualeval run directory?")
    records: dict[PairKey, Record] = {}
    levels: set[str] = set()
    views = []
    for record in RunStore(folder).records():
        levels.add(record.level)
        if (view := tool_view(record)) is not None:
            views.append(view)
        records.setdefault((record.task, record.sample_id, str(record.repeat), record.level), record)
    rescore = folder if folder != run else None
    if rescore is not None:
        _check_rescore(run, rescore, records)
    if rescore is not None and root == run:
        warnings.warn(
            f"{root}: read with the verdicts of its rescore ({rescore}); name {run / RECORDS} for the verdicts "
            "the run gave",
            QualevalNote,
            stacklevel=2,
        )
    return RunDir(records, levels, manifest, _summary(folder / "summary.json"), parity_by_level(views))


def _check_rescore(run: Path, rescore: Path, records: Mapping[PairKey, Record]) -> None:
    """A rescore judges the records the run held when it was rescored: a run resumed since holds others (more
    items, or a failed request sent again), which its verdicts would silently leave out or misstate."""
    sent: dict[PairKey, float | None] = {}
    for row in RunStore(run).rows():
        repeat = str(row.get("repeat", row.get("attempt", 0)))
        key = (str(row.get("task")), str(row.get("sample_id")), repeat, str(row.get("level", "")))
        sent.setdefault(key, row.get("sent_at"))
    if sent != {key: record.sent_at for key, record in records.items()}:
        raise InputError(
            f"{rescore}: judged other records than {run} holds now (was the run resumed after its rescore?): "
            f"rescore it again (qualeval rescore {run}), or name {run / RECORDS} for the verdicts the run gave"
        )


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
    measured; --reasoning-passback where no task has multi-turn items) and what it pinned (but the notes, which
    explain; the passback an episode run applied among it)."""
    pinned = m.pinned.model_dump(mode="json", exclude={"notes"}) if m.pinned else {}
    config = m.config.model_dump(mode="json", exclude={"out"}) if m.config else {}
    if not any(t.spec is not None and t.spec.environment is not None for t in m.tasks.values()):
        config.pop("reasoning_passback", None)  # no multi-turn item: it changed nothing
    return _flat(config) | _flat(pinned, "pinned.")


def settings_apart(a: Manifest, b: Manifest) -> dict[str, tuple[Any, Any]]:
    """The settings two runs differ in, A's value then B's, in the order the manifests hold them."""
    fa, fb = run_settings(a), run_settings(b)
    keys = [*fa, *(k for k in fb if k not in fa)]
    return {k: (fa.get(k), fb.get(k)) for k in keys if fa.get(k) != fb.get(k)}


_MAY_DIFFER = frozenset(
    {"out", "base_url", "endpoints", "timeout", "max_retries", "fail_under", "probe", "published", "within"}
    | {"sample_seed", "arrival_seed", "workload_set"}
)
"""What a rerun of A may change: where it was served and written, how long it waited, how it is judged
afterwards, and its seeds (a rerun draws anew what was drawn); the rest is A's configuration. A workload's
overrides are compared as they took effect (the manifest's `shaping`), not as they were written: a seed drawn
for A and given to its rerun (`--workload-set seed=N`) is A's."""


def _configuration(m: Manifest) -> dict[str, Any]:
    """A run's configuration as dotted keys: its settings but those a rerun may change, what it pinned, and each
    task as it ran (spec, version, samples; not where its file was)."""
    config = m.config.model_dump(mode="json", exclude=set(_MAY_DIFFER)) if m.config else {}
    pinned = m.pinned.fingerprinted() if m.pinned else {}
    tasks = {name: entry.model_dump(mode="json", exclude={"file"}) for name, entry in m.tasks.items()}
    # the prompts' seed is compared, not how it was chosen (a drawn seed given again sends the same prompts)
    shaping = m.shaping.model_dump(mode="json", exclude={"workload": {"prompts": {"cache"}}}) if m.shaping else {}
    return _flat(config) | _flat(pinned, "pinned.") | _flat(tasks, "tasks.") | _flat(shaping, "shaping.")


_RESTARTED = frozenset({"created", "permission", "object"})
"""What a server's /models entry says of when it was started or asked, not of what it serves."""


def _served(m: Manifest) -> dict[str, Any] | None:
    """What the server said it serves under the run's model name (its /models entry: engine, context length,
    weights), but for what a restart changes; None where the run did not read /models."""
    listed = m.server.models if m.server is not None else None
    data = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(data, list):
        return None
    model = m.config.model if m.config else None
    entries = [e for e in data if isinstance(e, dict)]
    mine = [e for e in entries if e.get("id") == model] or entries
    return _flat({str(i): {k: v for k, v in e.items() if k not in _RESTARTED} for i, e in enumerate(mine)}, "server.")


def item_name(key: tuple[str, ...]) -> str:
    """An item as a person reads it: its sample id (gsm8k/test/7, under its task where the id does not say it),
    at its load level where it has one."""
    task, sample = key[0], key[1] if len(key) > 1 else ""
    name = sample if sample.startswith(task) else f"{task} {sample}".strip()
    level = key[3] if len(key) > 3 else ""
    return f"{name} @ {level}" if level else name


class RunLike(Protocol):
    """What the checks below read of a run: compare's own, or board's and gate's (runset.Loaded)."""

    @property
    def manifest(self) -> Manifest: ...

    @property
    def records(self) -> Mapping[tuple[str, ...], Record]: ...


def check_rerun(a: RunLike, rerun: RunLike, again: Path, of: str = "A") -> None:
    """Refuse as `of`'s rerun a run of another configuration or other items: its noise would not be `of`'s."""
    ca, cr = _configuration(a.manifest), _configuration(rerun.manifest)
    sa, sr = _served(a.manifest), _served(rerun.manifest)
    if sa is not None and sr is not None:  # another server at another address is another configuration
        ca, cr = ca | sa, cr | sr
    differ = next((k for k in [*ca, *(k for k in cr if k not in ca)] if ca.get(k) != cr.get(k)), None)
    if differ is not None:
        raise InputError(
            f"{again}: not a rerun of {of}: its {differ} is {cr.get(differ)!r} where {of}'s is {ca.get(differ)!r} "
            f"(a rerun must have {of}'s configuration and server; only its seeds, server address and output folder "
            "may differ)"
        )
    apart = set(a.records) ^ set(rerun.records)
    if apart:
        raise InputError(
            f"{again}: not a rerun of {of}: {len(apart)} of its and {of}'s items are in one run only (e.g. "
            f"{item_name(min(apart))}; {len(rerun.records)} items against {of}'s {len(a.records)}): a rerun must run "
            f"{of}'s items"
        )


def refuse_same(first: Path, one: RunLike, second: Path, two: RunLike, role: str) -> None:
    """What makes two runs no pair to compare item by item, refused: the same run twice (the same directory, or a
    copy of it: the same run id; for runs older than the id, the same start and fingerprint), where every
    difference would be zero by construction; runs that sent other prompts under the same items
    (`_same_prompts`); and runs of a task specified otherwise or judged against other gold answers (`_same_tasks`)."""
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
    _same_prompts(first, one, second, two, role)
    _same_tasks(first, one, second, two, role)


def _sent(record: Record) -> str | None:
    """A digest of the messages a record sent (every key of each, as sent); None: it keeps none."""
    if not record.request.messages:
        return None
    digest = hashlib.blake2b(digest_size=16)
    for message in record.request.messages:
        digest.update(message.model_dump_json().encode() + b"\n")
    return digest.hexdigest()


def _prompts(run: RunLike) -> dict[PairKey, str | None]:
    """Per item (task, sample id, repeat), the digest of what its first record sent: every level of a sweep sends
    an item's same messages, and runs of one level each pair across their labels."""
    first: dict[PairKey, Record] = {}
    for key, record in run.records.items():
        first.setdefault(key[:3], record)
    return {key: _sent(record) for key, record in first.items()}


def _same_prompts(first: Path, one: RunLike, second: Path, two: RunLike, role: str) -> None:
    """Paired item by item, two runs must have asked the same: an item id is a position (a workload's prompt
    `NAME/3`, a task's sample), and under another seed or task file it names another prompt, whose answers, right
    or fast, say nothing of this one's. What was sent is compared, not the settings that made it: every run keeps
    its records' messages (since the first version), so a run of any version is checked alike. An item whose
    record keeps messages in one run and none in the other cannot be checked, and a warning says how many; one
    that keeps none in either (no run writes such records) is not compared."""
    a, b = _prompts(one), _prompts(two)
    shared = sorted(set(a) & set(b))
    unknown = [k for k in shared if (a[k] is None) != (b[k] is None)]
    other = [k for k in shared if a[k] is not None and b[k] is not None and a[k] != b[k]]
    if other:
        raise InputError(
            f"{second}: sent other prompts than {first} for {len(other)} of the {len(shared)} items both ran (e.g. "
            f"{item_name(other[0])}): {role} is paired with {first} item by item, so it must send the same prompts"
            f"{_seed_hint(first, m1=one.manifest, m2=two.manifest)}"
        )
    if unknown:
        warnings.warn(
            f"{second}: {len(unknown)} of the {len(shared)} items it shares with {first} keep their messages in one "
            "run only: whether they sent the same prompts is not known",
            QualevalWarning,
            stacklevel=2,
        )


def _specs(manifest: Manifest) -> dict[str, object]:
    return {name: entry.spec.model_dump(mode="json") for name, entry in manifest.tasks.items() if entry.spec}


def _same_tasks(first: Path, one: RunLike, second: Path, two: RunLike, role: str) -> None:
    """Paired item by item, two runs must have judged the same: a task specified otherwise (another answer type,
    scorer or target), or an item whose gold answer differs (another data file under the same ids), makes their
    accuracies of other questions, and every flip between them may be the answer key's, not the server's."""
    spec_a, spec_b = _specs(one.manifest), _specs(two.manifest)
    for task in sorted(set(spec_a) & set(spec_b)):
        if spec_a[task] != spec_b[task]:
            raise InputError(
                f"{second}: task {task} is specified differently than in {first}: {role} is paired with {first} "
                "item by item, so it must run the same task"
            )
    gold_a, gold_b = _golds(one), _golds(two)
    shared = sorted(set(gold_a) & set(gold_b))
    other = [k for k in shared if gold_a[k] != gold_b[k]]
    if other:
        raise InputError(
            f"{second}: other gold answers than {first} for {len(other)} of the {len(shared)} items both ran (e.g. "
            f"{item_name(other[0])}: {_quoted(gold_b[other[0]])} against {_quoted(gold_a[other[0]])}): {role} is "
            f"paired with "
            f"{first} item by item, so it must be judged against the same answers"
        )


def _quoted(text: str, most: int = 40) -> str:
    """A value in a one-line message: quoted, on one line, cut short."""
    flat = " ".join(text.split())
    return f'"{flat[:most]}…"' if len(flat) > most else f'"{flat}"'


def _golds(run: RunLike) -> dict[PairKey, str]:
    """Per item (task, sample id, repeat), the gold answer of its first record: the same at every level."""
    first: dict[PairKey, str] = {}
    for key, record in run.records.items():
        first.setdefault(key[:3], record.gold)
    return first


def _seed_hint(first: Path, *, m1: Manifest, m2: Manifest) -> str:
    """Where a workload's seeds differ, the seed that sends the first run's prompts again."""
    seeds = [m.shaping.workload.prompts.seed if m.shaping and m.shaping.workload else None for m in (m1, m2)]
    if None in seeds or seeds[0] == seeds[1]:
        return ""
    return (
        f" (its workload's prompts came from seed {seeds[1]}, {first}'s from seed {seeds[0]}: run it again with "
        f"--workload-set seed={seeds[0]})"
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
