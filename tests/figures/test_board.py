"""`qualeval board`: N runs of the same items side by side. Runs are written directly with the records types, so
every figure is known: McNemar against the baseline and Holm's correction checked against scipy, the configs tied
with the best, speed held against a rerun's spread, and runs of different items refused in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from qualeval.errors import InputError
from qualeval.figures.board import board_runs, holm
from qualeval.records import ConstraintRecord, Extraction, Record, Score, ServerTimings, Timing, Usage


def write_run(
    root: Path,
    right: Sequence[bool | None],
    *,
    config: dict[str, Any] | None = None,
    ttft: float = 100.0,
    tokens: int = 100,
    task: str = "t",
    scored: bool = True,
    drafted: tuple[int, int] | None = None,
    prompt: str = "{{ question }}",
    levels: Sequence[str] = ("",),
    end: float = 500.0,
    cached: int | None = None,
) -> Path:
    """One record per item and level: True right, False wrong, None an endpoint error; sent one after another,
    the first of each level a warm-up; `cached` of 100 prompt tokens served from a prefix cache."""
    root.mkdir(parents=True)
    run = {"tasks": [task], "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": str(root), **(config or {})}
    pinned = {"constraint": "off", "thinking_switch": "none"}
    tasks = {task: {"spec": {"name": task, "doc_to_text": prompt, "scorer": "exact", "generator": "g"}}}
    (root / "manifest.json").write_text(
        json.dumps({"fingerprint": "x", "config": run, "pinned": pinned, "tasks": tasks})
    )
    with (root / "records.jsonl").open("w") as handle:
        for level, (i, ok) in ((level, item) for level in levels for item in enumerate(right)):
            record = Record(
                level=level,
                warmup=i == 0,
                sample_id=f"{task}/test/{i}",
                task=task,
                session="s",
                sent_at=1000.0 + i,
                request={},
                reasoning="",
                content="",
                reasoning_source="none",
                status="transport_error" if ok is None else "ok",
                finish_reason=None if ok is None else "stop",
                usage=Usage(
                    completion_tokens=None if ok is None else tokens,
                    prompt_tokens=None if cached is None else 100,
                    cached_tokens=cached,
                ),
                timing=Timing() if ok is None else Timing(ttft=ttft, first_content=2 * ttft, end=end),
                attempts=1,
                constraint=ConstraintRecord(mode="off"),
                extraction=Extraction(value=None, rung="none"),
                score=Score(correct=bool(ok) and scored, detail="" if scored else "not scored: synthetic"),
                gold="",
                meta={},
                scored=scored,
                server_timings=ServerTimings(draft_n=drafted[0], draft_n_accepted=drafted[1]) if drafted else None,
            )
            handle.write(record.model_dump_json() + "\n")
    return root


def board_cli(*args: Path | str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "qualeval", "board", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})


def flags(n: int, wrong: set[int]) -> list[bool | None]:
    return [i not in wrong for i in range(n)]


def test_holm_matches_the_step_down_definition() -> None:
    p = [0.01, 0.04, 0.03, 0.2]
    # sorted 0.01, 0.03, 0.04, 0.2 times 4, 3, 2, 1, kept monotone: 0.04, 0.09, 0.09, 0.2
    assert holm(p) == [0.04, 0.09, 0.09, 0.2]
    assert holm([0.5, 0.9]) == [1.0, 1.0]


def test_differences_against_the_baseline_mcnemar_holm_and_ties_with_the_best(tmp_path: Path) -> None:
    n = 60
    base = write_run(tmp_path / "base", flags(n, set(range(10))), config={"temperature": 0.0})
    worse = write_run(tmp_path / "worse", flags(n, set(range(22))), config={"temperature": 1.0})
    close = write_run(tmp_path / "close", flags(n, {*range(4), 40}), config={"temperature": 0.6})
    board = board_runs([base, worse, close])
    task = board.tasks["t"]
    assert board.baseline == "A" and board.correction == "holm"
    assert list(task.configs) == ["A", "B", "C"]
    w, c = task.configs["B"], task.configs["C"]
    assert w.difference == -12 / n and c.difference == 5 / n
    # McNemar's exact test is a binomial test of the discordant pairs at one half
    p_worse = binomtest(12, 12, 0.5).pvalue
    p_close = binomtest(1, 7, 0.5).pvalue
    assert abs(w.p_value - p_worse) < 1e-12 and abs(c.p_value - p_close) < 1e-12
    assert abs(w.p_adjusted - min(1.0, 2 * p_worse)) < 1e-12
    assert abs(c.p_adjusted - max(min(1.0, 2 * p_worse), p_close)) < 1e-12  # Holm; Bonferroni would double it
    assert 0.05 < c.p_adjusted < 2 * p_close
    # the best config (55 of 60): the baseline's 50 cannot be told from it, the worst's 38 can
    assert task.best == "C"
    assert c.tied_with_best and task.configs["A"].tied_with_best and not w.tied_with_best
    assert c.accuracy is not None and c.accuracy.n == n and c.accuracy.low < c.accuracy.accuracy < c.accuracy.high


def test_endpoint_errors_are_left_out_of_accuracy_and_pairs(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(20, set()))
    failing = write_run(tmp_path / "failing", [None] * 5 + [True] * 15, config={"temperature": 0.3})
    figures = board_runs([base, failing]).tasks["t"].configs["B"]
    assert figures.endpoint_errors == 5 and figures.pairs == 15
    assert figures.accuracy is not None and figures.accuracy.accuracy == 1.0 and figures.difference == 0.0


def test_speed_against_the_rerun_spread_and_the_pareto_front(tmp_path: Path) -> None:
    right = flags(40, {0, 1, 2, 3})
    base = write_run(tmp_path / "base", right, config={"concurrency": [1]}, ttft=100.0)
    again = write_run(tmp_path / "again", right, config={"concurrency": [1]}, ttft=130.0)
    slower = write_run(tmp_path / "slower", right, config={"concurrency": [2]}, ttft=120.0)
    jumpy = write_run(tmp_path / "jumpy", right, config={"concurrency": [4]}, ttft=200.0, drafted=(10, 7))
    board = board_runs([base, slower, jumpy], rerun=again)
    configs = board.tasks["t"].configs
    ratio = configs["B"].speed["ttft_p50"]
    assert abs(ratio.ratio - 1.2) < 1e-9 and abs(ratio.spread - 1.3) < 1e-9 and ratio.within_spread
    assert configs["C"].speed["ttft_p50"].within_spread is False
    assert configs["C"].spec_acceptance == 0.7 and configs["A"].spec_acceptance is None
    # same accuracy, same throughput: the quickest first answer alone is efficient on that axis
    quick = {name: c.pareto_first_answer for name, c in configs.items()}
    assert quick == {"A": True, "B": False, "C": False}
    assert board.tasks["t"].noise is not None and board.tasks["t"].noise.pairs == 40


def test_a_rerun_that_moved_down_bounds_a_ratio_up_by_the_same_factor(tmp_path: Path) -> None:
    right = flags(40, set())
    base = write_run(tmp_path / "base", right, ttft=179.0)
    again = write_run(tmp_path / "again", right, ttft=100.0)  # × 1.79 quicker with nothing changed
    slower = write_run(tmp_path / "slower", right, config={"concurrency": [2]}, ttft=179.0 * 1.5)
    ratio = board_runs([base, slower], rerun=again).tasks["t"].configs["B"].speed["ttft_p50"]
    assert ratio.within_spread is True


def test_the_command_writes_three_pages_and_refuses_different_items(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(30, {1, 2}), config={"temperature": 0.0})
    other = write_run(tmp_path / "other", flags(30, {1, 2, 3}), config={"temperature": 0.7})
    synthetic = write_run(tmp_path / "syn", flags(30, set()), task="w", scored=False)
    done = board_cli(other, base, "--baseline", base, "--out", tmp_path / "board")
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "board" / "board.json").read_text())
    # the baseline first and A, whatever the order given; the key says what each label stands for
    assert written["baseline"] == "A" and written["runs"][0]["path"] == str(base)
    runs = [(r["name"], r["settings"]) for r in written["runs"]]
    assert runs == [("A", {"temperature": 0.0}), ("B", {"temperature": 0.7})]
    page = (tmp_path / "board" / "board.html").read_text()
    assert "<th>temperature</th>" in page and "<td>0.7</td>" in page and "<img" in page
    assert "http" not in page.split("<body>")[0].replace("http-equiv", "")
    assert f"| **B** | temperature: 0.7 | `{other}` |" in (tmp_path / "board" / "board.md").read_text()
    fewer = write_run(tmp_path / "fewer", flags(29, set()), config={"temperature": 1.0})
    for run in (fewer, synthetic):
        done = board_cli(base, run, "--out", tmp_path / "refused")
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and str(run) in lines[0], done.stderr
        assert "Traceback" not in done.stderr


def test_accuracy_is_the_runs_own_and_different_sweeps_are_refused(tmp_path: Path) -> None:
    """The warm-up is scored in each run, so it is in the board's accuracy; which level of a sweep would stand
    for a run beside one of another level is not the board's to pick."""
    base = write_run(tmp_path / "base", flags(10, {0}), levels=("c=4",))
    other = write_run(tmp_path / "other", flags(10, {0, 5}), levels=("c=8",), config={"concurrency": [8]})
    cells = [config.accuracy for config in board_runs([base, other]).tasks["t"].configs.values()]
    assert [(c.n, c.correct) for c in cells if c is not None] == [(10, 9), (10, 8)]
    swept = write_run(tmp_path / "swept", flags(10, set()), levels=("c=1", "c=8"), config={"concurrency": [1, 8]})
    done = board_cli(base, swept, "--out", tmp_path / "refused")
    assert done.returncode == 2 and done.stderr.count("error:") == 1 and "c=1, c=8" in done.stderr, done.stderr
    # the sweep given first: the line names it and the other run, each once
    done = board_cli(swept, base, "--out", tmp_path / "refused-too")
    assert done.returncode == 2 and done.stderr.count(str(swept)) == 1 and str(base) in done.stderr, done.stderr


