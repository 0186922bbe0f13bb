"""A rescore prints what the run printed: a budget sweep's accuracy per level, never only statuses."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.sim import Latency, SimConfig, running_server


def test_rescoring_a_budget_sweep_prints_the_accuracy_per_level(tmp_path: Path) -> None:
    out = tmp_path / "eff"
    config = SimConfig(port=0, tasks=("knowledge_qa",), latency=Latency(burst=True))
    with running_server(config) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "4",
             "--max-tokens", "128,1024", "--out", str(out)],
        )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    again = CliRunner().invoke(app, ["rescore", str(out)])
    assert again.exit_code == 0, again.stderr
    levels = json.loads((out / "rescore" / "summary.json").read_text())["tasks"]["knowledge_qa"]["levels"]
    run_shown, shown = " ".join(done.stdout.split()), " ".join(again.stdout.split())
    assert set(levels) == {"max_tokens=128", "max_tokens=1024"}
    for name, level in levels.items():
        cell = level["accuracy"]
        assert f"accuracy at {name}" in run_shown and f"accuracy at {name}" in shown
        assert f"({cell['correct']}/{cell['n']})" in shown
