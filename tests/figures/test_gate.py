"""`qualeval gate`: each verdict of the non-inferiority test on constructed runs, with its exit code (0 GO, 1 NO-GO,
4 INCONCLUSIVE, 5 INVALID); speed clauses against a rerun's spread; validity clauses; and a policy or runs it cannot use
refused in one `error:` line with exit 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from scipy.stats import binomtest, norm

from qualeval.figures.gate import gate_runs, items_needed, noninferiority
from qualeval.figures.noise import minimum_detectable
from qualeval.figures.runset import PairCounts
from tests.figures.test_board import flags, write_run


def gate_cli(*args: Path | str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "qualeval", "gate", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})


def policy(tmp_path: Path, text: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return path


ACCURACY = "default:\n  accuracy: {max_drop: 0.02}\n"


def test_the_one_sided_bounds_are_the_adjusted_wald_interval_of_the_data_whatever_the_margin() -> None:
    counts = PairCounts(pairs=1000, down=30, up=20)
    # Bonett and Price (2012): one item added to each discordant cell, two to n
    centre, share = (20 - 30) / 1002, (50 + 2) / 1002
    se = ((share - centre**2) / 1002) ** 0.5
    z = norm.ppf(0.95)
    for margin in (0.005, 0.02, 0.05, 0.3):
        verdict = noninferiority(counts, margin)
        assert verdict.value == -0.01
        assert abs(verdict.low - (centre - z * se)) < 1e-12 and abs(verdict.high - (centre + z * se)) < 1e-12
    assert noninferiority(counts, 0.02).verdict == "INCONCLUSIVE"  # -1.0 points, the lower bound -2.2 below -2
    assert noninferiority(counts, 0.05).verdict == "GO"


def test_a_wider_margin_never_turns_a_go_into_anything_else() -> None:
    margins = (0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5)
    for n in (10, 40, 100, 400):
        for down in range(0, 4):
            for up in range(0, n // 4):
                verdicts = [noninferiority(PairCounts(n, down, up), m).verdict == "GO" for m in margins]
                assert verdicts == sorted(verdicts), (n, down, up, verdicts)


def test_agreeing_items_pass_where_the_exact_bound_does_and_a_clear_gain_passes_on_few() -> None:
    for n in (100, 150, 400):
        # no discordant pair: the exact one-sided 95% bound on the discordance is 1 - 0.05^(1/n)
        exact = binomtest(0, n).proportion_ci(confidence_level=0.90, method="exact").high
        assert (noninferiority(PairCounts(pairs=n, down=0, up=0), 0.02).verdict == "GO") == (exact < 0.02)
    assert noninferiority(PairCounts(pairs=40, down=0, up=20), 0.02).verdict == "GO"
    assert noninferiority(PairCounts(pairs=40, down=0, up=0), 0.02).verdict == "INCONCLUSIVE"


def test_each_verdict_and_its_exit_code(tmp_path: Path) -> None:
    rule = policy(tmp_path, ACCURACY)
    base = write_run(tmp_path / "base", flags(1000, set(range(200))))
    same = write_run(tmp_path / "same", flags(1000, set(range(200))))
    worse = write_run(tmp_path / "worse", flags(1000, set(range(300))))
    few_base = write_run(tmp_path / "few_base", flags(40, set(range(8))))
    few = write_run(tmp_path / "few", flags(40, set(range(8))))
    for baseline, candidate, verdict, code in (
        (base, same, "GO", 0),
        (base, worse, "NO-GO", 1),
        (few_base, few, "INCONCLUSIVE", 4),
    ):
        out = tmp_path / "gates" / candidate.name  # a folder of its own: a run directory is refused as --out
        done = gate_cli(candidate, "--baseline", baseline, "--policy", rule, "--out", out)
        assert done.returncode == code, done.stdout + done.stderr
        assert f"verdict: {verdict}" in done.stdout
        written = json.loads((out / "gate.json").read_text())
        assert written["verdict"] == verdict and written["exit_code"] == code
    clause = gate_runs(baseline=few_base, candidate=few, policy_path=rule).tasks["t"].clauses[0]
    # 40 items that all agree cannot detect two points: say the floor and how many items would
    assert clause.detectable == minimum_detectable(40, 0) and clause.detectable > 0.02
    assert clause.items_needed == items_needed(PairCounts(pairs=40, down=0, up=0), 0.02)
    assert str(clause.items_needed) in clause.detail
    drop = gate_runs(baseline=base, candidate=worse, policy_path=rule).tasks["t"].clauses[0]
    assert drop.value == -0.1 and drop.high < -0.02


def paired_runs(root: Path, n: int, down: int, up: int) -> tuple[Path, Path]:
    """A baseline and a candidate of n items: `down` right only in the baseline, `up` only in the candidate, and
    five wrong in both."""
    both = set(range(n - 5, n))
    base = write_run(root / "base", flags(n, set(range(up)) | both))
    cand = write_run(root / "cand", flags(n, set(range(up, up + down)) | both))
    return base, cand


def test_the_items_it_advises_give_go_at_the_discordance_seen_and_one_fewer_does_not(tmp_path: Path) -> None:
    rule = policy(tmp_path, ACCURACY)
    for n, down, up in ((100, 0, 0), (100, 4, 4), (200, 5, 3), (80, 2, 4)):
        seen = paired_runs(tmp_path / f"seen{n}-{down}-{up}", n, down, up)
        clause = gate_runs(baseline=seen[0], candidate=seen[1], policy_path=rule).tasks["t"].clauses[0]
        assert clause.verdict == "INCONCLUSIVE" and clause.items_needed is not None
        assert f"{clause.items_needed} paired items" in clause.detail
        for size, verdict in ((clause.items_needed, "GO"), (clause.items_needed - 1, "INCONCLUSIVE")):
            # the same shares of items down and up, in whole items, on runs of that size
            runs = paired_runs(tmp_path / f"at{size}-{down}-{up}", size, round(down / n * size), round(up / n * size))
            clause = gate_runs(baseline=runs[0], candidate=runs[1], policy_path=rule).tasks["t"].clauses[0]
            assert clause.verdict == verdict, (n, down, up, size)
    # the user's case: 150 agreeing items pass, so the advice for 100 cannot ask for more than 150
    assert noninferiority(PairCounts(pairs=150, down=0, up=0), 0.02).verdict == "GO"
    assert items_needed(PairCounts(pairs=100, down=0, up=0), 0.02) <= 150


def test_no_number_of_items_is_advised_when_the_difference_seen_is_past_the_margin() -> None:
    assert items_needed(PairCounts(pairs=100, down=5, up=2), 0.02) is None


def test_a_task_clause_replaces_the_default(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(1000, set(range(200))))
    worse = write_run(tmp_path / "worse", flags(1000, set(range(250))))
    rule = policy(tmp_path, ACCURACY + "t:\n  accuracy: {max_drop: 0.2}\n  endpoint_errors: {max: 0}\n")
    result = gate_runs(baseline=base, candidate=worse, policy_path=rule)
    assert [c.clause for c in result.tasks["t"].clauses] == ["accuracy", "endpoint_errors"]
    assert result.verdict == "GO"  # five points down, within the task's own twenty


def test_speed_within_the_rerun_spread_is_inconclusive(tmp_path: Path) -> None:
    right = flags(120, set())  # 100 requests or more a side: a p99 that is not the slowest request's
    base = write_run(tmp_path / "base", right, ttft=100.0)
    again = write_run(tmp_path / "again", right, ttft=140.0)
    slow = write_run(tmp_path / "slow", right, ttft=130.0)
    slower = write_run(tmp_path / "slower", right, ttft=170.0)  # misses × 1.2 by × 1.42, beyond × 1.4
    rule = policy(tmp_path, "default:\n  ttft_p99: {max_ratio: 1.2}\n")
    assert gate_runs(baseline=base, candidate=slow, policy_path=rule).verdict == "NO-GO"
    assert gate_runs(baseline=base, candidate=slow, policy_path=rule, rerun=again).verdict == "INCONCLUSIVE"
    assert gate_runs(baseline=base, candidate=slower, policy_path=rule, rerun=again).verdict == "NO-GO"


def test_a_speed_miss_is_held_against_the_rerun_move_as_a_factor_either_way(tmp_path: Path) -> None:
    right = flags(120, set())
    base = write_run(tmp_path / "base", right, ttft=179.0)
    quicker = write_run(tmp_path / "quicker", right, ttft=100.0)  # the rerun moved × 1.79, downwards
    slow = write_run(tmp_path / "slow", right, ttft=179.0 * 1.507)
    much = write_run(tmp_path / "much", right, ttft=179.0 * 2.704)
    beyond = write_run(tmp_path / "beyond", right, ttft=179.0 * 1.5 * 1.85)
    tight, loose = (
        policy(tmp_path / n, f"default:\n  ttft_p99: {{max_ratio: {m}}}\n") for n, m in (("a", 1.5), ("b", 2))
    )
    assert (
        gate_runs(baseline=base, candidate=slow, policy_path=tight, rerun=quicker).verdict == "INCONCLUSIVE"
    )  # missed by × 1.005
    assert (
        gate_runs(baseline=base, candidate=much, policy_path=loose, rerun=quicker).verdict == "INCONCLUSIVE"
    )  # missed by × 1.35
    assert (
        gate_runs(baseline=base, candidate=beyond, policy_path=tight, rerun=quicker).verdict == "NO-GO"
    )  # missed by × 1.85


def test_validity_clauses(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(50, set()), tokens=100)
    failing = write_run(tmp_path / "failing", [None, *flags(49, set())], tokens=100)
    longer = write_run(tmp_path / "longer", flags(50, set()), tokens=125)
    rule = policy(tmp_path, "default:\n  endpoint_errors: {max: 0}\n  output_tokens: {within: 0.1}\n")
    clauses = {c.clause: c for c in gate_runs(baseline=base, candidate=failing, policy_path=rule).tasks["t"].clauses}
    assert clauses["endpoint_errors"].verdict == "NO-GO" and clauses["endpoint_errors"].value == 1
    assert clauses["output_tokens"].verdict == "GO"
    clauses = {c.clause: c for c in gate_runs(baseline=base, candidate=longer, policy_path=rule).tasks["t"].clauses}
    assert clauses["output_tokens"].verdict == "NO-GO" and abs(clauses["output_tokens"].value - 0.25) < 1e-12


def test_bad_input_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(20, set()))
    cand = write_run(tmp_path / "cand", flags(20, set()))
    other = write_run(tmp_path / "other", flags(20, set()), task="u")
    prompted = write_run(tmp_path / "prompted", flags(20, set()), prompt="Q: {{ question }}")
    cases = (
        (cand, policy(tmp_path / "p1", ACCURACY + "gsm8k:\n  accuracy: {max_drop: 0.01}\n"), "gsm8k"),
        (cand, policy(tmp_path / "p2", "default:\n  latency: {max_ratio: 2}\n"), "latency"),
        (cand, policy(tmp_path / "p3", "default:\n  accuracy: {max_drop: 2}\n"), "max_drop"),
        (other, policy(tmp_path / "p4", ACCURACY), str(other)),
        (prompted, policy(tmp_path / "p5", ACCURACY), f"{prompted}: task t is specified differently"),
    )
    for candidate, rule, named in cases:
        done = gate_cli(candidate, "--baseline", base, "--policy", rule)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert lines[0].startswith("error:") and named in lines[0]


def with_run_id(root: Path, run_id: str) -> Path:
    manifest = root / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "run_id": run_id}))
    return root


def test_a_run_against_itself_a_copy_or_a_rerun_of_another_config_is_refused(tmp_path: Path) -> None:
    base = with_run_id(write_run(tmp_path / "base", flags(20, set())), "r-base")
    cand = with_run_id(write_run(tmp_path / "cand", flags(20, set()), config={"temperature": 0.7}), "r-cand")
    copy = Path(shutil.copytree(base, tmp_path / "copy"))
    rule = policy(tmp_path / "p", ACCURACY)
    cases = (
        ((base, "--baseline", base, "--rerun", base), str(base)),
        ((copy, "--baseline", base), str(copy)),
        ((cand, "--baseline", base, "--rerun", cand), str(cand)),  # the candidate as its own noise
        ((base, "--baseline", copy), str(base)),
    )
    for args, named in cases:
        done = gate_cli(*args, "--policy", rule)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert lines[0].startswith("error:") and named in lines[0]
    other = with_run_id(write_run(tmp_path / "other", flags(20, set()), config={"temperature": 0.7}), "r-other")
    done = gate_cli(cand, "--baseline", base, "--rerun", other, "--policy", rule)  # another configuration
    assert done.returncode == 2 and "not a rerun" in done.stderr and str(other) in done.stderr


def with_unknown_questions(root: Path, items: set[int]) -> Path:
    """The items a reference server refused: status unknown_question, no answer of the model's."""
    path = root / "records.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for i, line in enumerate(lines):
        if i in items:
            line["status"] = "unknown_question"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root


