"""steps.jsonl: one StepRecord per request of an agent's loop, appended as each step ends, as records.jsonl is
(one unbuffered write a line, so a run killed at any moment leaves whole lines and at most one torn last line,
which opening drops). Read back by the request each step belongs to (sample id, repeat, load level): a resume
replays an unfinished episode's steps, and a rescore re-judges a finished one from them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import orjson
from pydantic import ValidationError

from qualeval.errors import InputError, validation_problem
from qualeval.records.episodes import StepRecord
from qualeval.records.store import Key

__all__ = ["STEPS", "StepLog", "read_steps"]

STEPS = "steps.jsonl"


def _whole(path: Path) -> Iterator[tuple[int, bytes]]:
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if line.endswith(b"\n"):  # a torn last line, from a kill, is no step
                yield number, line


def read_steps(root: Path) -> dict[Key, list[StepRecord]]:
    """Every step a run directory holds, by the request it belongs to, in the order written."""
    path = root / STEPS
    steps: dict[Key, list[StepRecord]] = {}
    for number, line in _whole(path):
        try:
            step = StepRecord.model_validate(orjson.loads(line))
        except orjson.JSONDecodeError:
            raise InputError(f"{path}:{number}: damaged step") from None
        except ValidationError as exc:
            problem = validation_problem(exc)
            raise InputError(f"{path}:{number}: not a step: field '{problem.field}': {problem.message}") from None
        steps.setdefault((step.sample_id, step.repeat, step.level), []).append(step)
    return steps


class StepLog:
    """steps.jsonl of one run, open for appending."""

    def __init__(self, root: Path) -> None:
        self.path = root / STEPS
        self._fd: int | None = None

    def open(self) -> dict[Key, list[StepRecord]]:
        """Drop a torn last line, and return the steps already written, by request."""
        if self.path.exists():
            raw = self.path.read_bytes()
            whole = raw.rfind(b"\n") + 1
            if whole < len(raw):
                with self.path.open("r+b") as handle:
                    handle.truncate(whole)
        steps = read_steps(self.path.parent)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return steps

    def append(self, step: StepRecord) -> None:
        assert self._fd is not None, "open() the step log first"
        os.write(self._fd, step.model_dump_json().encode() + b"\n")

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