def test_an_unscored_task_shows_no_accuracy(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", flags(10, set()), task="w", scored=False)
    b = write_run(tmp_path / "b", flags(10, set()), task="w", scored=False, config={"temperature": 0.9})
    task = board_runs([a, b]).tasks["w"]
    assert not task.scored and task.best is None
    for c in task.configs.values():
        assert c.accuracy is None and c.difference is None and c.p_value is None and c.tied_with_best is None


def test_a_copy_beside_a_run_or_a_rerun_of_another_config_is_one_error_line(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(20, set()))
    manifest = base / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "run_id": "r-base"}))
    copy = shutil.copytree(base, tmp_path / "copy")
    other = write_run(tmp_path / "other", flags(20, set()), config={"temperature": 0.7})
    cases = (
        ((base, copy), str(copy)),
        ((base, other, "--rerun", other), str(other)),
        ((base, other, "--rerun", write_run(tmp_path / "t7", flags(20, set()), config={"temperature": 0.7})), "t7"),
    )
    for args, named in cases:
        done = board_cli(*args, "--out", tmp_path / "board")
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert lines[0].startswith("error:") and named in lines[0]


def test_unknown_questions_are_said_on_the_row_like_endpoint_errors(tmp_path: Path) -> None:
    from tests.figures.test_gate import with_unknown_questions

    base = write_run(tmp_path / "base", flags(20, set()))
    refused = with_unknown_questions(
        write_run(tmp_path / "refused", flags(20, set()), config={"temperature": 0.3}), {5}
    )
    figures = board_runs([base, refused]).tasks["t"].configs["B"]
    assert figures.unknown_questions == 1 and figures.pairs == 19 and figures.answered == 19
    done = board_cli(base, refused, "--out", tmp_path / "board")
    assert done.returncode == 0 and "1 unknown questions left out" in done.stdout
    for page in ("board.md", "board.html"):
        assert "1 unknown questions left out" in (tmp_path / "board" / page).read_text()


