"""What compare and board must refuse or must not read as a difference: B (or a copy of it) as the rerun of A,
a rerun of another server, runs of other tasks or answers, a run given twice, a TTFT served from a prefix cache
on one side, an open-loop run's aggregate tok/s, a speed ratio its interval cannot tell from 1, and bad input."""

from __future__ import annotations

import json
import math
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from qualeval.errors import InputError
from qualeval.figures import noise
from qualeval.figures.board import board_runs
from qualeval.figures.compare import compare_runs
from qualeval.figures.repeats import Said, identical_pairs
from qualeval.records import Identical
from qualeval.report import board_markdown
from qualeval.report.repeats import finding
from tests.figures.test_board import board_cli, flags, write_run
from tests.figures.test_compare import compare_cli

HERE = {"base_url": "http://127.0.0.1:1/v1"}
THERE = {"base_url": "http://10.0.0.2:8000/v1"}  # another server: the address a rerun may change


def _edit(root: Path, manifest: dict[str, Any] | None = None, **records: Any) -> Path:
    """Rewrite a run: keys merged into its manifest; `records` maps a field to a function of (index, value)."""
    path = root / "manifest.json"
    found = json.loads(path.read_text())
    path.write_text(json.dumps({**found, **(manifest or {})}))
    rows = [json.loads(line) for line in (root / "records.jsonl").read_text().splitlines()]
    for i, row in enumerate(rows):
        for field, change in records.items():
            head, _, tail = field.partition(".")
            if tail:
                row[head][tail] = change(i, row[head][tail])
            else:
                row[field] = change(i, row[field])
    (root / "records.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


def _identified(root: Path) -> Path:
    return _edit(root, {"run_id": uuid.uuid4().hex, "started": "2026-01-01T00:00:00+00:00"})


def _one_error(done: Any) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    return lines[0]


def test_b_or_a_copy_of_b_is_no_rerun_of_a(tmp_path: Path) -> None:
    right = flags(30, {1, 2})
    a = _identified(write_run(tmp_path / "a", right, config=HERE))
    b = _identified(write_run(tmp_path / "b", flags(30, {1, 2, 3, 4, 5}), config=THERE))
    copy = tmp_path / "b-copy"
    shutil.copytree(b, copy)
    for again in (b, copy):
        with pytest.raises(InputError, match="the same run as"):
            compare_runs(a, b, again=again)
    assert "the same run as" in _one_error(compare_cli(a, copy, b, out=tmp_path / "cmp"))
    compare_runs(a, b, again=_identified(write_run(tmp_path / "a2", right, config=HERE)))  # a true rerun passes


def _served(root: Path, **entry: Any) -> Path:
    model = {"id": "m", "object": "model", "created": 1, "owned_by": "vllm", "max_model_len": 4096, **entry}
    return _edit(root, {"server": {"models": {"object": "list", "data": [model]}}})


def test_a_rerun_of_another_server_is_refused_one_restarted_is_not(tmp_path: Path) -> None:
    right = flags(30, {1})
    a = _served(write_run(tmp_path / "a", right))
    b = write_run(tmp_path / "b", right, config={"temperature": 0.6})
    restarted = _served(write_run(tmp_path / "restarted", right, config=THERE), created=99)
    other = _served(write_run(tmp_path / "other", right, config=THERE), owned_by="sglang")
    compare_runs(a, b, again=restarted)
    with pytest.raises(InputError, match=r"not a rerun of A: its server\.0\.owned_by is 'sglang'"):
        compare_runs(a, b, again=other)
    with pytest.raises(InputError, match="not a rerun of the baseline"):
        board_runs([a, b], rerun=other)


def test_runs_of_another_task_or_other_gold_answers_are_refused_by_compare_and_board(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", flags(20, {1}))
    spec = write_run(tmp_path / "spec", flags(20, {1}))
    manifest = json.loads((spec / "manifest.json").read_text())
    manifest["tasks"]["t"]["spec"]["scorer"] = "numeric"
    _edit(spec, manifest)
    gold = _edit(write_run(tmp_path / "gold", flags(20, {1})), gold=lambda i, g: f"{i}" if i == 3 else g)
    for tool in (lambda x: compare_runs(a, x), lambda x: board_runs([a, x])):
        with pytest.raises(InputError, match="task t is specified differently"):
            tool(spec)
        with pytest.raises(InputError, match=r'other gold answers than .* \(e\.g\. t/test/3: "3" against ""\)'):
            tool(gold)
    assert "specified differently" in _one_error(compare_cli(a, spec, out=tmp_path / "cmp"))


def _said(item: int, said: str, correct: bool) -> Said:
    return Said("", (f"t/test/{item}", 0), "asked", said, correct)


def test_identical_answers_judged_apart_are_not_counted_as_flips_among_answers_that_differ() -> None:
    # the same output judged apart (another scorer) is no flip of the serving's: never "of these" zero answers
    pairs = [(_said(0, "x", True), _said(0, "x", False)), (_said(1, "y", True), _said(1, "z", False))]
    pairs += [(_said(2, "w", True), _said(2, "w", True))]
    found = identical_pairs(pairs)
    assert found == Identical(pairs=3, identical=2, flipped=["t/test/1"], judged_apart=["t/test/0"])
    line = finding(found, "A", "B")
    assert line.startswith("1 of 3 greedy answers to identical input differ between A and B, and 1 of them flipped")
    assert "1 identical answer was judged differently by the two" in line and "t/test/0" in line
    none_differ = finding(Identical(pairs=3, identical=3, judged_apart=["t/test/0"]), "A", "B")
    assert "flipped" not in none_differ and none_differ.startswith("0 of 3 greedy answers")


def test_a_run_given_twice_or_a_copy_on_the_board_is_refused(tmp_path: Path) -> None:
    a = _identified(write_run(tmp_path / "a", flags(20, {1})))
    b = write_run(tmp_path / "b", flags(20, {1, 2}), config={"temperature": 0.6})
    copy = tmp_path / "copy"
    shutil.copytree(a, copy)
    with pytest.raises(InputError, match="given twice"):
        board_runs([a, b, tmp_path / "b" / ".." / "a"])
    with pytest.raises(InputError, match="given twice"):
        board_runs([a, a, b])
    with pytest.raises(InputError, match="the same run as"):
        board_runs([a, b, copy])
    assert "given twice" in _one_error(board_cli(a, a, b, "--out", tmp_path / "board"))
    assert "given twice" in _one_error(board_cli(f"x={a}", f"y={a}", b, "--out", tmp_path / "board"))


def test_a_ttft_served_from_a_prefix_cache_on_one_side_is_not_comparable(tmp_path: Path) -> None:
    right = flags(30, {1})
    cold = write_run(tmp_path / "cold", right, ttft=300.0, cached=0)
    warm = write_run(tmp_path / "warm", right, ttft=30.0, cached=95, config={"temperature": 0.6})
    board = board_runs([cold, warm])
    ratio = board.tasks["t"].configs["B"].speed["ttft_p50"]
    assert ratio.not_comparable == "cached" and ratio.within_noise is None
    page = board_markdown(board)
    assert "TTFT p50 not comparable (not comparable (cached)" not in page
    assert "TTFT p50 not comparable (cached)" in page and "TTFT p50 ×" not in page.split("Beyond noise")[1]
    compared = compare_runs(cold, warm).tasks["t"].ratios["ttft"]
    assert compared.within_noise is None and compared.reading is not None and "cached" in compared.reading


def test_open_loop_runs_compare_output_tok_s_per_request(tmp_path: Path) -> None:
    # one request a second both times: the aggregate is the arrival rate's; each request is twice as fast in B
    right = flags(30, set())
    slow = write_run(tmp_path / "slow", right, config={"request_rate": 1.0}, end=500.0)
    fast = write_run(tmp_path / "fast", right, config={"request_rate": 1.0, "temperature": 0.6}, end=250.0)
    board = board_runs([slow, fast])
    b = board.tasks["t"].configs["B"]
    assert board.per_request and b.output_tps == pytest.approx(400.0)
    assert b.speed["output_tps"].ratio == pytest.approx(2.0)
    page = board_markdown(board)
    assert "output tok/s per request" in page and "arrival rate" in page
    closed = board_runs([write_run(tmp_path / "c1", right, end=500.0), write_run(tmp_path / "c2", right, end=250.0)])
    assert not closed.per_request and closed.tasks["t"].configs["B"].speed["output_tps"].ratio < 1.01
    compared = compare_runs(slow, fast)
    assert compared.open_loop and compared.tasks["t"].throughput_ratio is None


def _ttft(root: Path, values: list[float]) -> Path:
    return _edit(root, **{"timing.ttft": lambda i, _: values[i % len(values)]})


def test_a_speed_verdict_needs_an_interval_that_excludes_one_and_a_ratio_beyond_the_reruns_spread(
    tmp_path: Path,
) -> None:
    right = flags(40, set())
    spread = [40.0, 260.0, 90.0, 180.0, 60.0, 220.0, 120.0, 150.0]
    base = _ttft(write_run(tmp_path / "base", right), spread)
    again = _ttft(write_run(tmp_path / "again", right), [v * 1.01 for v in spread])
    # p50 × 1.1 but unpaired with the baseline's order: the interval holds 1, though the rerun moved × 1.01
    noisy = _ttft(write_run(tmp_path / "noisy", right, config={"temperature": 0.6}), [1.1 * v for v in spread[::-1]])
    steady = write_run(tmp_path / "steady", right, config={"temperature": 0.7}, ttft=100.0)
    board = board_runs([base, noisy], rerun=again)
    ratio = board.tasks["t"].configs["B"].speed["ttft_p50"]
    assert ratio.low is not None and ratio.low < 1 < ratio.high and ratio.within_spread is False
    assert ratio.within_noise is True and ratio.reading is not None and ratio.reading.startswith("within noise")
    assert ratio.spread == pytest.approx(1.01)
    # a constant shift: its interval excludes 1, and without a rerun it is read on that alone
    steady_base = write_run(tmp_path / "steady-base", right, ttft=80.0)
    read = board_runs([steady_base, steady]).tasks["t"].configs["B"].speed["ttft_p50"]
    assert read.within_noise is False and read.spread is None
    # compare reads its ratios with the same function and the same spread
    compared = compare_runs(base, noisy, again=again).tasks["t"].ratios["ttft"]
    assert compared.spread == pytest.approx(1.01) and compared.within_spread is False
    assert compared.within_noise is True


def test_the_spread_is_one_factor_up_or_down() -> None:
    assert noise.spread_factor(56.0, 100.0) == pytest.approx(100 / 56) == noise.spread_factor(100.0, 56.0)
    assert noise.spread_factor(None, 100.0) is None and noise.spread_factor(100.0, 0.0) is None
    assert noise.read_speed(1.5, 1.4, 1.6, 1.79).within is True  # × 1.5 is within a rerun's × 0.56
    assert noise.read_speed(1.5, 1.4, 1.6, None).within is False
    assert noise.read_speed(1.5, 0.9, 1.6, None).within is True
    assert noise.read_speed(1.5, None, None, None).within is None
    assert noise.read_speed(1.5, math.nan, math.nan, None).within is None


def test_bad_input_is_one_error(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", flags(20, {1}))
    b = write_run(tmp_path / "b", flags(20, {1, 2}), config={"temperature": 0.6})
    assert "--seed must be 0 or more" in _one_error(compare_cli(a, b, "--seed", "-1", out=tmp_path / "c"))  # type: ignore[arg-type]
    assert "--show must be 0 or more" in _one_error(compare_cli(a, b, "--show", "-3", out=tmp_path / "c"))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="seed -1"):
        compare_runs(a, b, seed=-1)
    for alpha in (0, 1, 1.5, -0.1, "0.05", True):
        with pytest.raises(InputError, match="alpha"):
            board_runs([a, b], alpha=alpha)  # type: ignore[arg-type]
    for labels in (["x"], ["x", "x"], "xy", [1, 2]):
        with pytest.raises(InputError, match="label"):
            board_runs([a, b], labels=labels)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"baseline .*c: not one of the runs"):
        board_runs([a, b], baseline=tmp_path / "c")
    assert board_runs([a, b], labels=["x", "y"], baseline="y").baseline == "y"
    line = _one_error(board_cli(a, b, "--baseline", "zz", "--out", tmp_path / "board"))
    assert "baseline zz: not one of the runs" in line
    fewer = write_run(tmp_path / "fewer", flags(15, {1}), config={"temperature": 0.6})
    line = _one_error(board_cli(a, fewer, "--out", tmp_path / "board"))
    assert "(e.g. t/test/15)" in line


def test_board_and_compare_give_the_same_numbers_for_one_pair(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", flags(40, set(range(8))), end=500.0)
    b = write_run(tmp_path / "b", flags(40, {*range(3), 30}), config={"temperature": 0.6}, end=400.0)
    compared = compare_runs(a, b).tasks["t"]
    boarded = board_runs([a, b]).tasks["t"].configs["B"]
    assert boarded.difference == compared.difference and boarded.p_value == compared.p_value
    assert boarded.noise_reading == compared.noise_reading
    assert boarded.speed["output_tps"].ratio == pytest.approx(compared.throughput_ratio)
