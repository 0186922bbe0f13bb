"""The run directory, and the code that writes it: every file goes through RunStore (a run's, a merge's, a
rescore's `rescore/`, and `qualeval score`'s folder), except timeseries.jsonl, which the sampler of
qualeval.serving.timeseries appends to once a second while the run goes on.

    manifest.json    the configuration (no secrets), versions, the server's /models answer and probe result,
                     a fingerprint of the samples
    records.jsonl    one line per request, appended and flushed as each completes
    summary.json     per-task summaries, repeated-sampling and speed figures
    timeseries.jsonl one line a second, from both ends of the wire
    items.jsonl      `qualeval score` only: one judged line per response, in place of records.jsonl
    report.md, report.html

Each record line is written with a single unbuffered `write` on a file opened for appending, so a run killed
at any moment (`kill -9` included) leaves whole lines and at most one torn last line. Resuming drops that line
and skips every (sample, repeat, load level) already recorded: nothing is lost, nothing is written twice.

A request that failed for good (`transport_error`, e.g. during a server outage) is not an answer, so resuming
sends it again: its record stays in the file marked `"final": false` (rewritten in one atomic step), and the
fault classes of its failed attempts are handed to the record that replaces it (`RunStore.history`). Readers
see final records only, so every item has exactly one.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from qualeval.errors import InputError, validation_problem
from qualeval.records.manifest import Manifest
from qualeval.records.record import Record

__all__ = ["Key", "RunStore", "fingerprint"]

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"


def fingerprint(rows: list[tuple[str, str, str]]) -> str:
    """A digest of (sample id, gold, prompt) triples: two runs with the same value asked the same questions."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(orjson.dumps(row))
    return digest.hexdigest()[:16]


Key = tuple[str, int, str]
"""(sample id, repeat, load level): one request of a run."""


def _key(row: dict[str, Any]) -> Key:
    repeat = row.get("repeat", row.get("attempt", 0))  # `attempt` in runs written before the rename
    return row["sample_id"], int(repeat), str(row.get("level", ""))


def _superseded(row: dict[str, Any]) -> bool:
    return row.get("final", True) is False


class RunStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd: int | None = None
        self.history: dict[Key, list[str]] = {}
        """After open(): for each request to send again, the fault classes of its earlier failed attempts."""

    @property
    def records_path(self) -> Path:
        return self.root / RECORDS

    def manifest(self) -> Manifest | None:
        path = self.root / MANIFEST
        if not path.exists():
            return None
        try:
            return Manifest.model_validate(orjson.loads(path.read_bytes()))
        except orjson.JSONDecodeError:
            raise InputError(f"{path}: not a readable manifest; is this a qualeval run directory?") from None
        except ValidationError as exc:
            problem = validation_problem(exc)
            raise InputError(
                f"{path}: field '{problem.field}' does not load ({problem.message}); was it edited?"
            ) from None

    def check(self, manifest: Manifest) -> None:
        """Create the directory, or make sure the run already in it is this one: before any request is sent."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{self.root}: cannot create the run directory ({exc.strerror})") from None
        old = self.manifest()
        if old is not None and old.fingerprint != manifest.fingerprint:
            raise InputError(
                f"{self.root}: holds a run of other tasks, data or settings; give another --out to start a new run"
            )

    def open(self, manifest: Manifest) -> set[Key]:
        """Start or resume a run; returns the (sample id, repeat, load level) triples already recorded
        (a transport_error is not: it is sent again)."""
        self.check(manifest)
        old = self.manifest()
        if old is not None:
            started = old.started if old.started is not None else manifest.started
            resumed = [*(old.resumed or []), manifest.started]
            run_id = old.run_id or manifest.run_id
            manifest = manifest.model_copy(update={"started": started, "resumed": resumed, "run_id": run_id})
        self.write_json(MANIFEST, manifest.written())
        done = self._repair()
        self._fd = os.open(self.records_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return done

    def _repair(self) -> set[Key]:
        """Drop a torn last line (a kill mid-write), collect what is recorded, and retire failed requests."""
        path = self.records_path
        self.history = {}
        if not path.exists():
            return set()
        raw = path.read_bytes()
        good = raw.rfind(b"\n") + 1
        lines = raw[:good].split(b"\n")[:-1]
        # a few values per line, not the records themselves: a resumed run of 100,000 records stays small
        seen: list[tuple[Key, bool, list[str] | None] | None] = []  # key, retired already, faults if it failed
        keep = good
        for i, line in enumerate(lines):
            try:
                row = orjson.loads(line)
                old, failed = _superseded(row), row.get("status") == "transport_error"
                seen.append((_key(row), old, list(row.get("retried") or ()) if old or failed else None))
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
                if i != len(lines) - 1:
                    raise InputError(f"{path}:{i + 1}: damaged record in the middle of the file") from None
                keep = good - len(line) - 1
                seen.append(None)
        done = {s[0] for s in seen if s is not None and s[2] is None}
        retire = [i for i, s in enumerate(seen) if s is not None and not s[1] and s[2] is not None]
        for s in seen:  # each failed record carries the faults of those before it: the last one has them all
            if s is not None and s[0] not in done:
                self.history[s[0]] = s[2] or []
        if retire:
            for i in retire:
                lines[i] = orjson.dumps({**orjson.loads(lines[i]), "final": False})
            self.write_lines(RECORDS, (line for line, s in zip(lines, seen, strict=True) if s is not None))
        elif keep < len(raw):
            with path.open("r+b") as handle:
                handle.truncate(keep)
        return done

    def append(self, record: bytes) -> None:
        # one unbuffered write per line: a killed process leaves whole lines and at most one torn tail
        assert self._fd is not None, "open() the store first"
        os.write(self._fd, record + b"\n")

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None

    def records(self, *, superseded: bool = False) -> Iterator[Record]:
        """Every complete final record, read into its type, streamed (runs can be large); `superseded` adds the
        failed requests that a resume sent again (`"final": false`)."""
        path = self.records_path
        for number, row in self._numbered(superseded):
            try:
                yield Record.model_validate(row)
            except ValidationError as exc:
                problem = validation_problem(exc)
                raise InputError(f"{path}:{number}: not a record: field '{problem.field}': {problem.message}") from None

    def rows(self, *, superseded: bool = False) -> Iterator[dict[str, Any]]:
        """records() as the JSON objects on disk, untyped: for copying them whole (qualeval merge)."""
        for _, row in self._numbered(superseded):
            yield row

    def _numbered(self, superseded: bool) -> Iterator[tuple[int, dict[str, Any]]]:
        path = self.records_path
        if not path.exists():
            return
        with path.open("rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.endswith(b"\n"):
                    return  # a torn last line, from a kill
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:
                    raise InputError(f"{path}:{number}: damaged record") from None
                if superseded or not _superseded(row):
                    yield number, row

    def write_lines(self, name: str, lines: Iterable[bytes]) -> Path:
        """Write lines as they come, then move the file into place in one step."""
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        with tmp.open("wb") as handle:
            for line in lines:
                handle.write(line + b"\n")
        os.replace(tmp, path)
        return path

    def write_json(self, name: str, data: Any) -> Path:
        return self.write_text(name, orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")

    def write_text(self, name: str, text: str) -> Path:
        """Write atomically: a report is either the old one or the new one, never half of each."""
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        return path