def test_unknown_questions_fail_the_endpoint_errors_clause_and_are_said(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(20, set()))
    cand = with_unknown_questions(write_run(tmp_path / "cand", flags(20, set())), {3, 4})
    rule = policy(tmp_path / "p", "default:\n  endpoint_errors: {max: 0}\n")
    result = gate_runs(baseline=base, candidate=cand, policy_path=rule)
    clause = result.tasks["t"].clauses[0]
    assert clause.verdict == "NO-GO" and clause.value == 2 and result.tasks["t"].unknown_questions == 2
    assert (
        gate_runs(baseline=cand, candidate=base, policy_path=rule).verdict == "NO-GO"
    )  # the baseline's refusals count too
    done = gate_cli(cand, "--baseline", base, "--policy", policy(tmp_path / "q", ACCURACY))
    assert "2 unknown questions" in done.stdout


def test_endpoint_errors_are_named_and_never_pass_a_policy_that_sets_no_limit_on_them(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(200, set()))
    # 150 of 200 requests failed at the endpoint: the 50 answered all agree with the baseline
    failing = write_run(tmp_path / "failing", [*flags(50, set()), *[None] * 150])
    loose = policy(tmp_path / "p", "default:\n  accuracy: {max_drop: 0.5}\n")
    done = gate_cli(failing, "--baseline", base, "--policy", loose, "--out", tmp_path / "gate")
    assert done.returncode == 5 and "verdict: INVALID" in done.stdout, done.stdout + done.stderr
    assert "baseline 0, candidate 150" in done.stdout
    written = json.loads((tmp_path / "gate" / "gate.json").read_text())["tasks"]["t"]
    assert written["endpoint_errors"] == [0, 150]
    said = {c["clause"]: c for c in written["clauses"]}
    assert said["accuracy"]["verdict"] == "GO"  # on the 50 answered pairs alone, it would have passed
    assert said["endpoint_errors"]["verdict"] == "INVALID" and said["endpoint_errors"]["value"] == 150
    assert "150 requests failed" in said["endpoint_errors"]["detail"]
    # a policy that allows them passes, and still names them; the baseline's own failures are named too
    allowing = policy(tmp_path / "q", "default:\n  accuracy: {max_drop: 0.5}\n  endpoint_errors: {max: 150}\n")
    done = gate_cli(failing, "--baseline", base, "--policy", allowing)
    assert done.returncode == 0 and "baseline 0, candidate 150" in done.stdout, done.stdout + done.stderr
    done = gate_cli(base, "--baseline", failing, "--policy", loose)
    assert "baseline 150, candidate 0" in done.stdout, done.stdout + done.stderr


