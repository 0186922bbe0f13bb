"""summary.json: one writer for a run and for `qualeval score`, and an offline summary says what it judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qualeval.records import RunSummary
from qualeval.records.store import RunStore
from tests.run.test_offline import score_cli, write


def test_an_offline_summary_names_its_file_as_its_source_not_as_a_server(tmp_path: Path) -> None:
    responses = write(tmp_path / "r.jsonl", [{"id": "a", "content": "The answer is 18.", "target": "18"}])
    code, out = score_cli("--task", "gsm8k", "--responses", str(responses), "--out", str(tmp_path / "o"))
    assert code == 0, out
    summary = RunSummary.model_validate_json((tmp_path / "o" / "summary.json").read_bytes())
    assert summary.base_url is None and summary.source == str(responses)
    assert summary.model == "offline: r.jsonl" and summary.records == 1
    assert summary.tasks["gsm8k"].summary.correct == 1 and summary.tasks["gsm8k"].speed.requests == 0
    md = (tmp_path / "o" / "report.md").read_text()
    html = (tmp_path / "o" / "report.html").read_text()
    assert f"responses from **{responses}**" in md and f"responses from <b>{responses}</b>" in html


def test_a_run_and_an_offline_score_write_summary_json_alike(tmp_path: Path) -> None:
    """Both go through write_summary_json: the same file, the same layout, read back as written."""
    from qualeval.figures.summary import offline_summary, write_summary_json

    responses = write(tmp_path / "r.jsonl", [{"id": "a", "content": "The answer is 18.", "target": "18"}])
    code, out = score_cli("--task", "gsm8k", "--responses", str(responses), "--out", str(tmp_path / "o"))
    assert code == 0, out
    written = (tmp_path / "o" / "summary.json").read_text()
    summary = RunSummary.model_validate_json(written)
    again = offline_summary(summary.tasks["gsm8k"].summary, responses, summary.records)
    path = write_summary_json(RunStore(tmp_path / "again"), again.model_copy(update={"qualeval_version": "x"}))
    assert path == tmp_path / "again" / "summary.json"
    assert json.loads(path.read_text()) == {**json.loads(written), "qualeval_version": "x"}


def _unscored_run(root: Path, concurrency: tuple[int, ...] = (1,)) -> Path:
    """A run of three synthetic prompts (a workload's: no right answer) at each load level, each read as wrong by
    the scorer."""
    from qualeval.records import Manifest, Record, RunConfig, TaskEntry
    from qualeval.tasks import load_task
    from tests.test_records import OLD_RECORD

    config = RunConfig(
        base_url="http://127.0.0.1:1/v1", model="sim", tasks=["knowledge_qa"], out=root, concurrency=list(concurrency)
    )  # levels c=N, as the records say
    store = RunStore(root)
    store.open(
        Manifest(fingerprint="f", config=config, tasks={"knowledge_qa": TaskEntry(spec=load_task("knowledge_qa").spec)})
    )
    for c in concurrency:
        for i in range(3):
            record = Record.model_validate_json(OLD_RECORD)
            update = {"sample_id": f"knowledge_qa/test/{i}", "scored": False, "gold": "", "level": f"c={c}"}
            store.append(record.model_copy(update=update).model_dump_json().encode())
    store.close()
    return root


def test_a_run_that_was_never_scored_shows_no_accuracy_anywhere(tmp_path: Path) -> None:
    import subprocess
    import sys

    import qualeval

    root = _unscored_run(tmp_path / "run")
    done = subprocess.run([sys.executable, "-m", "qualeval", "rescore", str(root)], capture_output=True, text=True)
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "not scored" in said and "accuracy" not in said, said
    result = qualeval.open_run(root / "rescore")
    t = result.summary.tasks["knowledge_qa"]
    assert not t.scored and t.summary.n == 3 and t.summary.statuses
    assert (t.summary.accuracy, t.summary.interval, t.summary.correct) == (None, None, None)
    assert t.summary.accuracy_answered is None and not t.summary.breakdowns and not t.summary.macro_accuracy
    assert t.linked.correct_per_minute is None and t.linked.tokens_per_correct is None
    assert not t.linked.accuracy_by_reasoning_length and not t.linked.latency_by_outcome
    assert t.levels and all(level.accuracy.n == 0 for level in t.levels.values())
    rows = [record.frame_row() for record in RunStore(root / "rescore").records()]
    assert [row["correct"] for row in rows] == [None] * 3


def test_an_unscored_runs_levels_have_no_accuracy_nor_interval(tmp_path: Path) -> None:
    """A load level where nothing was judged has no share (null, not 0.0 between 0 and 1): in summary.json, the
    Python API and the reports, for one level and for a sweep."""
    import subprocess
    import sys

    import qualeval

    for concurrency in ((1,), (1, 2)):
        root = _unscored_run(tmp_path / f"run{len(concurrency)}", concurrency)
        done = subprocess.run([sys.executable, "-m", "qualeval", "rescore", str(root)], capture_output=True, text=True)
        assert done.returncode == 0 and "0.0%" not in done.stdout, done.stdout + done.stderr
        written = json.loads((root / "rescore" / "summary.json").read_text())["tasks"]["knowledge_qa"]["levels"]
        assert sorted(written) == [f"c={c}" for c in concurrency]
        assert all((v["accuracy"]["accuracy"], v["accuracy"]["low"], v["accuracy"]["high"]) == (None,) * 3
                   for v in written.values())  # fmt: skip
        levels = qualeval.open_run(root / "rescore").summary.tasks["knowledge_qa"].levels
        assert all(lv.accuracy.accuracy is None and lv.accuracy.low is None for lv in levels.values())
        for page in ("report.md", "report.html"):
            assert "0.0%" not in (root / "rescore" / page).read_text(), page


def test_a_summary_written_with_zero_for_an_empty_cell_reads_as_none() -> None:
    """summary.json files written before cells could be empty said 0% between 0 and 1 at n = 0: they still load,
    and read as no accuracy; a cell that judged items keeps its figures."""
    from qualeval.records import Cell

    old = Cell.model_validate({"n": 0, "correct": 0, "accuracy": 0.0, "low": 0.0, "high": 1.0})
    assert (old.accuracy, old.low, old.high) == (None, None, None)
    kept = Cell.model_validate({"n": 4, "correct": 0, "accuracy": 0.0, "low": 0.0, "high": 0.49})
    assert (kept.accuracy, kept.low, kept.high) == (0.0, 0.0, 0.49)


def test_an_offline_summary_source_is_found_again_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file named as given on the command line ("r.jsonl") would point nowhere from the run directory."""
    write(tmp_path / "r.jsonl", [{"id": "a", "content": "The answer is 18.", "target": "18"}])
    monkeypatch.chdir(tmp_path)
    code, out = score_cli("--task", "gsm8k", "--responses", "r.jsonl", "--out", "o")
    assert code == 0, out
    summary = RunSummary.model_validate_json((tmp_path / "o" / "summary.json").read_bytes())
    assert summary.source == str(tmp_path / "r.jsonl")
