"""`qualeval score`'s folder and its public face: --out never lands on a run, `open_run` of the folder says where
its results are, `score_file` takes what `evaluate` takes, and the summary claims no truncation it never counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import qualeval
from qualeval.errors import InputError
from qualeval.records import RunSummary
from tests.figures.test_board import flags, write_run
from tests.run.test_offline_formats import score_cli

ANSWERS = [
    {"id": "knowledge_qa/test/0", "content": "<think>France's capital is Paris, not Lyon.</think>\nAnswer: Paris"},
    {"id": "knowledge_qa/test/1", "content": "Answer: Kyoto"},
    {"id": "knowledge_qa/test/2", "content": "<think>Sydney is the largest city, but", "finish_reason": "length"},
]


def answers(path: Path) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in ANSWERS))
    return path


def test_score_refuses_an_out_that_holds_a_run_and_replaces_an_earlier_offline_scoring(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", flags(20, {3}))
    (run / "summary.json").write_text("{}")
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    responses = answers(tmp_path / "answers.jsonl")
    code, _, err = score_cli("--task", "knowledge_qa", "--responses", str(responses), "--out", str(run))
    assert code == 2 and err.startswith("error: --out ") and len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # nothing written over
    scored = tmp_path / "scored"
    for _ in range(2):  # an earlier offline scoring: every file of it replaced, none left of another's
        code, _, err = score_cli("--task", "knowledge_qa", "--responses", str(responses), "--out", str(scored))
        assert code == 0, err
        assert json.loads((scored / "summary.json").read_text())["records"] == 3
    summary = json.loads((scored / "summary.json").read_text())
    (run / "manifest.json").unlink()
    (run / "records.jsonl").unlink()
    (run / "summary.json").write_text(json.dumps({**summary, "base_url": "http://127.0.0.1:1/v1", "source": None}))
    code, _, err = score_cli("--task", "knowledge_qa", "--responses", str(responses), "--out", str(run))
    assert code == 2 and "a run's summary.json" in err  # a run's summary, its records gone: still a run's


def test_open_run_of_a_score_folder_says_where_its_results_are(tmp_path: Path) -> None:
    responses = answers(tmp_path / "answers.jsonl")
    code, _, err = score_cli("--task", "knowledge_qa", "--responses", str(responses), "--out", str(tmp_path / "s"))
    assert code == 0, err
    with pytest.raises(InputError, match=r"scored offline .*items\.jsonl"):
        qualeval.open_run(str(tmp_path / "s"))


def test_score_file_takes_a_task_name_and_string_paths(tmp_path: Path) -> None:
    responses = answers(tmp_path / "answers.jsonl")
    items, summary = qualeval.score_file("knowledge_qa", str(responses), data=None)
    assert [(i.status, i.correct) for i in items] == [("ok", True), ("ok", False), ("reasoning_truncated", False)]
    assert (summary.n, summary.correct) == (3, 1)


def test_the_offline_summary_counts_no_truncation_it_never_measured(tmp_path: Path) -> None:
    """1 of 3 lines is reasoning_truncated; `linked.truncation` said 0 truncated at rate 0.0."""
    responses = answers(tmp_path / "answers.jsonl")
    code, _, err = score_cli("--task", "knowledge_qa", "--responses", str(responses), "--out", str(tmp_path / "s"))
    assert code == 0, err
    run = RunSummary.model_validate_json((tmp_path / "s" / "summary.json").read_text())
    task = run.tasks["knowledge_qa"]
    assert task.summary.statuses["reasoning_truncated"] == 1
    assert task.linked.truncation is None
