"""A fake API package laid out as an extracted wheel, for the environment and scoring tests that need no wheel."""

from __future__ import annotations

from pathlib import Path

from qualeval.records import TaskSpec

SHA = "0" * 64

COUNTER = """
from fake_pkg.shared import START


class Counter:
    def __init__(self):
        self.count = START
        self._hidden = 1

    def _load_scenario(self, config, long_context=False):
        self.count = config.get("count", START) + (100 if long_context else 0)

    def add(self, by: int = 1):
        self.count += by
        return {"count": self.count}

    def label(self):
        return "count is " + str(self.count)

    def fail(self):
        raise ValueError("nothing to fail at")

    def kill(self):
        return "should never run"
"""


def fake_spec(tmp_path: Path, modules: dict[str, str], files: dict[str, str]) -> tuple[TaskSpec, Path]:
    """A task whose environment is a fake package in a folder laid out as an extracted wheel."""
    code = tmp_path / "fake_pkg" / "api"
    code.mkdir(parents=True)
    for name, text in files.items():
        (code / name).write_text(text)
    spec = TaskSpec.model_validate(
        {
            "name": "fake",
            "wheel": {"package": "fake", "version": "1", "sha256": SHA, "root": "fake_pkg/data"},
            "data_files": {"test": "x.json"},
            "scorer": "episode",
            "environment": {
                "code": "fake_pkg/api",
                "package": "fake_pkg",
                "modules": modules,
                "docs": {c: "x.json" for c in modules},
            },
        }
    )
    return spec, tmp_path


def counter_spec(tmp_path: Path) -> tuple[TaskSpec, Path]:
    return fake_spec(tmp_path, {"Counter": "counter.py"}, {"counter.py": COUNTER, "shared.py": "START = 5\n"})
