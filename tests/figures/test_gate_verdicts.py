"""The gate's verdicts as a release engineer reads them: a broken run is INVALID (exit 5), not "too few items"
(INCONCLUSIVE, exit 4); a task no clause covers is said, never passed unsaid; an open-loop run's output tok/s is
judged per request; a TTFT served from a cache the other run did not have decides nothing; the Python API cannot
take its runs the wrong way round; every sentence is whole; and the docs' CI recipe passes only GO."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from qualeval.figures import gate_runs
from qualeval.figures.gate import EXIT_CODES
from tests.conftest import ROOT
from tests.figures.test_board import flags, write_run
from tests.figures.test_gate import gate_cli, paired_runs, policy, with_unknown_questions

ACCURACY = "default:\n  accuracy: {max_drop: 0.05}\n"


def rewrite(root: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """Each record of the run through `change` (in place)."""
    path = root / "records.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        change(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root


def with_task(root: Path, other: Path) -> Path:
    """`root` with the records and task of the run `other` added: a run of two tasks."""
    manifest = json.loads((root / "manifest.json").read_text())
    added = json.loads((other / "manifest.json").read_text())
    manifest["tasks"].update(added["tasks"])
    manifest["config"]["tasks"] += added["config"]["tasks"]
    (root / "manifest.json").write_text(json.dumps(manifest))
    with (root / "records.jsonl").open("a") as handle:
        handle.write((other / "records.jsonl").read_text())
    return root


def test_a_broken_run_is_invalid_not_too_few_items(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(200, set()))
    # 16 requests failed at the endpoint and the policy sets no limit on them
    failing = write_run(tmp_path / "failing", [*[None] * 16, *flags(184, set())], config={"temperature": 0.5})
    done = gate_cli(failing, "--baseline", base, "--policy", policy(tmp_path / "p", ACCURACY), "--out", tmp_path / "g")
    assert done.returncode == 5 and "verdict: INVALID" in done.stdout, done.stdout + done.stderr
    written = json.loads((tmp_path / "g" / "gate.json").read_text())
    assert written["verdict"] == "INVALID" and written["exit_code"] == 5
    # pointed at the wrong server: it knew none of the questions
    wrong = with_unknown_questions(write_run(tmp_path / "wrong", flags(20, set())), set(range(20)))
    small = write_run(tmp_path / "small", flags(20, set()), config={"temperature": 0.5})
    done = gate_cli(wrong, "--baseline", small, "--policy", policy(tmp_path / "q", ACCURACY))
    assert done.returncode == 5 and "verdict: INVALID" in done.stdout, done.stdout + done.stderr
    # too few items to tell stays INCONCLUSIVE
    few = write_run(tmp_path / "few", flags(20, set()), config={"temperature": 0.7})
    done = gate_cli(few, "--baseline", small, "--policy", policy(tmp_path / "r", ACCURACY))
    assert done.returncode == 4 and "verdict: INCONCLUSIVE" in done.stdout, done.stdout + done.stderr
    assert EXIT_CODES == {"GO": 0, "NO-GO": 1, "INCONCLUSIVE": 4, "INVALID": 5}


def test_an_accuracy_clause_on_prompts_that_are_not_scored(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(20, set()), scored=False)
    cand = write_run(tmp_path / "cand", flags(20, set()), scored=False, config={"temperature": 0.5})
    # the task's own clause asks what cannot be measured: bad input
    done = gate_cli(cand, "--baseline", base, "--policy", policy(tmp_path / "p", "t:\n  accuracy: {max_drop: 0.05}\n"))
    assert done.returncode == 2 and done.stderr.count("error:") == 1 and "not scored" in done.stderr, done.stderr
    # the default's is not applied to it, and it says so; with no other clause the task is not gated
    rule = policy(tmp_path / "q", ACCURACY + "  ttft_p99: {max_ratio: 1.5}\n")
    result = gate_runs(baseline=base, candidate=cand, policy_path=rule)
    assert [c.clause for c in result.tasks["t"].clauses] == ["ttft_p99"] and result.verdict == "GO"
    assert any("not scored" in n and "accuracy" in n for n in result.tasks["t"].notes)


def test_a_task_no_clause_covers_is_said_in_the_output_and_gate_json(tmp_path: Path) -> None:
    base = with_task(
        write_run(tmp_path / "base", flags(100, set())), write_run(tmp_path / "bu", flags(100, set()), task="u")
    )
    # the candidate lost 40 points on u: with a policy for t alone, u is not gated, and GO must not read as covering it
    cand = with_task(
        write_run(tmp_path / "cand", flags(100, set()), config={"temperature": 0.5}),
        write_run(tmp_path / "cu", flags(100, set(range(40))), task="u"),
    )
    rule = policy(tmp_path / "p", "t:\n  accuracy: {max_drop: 0.05}\n")
    done = gate_cli(cand, "--baseline", base, "--policy", rule, "--out", tmp_path / "g")
    written = json.loads((tmp_path / "g" / "gate.json").read_text())
    assert written["not_gated"] == ["u"] and list(written["tasks"]) == ["t"]
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("verdict:"))
    assert "u" in verdict and "not gated" in verdict, done.stdout


def test_output_tps_on_an_open_loop_run_is_judged_per_request(tmp_path: Path) -> None:
    """At a set arrival rate the aggregate tok/s is the arrival rate's whatever the config: requests sent a second
    apart, each one twice as slow, move it by 0.5%."""
    open_loop = {"request_rate": [1.0]}

    def latency(ms: float) -> Callable[[dict[str, Any]], None]:
        return lambda r: r["timing"].update(end=ms)

    base = rewrite(write_run(tmp_path / "base", flags(50, set()), config=open_loop, levels=("rate=1",)), latency(240))
    slow = rewrite(
        write_run(tmp_path / "slow", flags(50, set()), config={**open_loop, "temperature": 0.5}, levels=("rate=1",)),
        latency(500),
    )
    result = gate_runs(
        baseline=base, candidate=slow, policy_path=policy(tmp_path, "default:\n  output_tps: {min_ratio: 0.9}\n")
    )
    clause = result.tasks["t"].clauses[0]
    assert clause.verdict == "NO-GO" and abs(clause.value - 240 / 500) < 1e-9, clause.detail
    assert "per request" in clause.detail and "arrival rate" in clause.detail


def test_a_ttft_served_from_a_cache_the_baseline_did_not_have_decides_nothing(tmp_path: Path) -> None:
    def cached(share: float) -> Callable[[dict[str, Any]], None]:
        return lambda r: r["usage"].update(prompt_tokens=100, cached_tokens=round(100 * share))

    base = rewrite(write_run(tmp_path / "base", flags(50, set()), ttft=100.0), cached(0.0))
    warm = rewrite(write_run(tmp_path / "warm", flags(50, set()), ttft=40.0, config={"temperature": 0.5}), cached(0.97))
    result = gate_runs(
        baseline=base, candidate=warm, policy_path=policy(tmp_path, "default:\n  ttft_p99: {max_ratio: 1.2}\n")
    )
    clause = result.tasks["t"].clauses[0]
    assert clause.verdict == "INVALID" and result.exit_code == 5
    assert "97%" in clause.detail and "not comparable" in clause.detail


def test_the_python_api_takes_its_runs_by_name(tmp_path: Path) -> None:
    base, cand = paired_runs(tmp_path, 40, 0, 0)
    rule = policy(tmp_path, ACCURACY)
    with pytest.raises(TypeError):
        gate_runs(base, cand, rule)  # type: ignore[misc]  # which run is which would be a guess
    kinds = {p.name: p.kind for p in inspect.signature(gate_runs).parameters.values()}
    assert set(kinds) == {"baseline", "candidate", "policy_path", "rerun"}
    assert set(kinds.values()) == {inspect.Parameter.KEYWORD_ONLY}


def test_every_accuracy_detail_is_whole_sentences_that_say_what_the_numbers_show(tmp_path: Path) -> None:
    rule = policy(tmp_path, ACCURACY)
    for n, down, up in ((40, 4, 0), (100, 0, 0), (100, 4, 4), (300, 3, 0), (1000, 80, 0), (50, 8, 1)):
        clause = gate_runs(
            baseline=(r := paired_runs(tmp_path / f"{n}-{down}-{up}", n, down, up))[0], candidate=r[1], policy_path=rule
        )
        detail = clause.tasks["t"].clauses[0].detail
        assert "beyond chance" not in detail, detail  # an interval that excludes 0 is no chance result
        assert not re.search(r"\bwould\s*([;.)]|$)", detail), detail  # "about 133 paired items would" what?
        assert "noise" in detail and "McNemar p" in detail, detail  # the reading compare and board give


def _recipe() -> str:
    page = (ROOT / "docs" / "comparing.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(- name: release gate\n.*?)```", page, re.S)
    assert block is not None
    return textwrap.dedent(block.group(1).split("run: |\n", 1)[1])


@pytest.mark.parametrize("code", [0, 1, 2, 4, 5])
def test_the_docs_ci_recipe_passes_only_go_and_says_why_otherwise(tmp_path: Path, code: int) -> None:
    fake = tmp_path / "bin" / "qualeval"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\nexit {code}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _recipe()],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert (done.returncode == 0) == (code == 0), (code, done.returncode, done.stdout, done.stderr)
    if code:
        verdict = {v: k for k, v in EXIT_CODES.items()}.get(code, "bad input")
        assert verdict in done.stdout + done.stderr


def test_the_exit_codes_are_the_same_in_the_readme_the_docs_and_help() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    codes = readme[readme.index("Exit codes:") :].split("\n\n")[0]
    cli_page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    listed = cli_page[cli_page.index("Exit codes:") :].split("\n\n")[0]
    shown = subprocess.run(
        [sys.executable, "-m", "qualeval", "gate", "--help"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    ).stdout  # fmt: skip
    for verdict, code in EXIT_CODES.items():
        for text in (codes, listed):
            assert f"`{code}` {verdict}" in " ".join(text.split()), (verdict, code, text)
        assert re.search(rf"{code}\s+{verdict}", " ".join(shown.split())), shown
