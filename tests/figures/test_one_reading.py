"""One reading of B - A across compare, board and gate: beyond noise when McNemar's exact test on its pairs rejects
at 0.05 and, with a rerun of the baseline, it is larger than what the rerun moved on its own. The smallest
detectable difference is said beside it, as information, never as the test. The three tools, run on the same runs,
never contradict each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qualeval.figures import board_runs, compare_runs, gate_runs
from qualeval.figures.noise import mcnemar_exact, minimum_detectable, read_noise
from tests.figures.test_board import flags, write_run
from tests.figures.test_gate import policy


def runs(root: Path, n: int, down: int, up: int, moved: tuple[int, int]) -> tuple[Path, Path, Path]:
    """A baseline right on all but its first quarter of items (at most 20); its rerun with `moved` (down, up) items
    changed; a candidate with `down` of the baseline's right answers wrong and `up` of its wrong ones right."""
    wrong = set(range(min(20, n // 4)))
    base = write_run(root / "base", flags(n, wrong))
    rerun_wrong = (wrong - set(range(moved[1]))) | set(range(len(wrong), len(wrong) + moved[0]))
    rerun = write_run(root / "again", flags(n, rerun_wrong))
    cand_wrong = (wrong - set(range(up))) | set(range(n - down, n))
    cand = write_run(root / "cand", flags(n, cand_wrong), config={"temperature": 0.7})
    return base, rerun, cand


CASES = [
    # the sampled runs: -14 points, McNemar p = 0.039; the rerun moved 2 points, and 50 pairs that
    # discordant detect 20 points or more: the old floor called this loss "within"
    pytest.param(50, 8, 1, (1, 0), False, "NO-GO", id="a-14-point-loss-significant"),
    pytest.param(16, 5, 1, (0, 0), True, "INCONCLUSIVE", id="a-25-point-loss-on-16-items-p-0.22"),
    # significant on its pairs (p 0.013), but the baseline's rerun moved 12 points on its own
    pytest.param(100, 12, 2, (12, 0), True, "INCONCLUSIVE", id="significant-but-within-the-rerun"),
    pytest.param(400, 3, 3, (1, 1), True, "GO", id="nothing-changed"),
]


@pytest.mark.parametrize(("n", "down", "up", "moved", "within", "verdict"), CASES)
def test_compare_board_and_gate_read_the_same_runs_alike(
    tmp_path: Path, n: int, down: int, up: int, moved: tuple[int, int], within: bool, verdict: str
) -> None:
    base, rerun, cand = runs(tmp_path, n, down, up, moved)
    compared = compare_runs(base, cand, again=rerun).tasks["t"]
    board = board_runs([base, cand], rerun=rerun).tasks["t"]
    on_board = list(board.configs.values())[1]
    gated = gate_runs(
        baseline=base,
        candidate=cand,
        rerun=rerun,
        policy_path=policy(tmp_path / "p", "default:\n  accuracy: {max_drop: 0.05}\n"),
    )
    clause = gated.tasks["t"].clauses[0]
    assert compared.within_noise is on_board.within_noise is clause.within_noise is within
    assert clause.verdict == verdict
    # the same sentence, word for word, in compare's output and the gate's detail
    assert compared.noise_reading is not None and compared.noise_reading in clause.detail
    assert compared.p_value == clause.p_value == mcnemar_exact(down, up)
    # a NO-GO is a loss the comparison reads beyond noise; a loss within noise is never a NO-GO
    if clause.verdict == "NO-GO":
        assert compared.within_noise is False and compared.difference < 0
    # the detectable difference stays, as information
    assert compared.detectable == minimum_detectable(n, down + up)


def test_the_three_commands_agree_in_what_they_print(tmp_path: Path) -> None:
    base, rerun, cand = runs(tmp_path, 50, 8, 1, (1, 0))
    env = {**os.environ, "COLUMNS": "300"}

    def cli(*args: Path | str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "qualeval", *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)

    compared = cli("compare", base, rerun, cand, "--out", tmp_path / "cmp")
    assert compared.returncode == 0, compared.stderr
    said = json.loads((tmp_path / "cmp" / "compare.json").read_text())["tasks"]["t"]["noise_reading"]
    assert said.startswith("beyond noise") and said in " ".join(compared.stdout.split())
    assert said in (tmp_path / "cmp" / "compare.html").read_text()
    boarded = cli("board", base, cand, "--rerun", rerun, "--out", tmp_path / "board")
    assert boarded.returncode == 0, boarded.stderr
    configs = json.loads((tmp_path / "board" / "board.json").read_text())["tasks"]["t"]["configs"]
    assert [c["within_noise"] for c in configs.values()] == [None, False]
    rule = policy(tmp_path / "p", "default:\n  accuracy: {max_drop: 0.05}\n")
    gated = cli("gate", cand, "--baseline", base, "--rerun", rerun, "--policy", rule)
    assert gated.returncode == 1 and said in " ".join(gated.stdout.split()), gated.stdout


def test_the_reading_in_words() -> None:
    beyond = read_noise(50, 8, 1, moved=0.02)
    assert not beyond.within and beyond.said.startswith("beyond noise: McNemar p = 0.0391")
    assert "2.0 points" in beyond.said  # what the rerun moved, said beside it
    chance = read_noise(16, 5, 1)
    assert chance.within and chance.said.startswith("within noise: McNemar p = 0.219")
    moved = read_noise(100, 12, 2, moved=0.12)
    assert moved.within and "12.0 points" in moved.said
    # a board passes its Holm-adjusted p, and says so
    holm = read_noise(50, 8, 1, p_value=0.078, test="Holm-adjusted McNemar p")
    assert holm.within and holm.said.startswith("within noise: Holm-adjusted McNemar p = 0.078")