def test_a_narrow_terminal_still_tells_the_configs_apart(tmp_path: Path) -> None:
    long = "http://a-rather-long-host-name.example:8000/v1"
    one = write_run(tmp_path / "one", flags(20, set()), config={"base_url": long, "temperature": 0.1})
    two = write_run(tmp_path / "two", flags(20, set()), config={"base_url": long + "x", "temperature": 0.2})
    command = [sys.executable, "-m", "qualeval", "board", str(one), str(two), "--out", str(tmp_path / "b")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "60"})
    assert done.returncode == 0, done.stderr
    # the tables name configs by label; the key, one line each and never cut, says what each label stands for
    key = done.stdout.splitlines()[:2]
    assert key == [
        f"A (baseline): base_url: {long}; temperature: 0.1 ({one})",
        f"B: base_url: {long}x; temperature: 0.2 ({two})",
    ]


def with_repeats(root: Path, samples: int) -> Path:
    """The run as if run with --samples-per-item `samples`: each item's record again under each further repeat."""
    lines = (root / "records.jsonl").read_text().splitlines()
    records = [Record.model_validate_json(line) for line in lines]
    again = [r.model_copy(update={"repeat": k}) for k in range(1, samples) for r in records]
    (root / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in [*records, *again]))
    return root


def test_repeated_samples_are_refused_not_counted_as_items(tmp_path: Path) -> None:
    one = write_run(tmp_path / "one", flags(10, {1, 2}), config={"temperature": 0.7})
    three = with_repeats(write_run(tmp_path / "three", flags(10, {3}), config={"temperature": 0.8}), 3)
    other = with_repeats(write_run(tmp_path / "other", flags(10, {4}), config={"temperature": 0.9}), 3)
    gate = tmp_path / "policy.yaml"
    gate.write_text("default:\n  accuracy: {max_drop: 0.3}\n")
    for command in (
        ["board", three, other, "--out", tmp_path / "b"],
        ["gate", other, "--baseline", three, "--policy", gate, "--out", tmp_path / "g"],
        ["compare", one, three],
        ["compare", three, other],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "qualeval", *map(str, command)], capture_output=True, text=True, timeout=120
        )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, (command, done.stdout)
        assert len(lines) == 1 and lines[0].startswith("error:") and "3 samples per item" in lines[0]


