"""What a run of episodes reports of its requests: a step cut off by the budget is a truncation, a fault retried
inside an episode is a fault retried, and the speed figures say they count the episodes' requests (their steps)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.test_resume import WHEEL_CACHED
from tests.conftest import ROOT, sim_process

TASK = "bfcl_multi_turn:base"


def _run(url: str, out: Path, *extra: str) -> tuple[list[dict], list[dict], dict]:
    subprocess.run(
        [sys.executable, "-m", "qualeval", "run", "--base-url", url, "--model", "sim", "--task", TASK,
         "--limit", "6", "--no-probe", "--reasoning-passback", "reasoning", "--out", str(out), *extra],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True,
    )  # fmt: skip
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    steps = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    return records, steps, json.loads((out / "summary.json").read_text())["tasks"][TASK]


@pytest.mark.skipif(not WHEEL_CACHED, reason="the bfcl-eval wheel is not cached")
def test_a_step_cut_off_is_a_truncation_and_the_budget_reads_single_requests(tmp_path: Path) -> None:
    with sim_process("--task", TASK, "--accuracy", "1", "--faults", "needs_reasoning=1", "--burst") as url:
        records, steps, summary = _run(url, tmp_path / "run", "--max-tokens", "150")
    cut = {(s["sample_id"], s["repeat"]) for s in steps if s["finish_reason"] == "length"}
    assert cut, "the reference server cut no step: the test shows nothing"
    for record in records:
        was_cut = (record["sample_id"], record["repeat"]) in cut
        assert (record["status"] in ("answer_truncated", "reasoning_truncated")) == was_cut
        assert record["episode"]["truncated"] == sum(
            s["finish_reason"] == "length" for s in steps if s["sample_id"] == record["sample_id"]
        )
    measured = [r for r in records if not r.get("warmup")]
    truncation = summary["linked"]["truncation"]
    assert truncation["truncated"] == sum((r["sample_id"], r["repeat"]) in cut for r in records)
    speed = summary["speed"]
    assert speed["episodes"] == len(measured)
    assert speed["requests"] == sum(r["episode"]["steps"] for r in measured)
    assert speed["tpot"] is None  # an episode's time past its first token holds its other requests'
    # no step went past 150 tokens: the suggestion is what one request needs (at least twice the budget, with
    # this many cut), not an episode's sum of them
    assert truncation["suggested_budget"] == 300


@pytest.mark.skipif(not WHEEL_CACHED, reason="the bfcl-eval wheel is not cached")
def test_faults_retried_inside_episodes_are_counted_per_request(tmp_path: Path) -> None:
    with sim_process("--task", TASK, "--faults", "500=0.5", "--retry-after", "0", "--burst") as url:
        records, steps, summary = _run(url, tmp_path / "run", "--max-retries", "8")
    retried = [s for s in steps if s["attempts"] > 1]
    assert retried, "no step was retried: the test shows nothing"
    assert sum(len(r["retried"]) for r in records) == sum(len(s["retried"]) for s in steps) > 0
    assert summary["faults"] and sum(summary["faults"].values()) == sum(len(s["retried"]) for s in steps)
    assert summary["retried"] == len(retried)


@pytest.mark.skipif(not WHEEL_CACHED, reason="the bfcl-eval wheel is not cached")
def test_the_episodes_of_a_parity_run_are_figured_per_side(tmp_path: Path) -> None:
    with sim_process("--task", TASK, "--burst") as url:
        records, _, summary = _run(url, tmp_path / "run", "--limit", "3", "--stream-parity")
    assert summary["retried"] == 0 and summary["faults"] == {}  # an episode of many steps is no request retried
    levels = summary["levels"]
    assert sorted(levels) == ["stream=off", "stream=on"]
    for label, level in levels.items():
        at = [r for r in records if r["level"] == label]
        assert level["episodes"]["episodes"] == len(at) == 3
        # the times leave the warm-up out, as the speed figures do
        assert level["episodes"]["episode_ms"]["n"] == sum(not r.get("warmup") for r in at)
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"### {TASK} @ stream=on: 3 episodes" in report and f"### {TASK} @ stream=off: 3 episodes" in report
