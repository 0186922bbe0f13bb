"""The repository itself: lint-clean, and the wheel carries the reasoning formats."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    done = subprocess.run([ruff, "check", "qualeval", "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_wheel_ships_the_parsers(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 and "hatchling" in done.stderr:
        pytest.skip("hatchling is not installed in this environment")
    assert done.returncode == 0, done.stderr
    wheel = next(tmp_path.glob("qualeval-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "qualeval/_data/parsers/think.yaml" in names
    assert "qualeval/_data/tasks/gsm8k.yaml" in names and "qualeval/_data/tasks/knowledge_qa.yaml" in names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)