def test_a_config_that_answered_nothing_has_no_difference_and_is_never_best(tmp_path: Path) -> None:
    from tests.figures.test_gate import with_unknown_questions

    base = write_run(tmp_path / "base", flags(20, {0, 1, 2, 3}))
    none = write_run(tmp_path / "none", flags(20, set()), config={"temperature": 0.3})
    with_unknown_questions(none, set(range(20)))
    task = board_runs([base, none]).tasks["t"]
    figures = task.configs["B"]
    assert figures.answered == 0 and figures.pairs == 0
    assert figures.accuracy is None or figures.accuracy.accuracy is None
    assert figures.difference is None and figures.p_adjusted is None and figures.tied_with_best is None
    assert task.best != "B"


def test_best_is_decided_on_the_paired_items_not_on_accuracies_over_other_items(tmp_path: Path) -> None:
    # the failing config is right on every item it answered, the baseline wrong on only the items the other failed
    base = write_run(tmp_path / "base", flags(20, {0, 1, 2, 3}))
    failing = write_run(tmp_path / "failing", [None] * 4 + [True] * 16, config={"temperature": 0.3})
    board = board_runs([base, failing])
    task = board.tasks["t"]
    f = task.configs["B"]
    assert f.accuracy is not None and f.accuracy.accuracy == 1.0 and f.difference == 0.0
    assert task.best == board.baseline and f.tied_with_best


def test_labels_are_the_users_else_letters_in_the_boards_order_skipping_those_taken(tmp_path: Path) -> None:
    runs = [write_run(tmp_path / name, flags(10, set()), config={"temperature": t}) for name, t in
            (("a", 0.1), ("b", 0.2), ("c", 0.3))]  # fmt: skip
    board = board_runs(runs, labels=[None, "A", None])
    assert [r.name for r in board.runs] == ["B", "A", "C"] and board.baseline == "B"
    assert list(board.tasks["t"].configs) == ["B", "A", "C"]
    # the baseline goes first whichever place it was given in, and is lettered first
    board = board_runs(runs, baseline=runs[2])
    assert [(r.name, Path(r.path).name) for r in board.runs] == [("A", "c"), ("B", "a"), ("C", "b")]
    for labels, said in (
        (["fp16", "fp16", None], "given to two runs"),
        (["my config", None, None], "1 to 20 letters"),
        (["x" * 21, None, None], "1 to 20 letters"),
        (["a", "b"], "2 labels for 3 runs"),
    ):
        with pytest.raises(InputError, match=said):
            board_runs(runs, labels=labels)


def test_the_command_takes_label_equals_run_and_a_baseline_by_label(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(20, {1}), config={"temperature": 0.0})
    write_run(tmp_path / "c=8", flags(20, {1, 2}), config={"temperature": 0.5})  # a folder with "="
    other = write_run(tmp_path / "other", flags(20, {1, 2, 3}), config={"temperature": 0.7})
    command = [sys.executable, "-m", "qualeval", "board", f"fp16={base}", "c=8", f"hot={other}", "--baseline", "hot"]
    # run where c=8 is, so that the folder is named as given: an existing folder is a folder, "=" or not
    done = subprocess.run([*command, "--out", "b"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "b" / "board.json").read_text())
    named = [(r["name"], Path(r["path"]).name) for r in written["runs"]]
    assert named == [("hot", "other"), ("fp16", "base"), ("A", "c=8")]
    assert written["baseline"] == "hot"
    assert done.stdout.splitlines()[:3] == [
        f"hot (baseline): temperature: 0.7 ({other})",
        f"fp16: temperature: 0 ({base})",
        "A: temperature: 0.5 (c=8)",
    ]
    for args, said in (((f"fp16={base}", f"fp16={other}"), "given to two runs"), ((f"x={base}", "y="), "'y='")):
        done = board_cli(*args, "--out", tmp_path / "refused")
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and said in lines[0], (
            done.stderr
        )
