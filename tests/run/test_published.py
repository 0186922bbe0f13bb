"""`--published TASK=FIGURE` is shown beside that task's accuracy: for a task the run does not have it would be
shown nowhere, so it is refused before any request, naming the task and the run's tasks."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import qualeval
from qualeval.cli import app
from qualeval.errors import InputError
from qualeval.sim import Behaviour, SimConfig, running_server

UNREACHED = "http://127.0.0.1:8169/v1"  # nothing listens: the refusal comes before any request


def test_a_figure_for_a_task_not_in_the_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"--published gsm8k: no task 'gsm8k' in this run \(its tasks: knowledge_qa\)"):
        qualeval.evaluate(
            model="sim", tasks=["knowledge_qa"], base_url=UNREACHED, out=tmp_path / "run", published={"gsm8k": 0.9}
        )
    assert not (tmp_path / "run" / "records.jsonl").exists()
    done = CliRunner().invoke(app, [
        "run", "--base-url", UNREACHED, "--model", "sim", "--task", "knowledge_qa", "--task", "syllogisms",
        "--published", "knowledge=80%", "--out", str(tmp_path / "cli"),
    ])  # fmt: skip
    assert done.exit_code == 2
    assert "error: --published knowledge: no task 'knowledge' in this run (its tasks: knowledge_qa, syllogisms)" in (
        done.output
    )


def test_a_figure_for_a_task_of_the_run_is_shown_beside_it(tmp_path: Path) -> None:
    sim = SimConfig(port=0, tasks=("syllogisms",), behaviour=Behaviour(accuracy=1.0))
    with running_server(sim) as url:
        result = qualeval.evaluate(
            model="sim", tasks=["syllogisms"], base_url=url, out=tmp_path / "run", limit=3, probe=False,
            constraint="off", published={"syllogisms": 0.85},
        )  # fmt: skip
    assert result.summary.tasks["syllogisms"].published == 0.85
