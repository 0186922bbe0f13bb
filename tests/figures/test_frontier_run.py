"""The frontier and quality under load from real runs against the reference server. It cannot make accuracy
fall with load, so the drop flag itself is tested on hand-made records (test_frontier.py); here a steady server
must raise no false flag, and the fields must be where summary.json promises them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.sim import Behaviour, Latency, SimConfig, running_server


def _sweep(url: str, out: Path, *extra: str) -> tuple[dict[str, Any], str]:
    done = CliRunner().invoke(
        app,
        ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "30", "--no-probe",
         "--constraint", "off", "--concurrency", "1,4", "--out", str(out), *extra],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    return json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"], " ".join(done.stderr.split())


def test_a_steady_sweep_is_read_against_its_first_level_and_raises_no_flag(tmp_path: Path) -> None:
    sim = SimConfig(
        port=0, tasks=("knowledge_qa",), behaviour=Behaviour(reasoning_tokens=30), latency=Latency(burst=True)
    )
    with running_server(sim) as url:
        greedy, said = _sweep(url, tmp_path / "greedy")
        sampled, _ = _sweep(url, tmp_path / "sampled", "--temperature", "0.8", "--within", "5")
    first, second = greedy["levels"]["c=1"], greedy["levels"]["c=4"]
    assert first["vs_first"] is None
    # a greedy reference server answers alike at any load; all 30 items paired, the warm-up too, as each
    # level's accuracy counts it
    same = {"pairs": 30, "identical": 30, "flipped": [], "judged_apart": []}
    assert second["vs_first"] == {"against": "c=1", "pairs": 30, "difference": 0.0, "p": 1.0, "drop": False} | {
        "identical": same
    }
    assert "warning:" not in said and "Accuracy fell under load" not in (tmp_path / "greedy" / "report.md").read_text()
    # the same words at every level spend the same tokens: no trade of accuracy against cost to show
    assert greedy["frontier"] is None
    report = (tmp_path / "greedy" / "report.md").read_text()
    assert "quality under load" in report
    # and the report says of its pairs what they are: the warm-up in, as the 30 pairs of 30 items show
    assert "warm-up included" in report and "warm-up and endpoint errors left out" not in report
    # sampled, each level's lengths move: a frontier, by level, with the --within given (points, kept as a share)
    frontier = sampled["frontier"]
    assert frontier is not None and frontier["within"] == 0.05
    assert [lv["level"] for lv in frontier["levels"]] == ["c=1", "c=4"]
    assert frontier["levels"][1]["vs_previous"]["against"] == "c=1" and frontier["best"] in ("c=1", "c=4")
    assert any(lv["efficient_tokens"] for lv in frontier["levels"]) and frontier["smallest_within"] is not None
    assert "accuracy against cost, by level" in (tmp_path / "sampled" / "report.md").read_text()
    assert 'id="frontier"' in (tmp_path / "sampled" / "report.html").read_text()
