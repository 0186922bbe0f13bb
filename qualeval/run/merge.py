"""`qualeval merge DIR...`: the shards of one run (`--shard K/N`) joined into one run directory.

The shards must be the same run in every setting but the shard, with the same pinned choices, and cover K = 0 to
N-1 once each. Their final records are joined (each item appears in exactly one shard), and the summary is made
from them as a run's is, so it equals an unsharded run's. Speed figures are pooled over the shards' requests;
rates over a duration (throughput) are per shard, since shards run in processes of their own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from qualeval.errors import InputError
from qualeval.records import STEPS, Manifest, RunStore, RunSummary, Shaping
from qualeval.run.rescoring import run_config_of, tasks_of
from qualeval.run.written import write_summary
from qualeval.serving import parse_shard

__all__ = ["merge_runs"]

_MAY_DIFFER = {"shard", "out", "concurrency", "timeout", "max_retries", "fail_under", "probe", "endpoints", "base_url"}


def _shards(dirs: Sequence[Path]) -> list[tuple[int, Path, Manifest]]:
    found = []
    for root in dirs:
        manifest = RunStore(root).manifest()
        if manifest is None:
            raise InputError(f"{root}: no manifest.json here; is this a qualeval run directory?")
        shard = manifest.config.shard if manifest.config else None
        if not shard:
            raise InputError(f"{root}: not a shard (it was run without --shard K/N)")
        index, count = parse_shard(str(shard))
        found.append((index, count, root, manifest))
    counts = {c for _, c, _, _ in found}
    if len(counts) > 1:
        raise InputError(f"the shards split the run in different ways (N = {', '.join(map(str, sorted(counts)))})")
    count = counts.pop()
    indices = sorted(i for i, _, _, _ in found)
    if indices != list(range(count)):
        missing = sorted(set(range(count)) - set(indices)) or "none"
        raise InputError(f"shards must be 0..{count - 1} once each; got {indices} (missing: {missing})")
    return [(i, root, m) for i, _, root, m in sorted(found, key=lambda x: x[0])]


def _settings(manifest: Manifest) -> dict[str, Any]:
    return manifest.config.model_dump(mode="json", exclude=_MAY_DIFFER) if manifest.config else {}


def _check_same(shards: list[tuple[int, Path, Manifest]]) -> None:
    _, first_root, first = shards[0]
    base = _settings(first)
    for _, root, manifest in shards[1:]:
        other = _settings(manifest)
        for key in sorted(set(base) | set(other)):
            if base.get(key) != other.get(key):
                raise InputError(
                    f"{root}: not a shard of the same run as {first_root}: --{key.replace('_', '-')} differs"
                )
        if manifest.pinned != first.pinned:
            raise InputError(f"{root}: pinned other choices than {first_root} (constraint or thinking switch)")


def _check_steps(roots: Sequence[Path]) -> None:
    """A shard whose records hold episodes must bring its steps.jsonl: without it the merged run's episodes could
    never be judged again (a rescore reads them from it)."""
    for root in roots:
        if (root / STEPS).exists():
            continue
        if any((row.get("episode") or {}).get("steps") for row in RunStore(root).rows()):
            raise InputError(
                f"{root}: its records hold multi-turn episodes but its {STEPS} is missing; copy it back before merging"
            )


def _joined(roots: Sequence[Path], name: str, tag: bool) -> Iterator[bytes]:
    """The shards' lines of one file, as they are on disk (records are copied, never rewritten)."""
    for index, root in enumerate(roots):
        if name == "records.jsonl":
            for row in RunStore(root).rows():
                yield orjson.dumps({**row, "shard": index} if tag else row)
        elif name == STEPS:  # an agent's steps, each shard's whole lines (a rescore judges episodes from them)
            path = root / STEPS
            yield from path.read_bytes().split(b"\n")[:-1] if path.exists() else []
        else:
            from qualeval.serving import read_series

            for point in read_series(root):
                tagged = point.model_copy(update={"shard": index}) if tag else point
                yield tagged.model_dump_json(exclude_none=True).encode()


def merge_runs(dirs: Sequence[Path], out: Path) -> tuple[RunSummary, RunStore]:
    """Join shard directories into `out`; returns the merged summary (also written as summary.json)."""
    shards = _shards(dirs)
    _check_same(shards)
    roots = [root for _, root, _ in shards]
    _check_steps(roots)
    if out.resolve() in {r.resolve() for r in roots}:
        raise InputError(f"--out {out}: must not be one of the shards")
    first = shards[0][2]
    digest = hashlib.sha256(b"".join(str(m.fingerprint).encode() for _, _, m in shards)).hexdigest()[:16]
    store = RunStore(out)
    store.check(Manifest(fingerprint=digest))  # a directory holding another run is refused, the same merge redone
    shaping = (first.shaping or Shaping()).model_copy(update={"shard": None})
    manifest = first.model_copy(
        update={
            "config": first.config and first.config.model_copy(update={"shard": None, "out": out}),
            "fingerprint": digest,
            "run_id": digest,
            "merged_from": [str(r) for r in roots],
            "shaping": shaping,
        }
    )
    store.write_json("manifest.json", manifest.written())
    store.write_lines("records.jsonl", _joined(roots, "records.jsonl", False))
    store.write_lines("timeseries.jsonl", _joined(roots, "timeseries.jsonl", True))
    if any((root / STEPS).exists() for root in roots):
        store.write_lines(STEPS, _joined(roots, STEPS, False))
    config = run_config_of(manifest, out)
    tasks = [task for task, _ in tasks_of(manifest, config).values()]
    return write_summary(store, config, tasks, manifest, started=first.started), store
