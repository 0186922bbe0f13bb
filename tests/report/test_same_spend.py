"""Levels that asked for different thinking and spent the same on it (a server that ignores reasoning_effort, a
budget above every answer) are said, per task and axis, with the figures: never a frontier that silently
disappears."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.sim import Behaviour, Latency, SimConfig, running_server


def _run(out: Path, *flags: str, ignore_effort: bool = False) -> tuple[str, dict[str, object]]:
    behaviour = Behaviour(reasoning_tokens=300, accuracy=0.9, trap_rate=0.0, effort_gain=1.0)
    sim = SimConfig(
        port=0, tasks=("knowledge_qa",), behaviour=behaviour, latency=Latency(burst=True), ignore_effort=ignore_effort
    )
    with running_server(sim) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "12",
             "--concurrency", "4", "--out", str(out), *flags],
        )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    return " ".join(done.stderr.split()), json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]


def test_an_ignored_effort_is_said_as_a_warning(tmp_path: Path) -> None:
    err, task = _run(tmp_path / "e", "--reasoning-effort", "low,high", ignore_effort=True)
    assert task["frontier"] is None  # nothing to trade: the levels spent the same
    assert "warning: knowledge_qa: the effort levels (low, high) spent the same reasoning tokens" in err, err
    assert "appears to ignore reasoning_effort" in err
    md = (tmp_path / "e" / "report.md").read_text()
    html = (tmp_path / "e" / "report.html").read_text()
    said = "the effort levels (low, high) spent the same"
    # at the top of both reports, with the other notes: before the first section, not after the Speed ones
    assert 0 <= md.find(said) < md.index("\n## ")
    assert 0 <= html.find(said) < html.index("<h2")


def test_a_budget_above_every_answer_is_said_and_a_budget_that_binds_is_not(tmp_path: Path) -> None:
    err, _ = _run(tmp_path / "big", "--max-tokens", "4096,8192")
    assert "the max_tokens levels (4096, 8192) spent the same reasoning tokens" in err, err
    assert "every answer fit within the smallest budget" in err
    err, task = _run(tmp_path / "effort", "--reasoning-effort", "low,high")
    assert "spent the same" not in err and task["frontier"] is not None