def test_the_baselines_failed_requests_are_counted_and_never_pass_as_the_candidates(tmp_path: Path) -> None:
    # 30 of the baseline's 200 requests failed; the candidate answered every item, as the baseline did the others
    failing = write_run(tmp_path / "failing", [*flags(170, set()), *[None] * 30])
    whole = write_run(tmp_path / "whole", flags(200, set()))
    for text, verdict in (
        ("default:\n  accuracy: {max_drop: 0.05}\n", "INVALID"),  # no limit: the 30 items pass unsaid otherwise
        ("default:\n  accuracy: {max_drop: 0.05}\n  endpoint_errors: {max: 5}\n", "INVALID"),
        ("default:\n  accuracy: {max_drop: 0.05}\n  endpoint_errors: {max: 30}\n", "GO"),
    ):
        rule = policy(tmp_path / f"{verdict}{len(text)}", text)
        result = gate_runs(baseline=failing, candidate=whole, policy_path=rule)
        task = result.tasks["t"]
        said = {c.clause: c for c in task.clauses}
        assert result.verdict == verdict and task.endpoint_errors == (30, 0), text
        assert said["accuracy"].pairs == 170  # a failed side is no wrong answer: the item is left out of the pairs
        assert "30 failed in the baseline" in said["endpoint_errors"].detail


def test_a_misspelt_policy_key_is_named_not_reported_as_the_one_it_stood_for(tmp_path: Path) -> None:
    from qualeval.errors import InputError
    from qualeval.figures import load_policy

    path = tmp_path / "p.yaml"
    path.write_text("default:\n  accuracy: {max_dorp: 0.02}\n")
    try:
        load_policy(path)
    except InputError as exc:
        assert "max_dorp" in str(exc), exc
    else:
        raise AssertionError("a misspelt key was accepted")
