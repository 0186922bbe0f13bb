"""`board`, `compare` and `gate` write their pages into a folder of their own: an --out that holds a run (its
manifest, its records, its rescore) is one error line and exit 2, and nothing is written there, as `qualeval score
--out` refuses it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.figures.test_board import write_run


def _cli(*args: Path | str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "qualeval", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})


def _refused(done: subprocess.CompletedProcess[str], out: Path) -> None:
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: --out {out}: holds a run directory; give a new folder for {errors[0].split('for ')[-1]}"]


def test_an_out_that_holds_a_run_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [True, False, True, True])
    b = write_run(tmp_path / "b", [True, True, True, False])
    before = sorted(p.name for p in a.iterdir())
    _refused(_cli("board", a, b, "--out", a), a)
    _refused(_cli("compare", a, b, "--out", a), a)
    policy = tmp_path / "gate.yaml"
    policy.write_text("default:\n  accuracy: {max_drop: 0.5}\n")
    _refused(_cli("gate", b, "--baseline", a, "--policy", policy, "--out", a), a)
    assert sorted(p.name for p in a.iterdir()) == before
    rescored = a / "rescore"  # a rescore's folder holds records too
    rescored.mkdir()
    (rescored / "records.jsonl").write_text("")
    _refused(_cli("compare", a / "records.jsonl", b, "--out", rescored), rescored)
    assert sorted(p.name for p in rescored.iterdir()) == ["records.jsonl"]


def test_the_default_and_a_new_folder_are_written(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [True, False, True, True])
    b = write_run(tmp_path / "b", [True, True, True, False])
    assert _cli("compare", a, b).returncode == 0 and (b / "compare" / "compare.json").exists()
    assert _cli("compare", a, b / "records.jsonl").returncode == 0  # B named by its records: B/compare again
    assert _cli("board", a, b, "--out", tmp_path / "board").returncode == 0
    assert (tmp_path / "board" / "board.html").exists()
