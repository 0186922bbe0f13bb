"""The known-truth suite's runner: `qualeval` in process, its summary read back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner


@dataclass(frozen=True)
class Done:
    code: int
    stdout: str
    stderr: str

    def summary(self, out: Path, task: str) -> dict[str, Any]:
        assert self.code == 0, f"exit {self.code}: {self.stderr}"
        return json.loads((out / "summary.json").read_text())["tasks"][task]["summary"]

    def refused(self) -> str:
        """The one `error:` line of a refusal: exit 2, no traceback."""
        assert self.code == 2, f"expected a refusal (exit 2), got {self.code}: {self.stdout} {self.stderr}"
        errors = [line for line in self.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, self.stderr
        assert "Traceback" not in self.stderr
        return errors[0]


@pytest.fixture
def qualeval() -> Any:
    def call(*args: str | Path) -> Done:
        from qualeval.cli import app

        done = CliRunner().invoke(app, [str(a) for a in args])
        if done.exception is not None and not isinstance(done.exception, SystemExit):
            raise done.exception
        return Done(done.exit_code, done.stdout, done.stderr)

    return call
