"""compare, board and gate each say which statistic a speed figure is (compare: the mean of paired requests; board:
the p50; gate: the p99), and where they read the same one (the aggregate output tok/s) they read it alike. A
figure that was not measured (a mean of 0) or cannot be formed (a resumed run has no one duration) gives no
ratio, and says why. A p99 of too few requests is said to be the slowest request's."""

from __future__ import annotations

import json
from pathlib import Path

from qualeval.figures import board_runs, compare_runs, gate_runs
from tests.figures.test_board import flags, write_run
from tests.figures.test_compare import compare_cli

AGGREGATE = "output tokens/s (aggregate)"


def _policy(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "gate.yaml").write_text(text)
    return root / "gate.yaml"


def test_a_ratio_to_a_mean_of_zero_is_no_ratio_and_says_why(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", flags(12, set()), ttft=0.5)
    b = write_run(tmp_path / "b", flags(12, set()), ttft=0.0)  # tokens that came in one chunk: nothing measured
    t = compare_runs(a, b).tasks["t"]
    assert "ttft" not in t.ratios and "first_answer" not in t.ratios
    assert t.unread["ttft"].startswith("no ratio: A's mean is 0.5, B's 0,")
    done = compare_cli(a, b, out=tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    assert "×0.000" not in done.stdout and "no ratio" in done.stdout
    assert "no ratio" in (tmp_path / "cmp" / "compare.html").read_text()


def _resumed(root: Path) -> Path:
    """The run was killed halfway and resumed: its later requests are of another session."""
    lines = (root / "records.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows[len(rows) // 2 :]:
        row["session"] = "s2"
    (root / "records.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


def test_a_resumed_run_says_why_it_has_no_aggregate(tmp_path: Path) -> None:
    a = write_run(tmp_path / "killed", flags(12, set()))
    b = _resumed(write_run(tmp_path / "killed2", flags(12, set())))
    t = compare_runs(a, b).tasks["t"]
    assert AGGREGATE not in t.ratios
    assert "B: its requests span 2 sessions (the run was resumed)" in t.unread[AGGREGATE]
    rule = _policy(tmp_path / "p", "default:\n  output_tps: {min_ratio: 0.9}\n")
    (clause,) = gate_runs(baseline=a, candidate=b, policy_path=rule).tasks["t"].clauses
    assert clause.verdict == "INVALID" and "the candidate: its requests span 2 sessions (the run was resumed)" in (
        clause.detail
    )


def test_compare_reads_the_aggregate_as_board_reads_output_tps(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", flags(12, set()), tokens=100)
    again = write_run(tmp_path / "again", flags(12, set()), tokens=104)
    b = write_run(tmp_path / "b", flags(12, set()), tokens=150)
    mine = compare_runs(a, b, again=again).tasks["t"].ratios[AGGREGATE]
    board = board_runs([a, b], rerun=again)
    theirs = next(c.speed["output_tps"] for name, c in board.tasks["t"].configs.items() if c.speed)
    assert mine.statistic == "aggregate" and abs(mine.ratio - theirs.ratio) < 1e-12
    assert (mine.low, mine.high, mine.spread, mine.reading) == (theirs.low, theirs.high, theirs.spread, theirs.reading)
    assert compare_runs(a, b).tasks["t"].ratios["ttft"].statistic == "mean of paired requests"


def test_a_p99_of_too_few_requests_is_said_and_decides_no_no_go(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(16, set()), ttft=100.0)
    slow = write_run(tmp_path / "slow", flags(16, set()), ttft=200.0)
    rule = _policy(tmp_path / "p", "default:\n  ttft_p99: {max_ratio: 1.5}\n")
    (clause,) = gate_runs(baseline=base, candidate=slow, policy_path=rule).tasks["t"].clauses
    assert clause.verdict == "INCONCLUSIVE"
    assert "TTFT p99 (of 15 baseline and 15 candidate requests)" in clause.detail
    assert "a p99 of 15 requests is 86% of the way from the second-slowest request to the slowest" in clause.detail
