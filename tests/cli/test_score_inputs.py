"""`qualeval score` given a qualeval run's own files: a run file's superseded records are not read, a run
directory is pointed to `qualeval rescore`, and the message names every file written."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from qualeval.cli import app


def _score(responses: Path, out: Path) -> tuple[int, str]:
    done = CliRunner().invoke(
        app, ["score", "--task", "knowledge_qa", "--responses", str(responses), "--out", str(out)]
    )
    return done.exit_code, " ".join(done.stderr.split())


def _run_file(root: Path) -> Path:
    """A run's records.jsonl where item 0 failed for good (`final: false`) and was answered on the resume."""
    root.mkdir()
    lines = [
        {"sample_id": "knowledge_qa/test/0", "content": "", "status": "transport_error", "final": False},
        {"sample_id": "knowledge_qa/test/1", "content": "Answer: Tokyo"},
        {"sample_id": "knowledge_qa/test/0", "content": "Answer: Paris", "final": True},
    ]
    (root / "records.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root / "records.jsonl"


def test_a_run_file_is_scored_by_its_final_records(tmp_path: Path) -> None:
    code, stderr = _score(_run_file(tmp_path / "run"), tmp_path / "scored")
    assert code == 0, stderr
    items = [json.loads(line) for line in (tmp_path / "scored" / "items.jsonl").read_text().splitlines()]
    assert sorted((i["id"], i["correct"]) for i in items) == [
        ("knowledge_qa/test/0", True),
        ("knowledge_qa/test/1", True),
    ]
    assert "1 records superseded by a later one (final: false) left out" in stderr
    assert f"wrote items.jsonl, summary.json, report.md and report.html in {tmp_path / 'scored'}" in stderr
    assert {p.name for p in (tmp_path / "scored").iterdir()} == {
        "items.jsonl",
        "summary.json",
        "report.md",
        "report.html",
    }


def test_a_run_directory_is_pointed_to_rescore(tmp_path: Path) -> None:
    run = _run_file(tmp_path / "run").parent
    code, stderr = _score(run, tmp_path / "scored")
    assert code == 2
    assert stderr == (
        f"error: --responses {run}: a folder, not a file of responses; a run directory is rescored with "
        f"`qualeval rescore {run}`"
    )
