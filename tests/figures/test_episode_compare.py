"""Passback on against off, paired: two agent runs on the reference server that differ only in
--reasoning-passback (vLLM flavour, `needs_reasoning=1`: a turn after the first is answered wrong unless the
reasoning comes back under `reasoning`). compare shows accuracy by turn index side by side with B - A per turn and
the interleaved-thinking figure; board and gate read the episodes' verdicts; an episode ended by an endpoint
error is left out of the pairs and counted apart, never a wrong answer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qualeval.figures import gate_runs
from qualeval.figures.board import board_runs
from qualeval.figures.compare import compare_runs
from qualeval.figures.episodecompare import episode_sides
from qualeval.figures.rundir import read_run
from tests.agent.test_resume import WHEEL_CACHED
from tests.conftest import ROOT, sim_process

pytestmark = pytest.mark.skipif(not WHEEL_CACHED, reason="the bfcl-eval wheel is not cached")

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def _qualeval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=300, env=ENV
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Eight base episodes with the reasoning passed back as vLLM reads it (`on`), and with none (`off`)."""
    root = tmp_path_factory.mktemp("passback")
    faults = ("--faults", "needs_reasoning=1", "--accuracy", "1")
    with sim_process("--task", "bfcl_multi_turn:base", "--burst", "--flavour", "vllm", *faults) as url:
        for name, mode in (("on", "reasoning"), ("off", "none")):
            done = _qualeval(
                "run", "--base-url", url, "--model", "sim", "--task", "bfcl_multi_turn:base", "--limit", "8",
                "--no-probe", "--reasoning-passback", mode, "--out", str(root / name),
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
    return root / "on", root / "off"


def test_compare_shows_accuracy_by_turn_and_the_interleaved_thinking_figure(runs: tuple[Path, Path]) -> None:
    on, off = runs
    result = compare_runs(on, off)
    t = result.tasks["bfcl_multi_turn:base"]
    # the option asked, and the passback the run applied
    assert result.settings == {"reasoning_passback": ("reasoning", "none"), "pinned.passback": ("reasoning", "none")}
    assert (t.accuracy_a, t.accuracy_b, t.a_right_b_wrong) == (1.0, 0.0, 8)
    e = t.episodes
    assert e is not None and e.passback == ({"reasoning": 8}, {"none": 8}) and e.passback_only
    # the fault harms turns after the first: turn 0 agrees, turn 1 is where the passback shows
    first, second = e.by_turn[0], e.by_turn[1]
    assert (first.turn, first.n, first.right_a, first.right_b, first.difference) == (0, 8, 8, 8, 0.0)
    assert (second.turn, second.n, second.right_a, second.right_b, second.difference) == (1, 8, 8, 0, -1.0)
    assert e.figure is not None and e.figure.startswith("interleaved-thinking figure (reasoning passed back as none")
    assert "episode accuracy -100.0% [-100.0%, -100.0%] on 8 paired episodes" in e.figure
    # an episode's record holds its first step alone: no "identical answers judged differently" of it
    assert t.identical is None
    done = _qualeval("compare", str(on), str(off), "--out", str(on.parent / "cmp"))
    shown = done.stdout + done.stderr  # the table, then the notes
    assert "turn 1 accuracy (8" in shown and "interleaved-thinking figure" in shown
    assert "judged differently" not in shown
    written = json.loads((on.parent / "cmp" / "compare.json").read_text())
    html = (on.parent / "cmp" / "compare.html").read_text()
    assert "turn 1 accuracy (8 reached in both)" in html and "interleaved-thinking figure" in html
    assert written["tasks"]["bfcl_multi_turn:base"]["episodes"]["by_turn"][1]["difference"] == -1.0


def test_a_second_setting_that_differs_takes_the_label_away(runs: tuple[Path, Path], tmp_path: Path) -> None:
    on, off = runs
    other = shutil.copytree(off, tmp_path / "off")
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["config"]["max_tokens"] = 1234
    (other / "manifest.json").write_text(json.dumps(manifest))
    e = compare_runs(on, other).tasks["bfcl_multi_turn:base"].episodes
    assert e is not None and e.passback_differs and not e.passback_only
    assert e.figure is not None and "max_tokens" in e.figure and "not the passback's effect alone" in e.figure


def _stopped(run: Path, out: Path, items: int) -> Path:
    """The run with its last `items` episodes ended by an endpoint error, as the loop writes one."""
    copy = shutil.copytree(run, out)
    lines = (copy / "records.jsonl").read_text().splitlines()
    for i in range(len(lines) - items, len(lines)):
        record = json.loads(lines[i])
        record["status"], record["error"] = "transport_error", "turn 1 step 0, reasoning passed back as none: HTTP 400"
        record["score"] = {"correct": None, "detail": "the episode stopped at an endpoint error"}
        record["episode"]["ended"] = "endpoint_error"
        lines[i] = json.dumps(record)
    (copy / "records.jsonl").write_text("\n".join(lines) + "\n")
    return copy


def test_an_episode_ended_by_the_endpoint_is_counted_apart(runs: tuple[Path, Path], tmp_path: Path) -> None:
    on, off = runs
    stopped = _stopped(off, tmp_path / "off", 1)
    t = compare_runs(on, stopped).tasks["bfcl_multi_turn:base"]
    assert t.pairs == 7 and t.endpoint_errors == (0, 1) and t.a_right_b_wrong == 7
    assert t.episodes is not None and all(turn.n <= 7 for turn in t.episodes.by_turn)
    policy = tmp_path / "gate.yaml"
    policy.write_text("default:\n  accuracy: {max_drop: 0.05}\n  endpoint_errors: {max: 1}\n")
    gate = gate_runs(baseline=on, candidate=stopped, policy_path=policy)
    clauses = {c.clause: c for c in gate.tasks["bfcl_multi_turn:base"].clauses}
    assert clauses["accuracy"].verdict == "NO-GO" and "7 paired items" in clauses["accuracy"].detail
    assert clauses["endpoint_errors"].verdict == "GO"
    assert "1 episodes failed at the endpoint in the candidate (each ended there: left out" in (
        clauses["endpoint_errors"].detail
    )


def test_board_and_gate_read_the_episode_verdicts(runs: tuple[Path, Path], tmp_path: Path) -> None:
    on, off = runs
    cell = board_runs([on, off]).tasks["bfcl_multi_turn:base"]
    assert [c.accuracy.accuracy for c in cell.configs.values() if c.accuracy] == [1.0, 0.0]
    policy = tmp_path / "gate.yaml"
    policy.write_text("default:\n  accuracy: {max_drop: 0.05}\n  endpoint_errors: {max: 0}\n")
    gate = _qualeval("gate", str(off), "--baseline", str(on), "--policy", str(policy))
    assert gate.returncode == 1 and "accuracy: NO-GO: -100.0 points on 8 paired items" in gate.stdout
    # every pair discordant: the adjusted interval would reach -111.2 points, which no difference of shares can
    assert "(one-sided 95% bounds -100.0 to -48.8)" in gate.stdout
    # the other way round the passback is no drop: the candidate that carries the reasoning back passes
    back = _qualeval("gate", str(on), "--baseline", str(off), "--policy", str(policy))
    assert back.returncode == 0, back.stdout


def test_a_turn_is_paired_only_where_both_episodes_reached_and_judged_it(runs: tuple[Path, Path]) -> None:
    on, off = runs
    a, b = read_run(on), read_run(off)
    pairs = [(a.records[k], b.records[k]) for k in sorted(set(a.records) & set(b.records))]
    ra, rb = pairs[0]
    assert ra.episode is not None and rb.episode is not None and len(rb.episode.turns) >= 3
    t, settings = compare_runs(on, off).tasks["bfcl_multi_turn:base"], {"reasoning_passback": ("reasoning", "none")}
    whole = episode_sides(t, pairs, settings)
    # B's first episode quit after its second turn, and its first turn was never judged
    turns = [rb.episode.turns[0].model_copy(update={"passed": None}), rb.episode.turns[1]]
    pairs[0] = (ra, rb.model_copy(update={"episode": rb.episode.model_copy(update={"turns": turns})}))
    cut = episode_sides(t, pairs, settings)
    assert whole is not None and cut is not None and [x.n for x in whole.by_turn][:2] == [8, 8]
    less = [w.n - c.n for w, c in zip(whole.by_turn, cut.by_turn, strict=True)]
    assert less == [1, 0, 1, *[int(i < len(ra.episode.turns)) for i in range(3, len(less))]]
    # a task of single requests has no episodes to set side by side
    single = [(ra.model_copy(update={"episode": None}), rb.model_copy(update={"episode": None}))]
    assert episode_sides(t, single, {}) is None
