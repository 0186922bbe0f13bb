"""summary.json: one writer for a run and for `qualeval score`, and an offline summary says what it judged."""

from __future__ import annotations

import json
from pathlib import Path

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
