"""`qualeval compare` as a reader meets it: load levels in numeric order, the settings the two runs differ in,
the warm-up pairs said aloud (in accuracy, in no speed figure), no accuracy for synthetic prompts — in the terminal,
compare.json and compare.html alike."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qualeval.errors import InputError
from qualeval.figures.compare import compare_runs
from qualeval.figures.speeds import linked, speed
from qualeval.records import (
    ConstraintRecord,
    Extraction,
    MeanMax,
    Record,
    RunStore,
    RunSummary,
    Score,
    TaskReport,
    TaskSummary,
    Timing,
    Usage,
)
from tests.figures.test_board import write_run

LEVELS = ("c=1", "c=4", "c=16")


def _record(i: int, level: str, ok: bool, *, warmup: bool, scored: bool, latency: float) -> Record:
    return Record(
        sample_id=f"t/test/{i}",
        task="t",
        level=level,
        warmup=warmup,
        request={},
        reasoning="",
        content="",
        reasoning_source="none",
        status="ok",
        finish_reason="stop",
        usage=Usage(completion_tokens=100),
        timing=Timing(ttft=latency / 10, first_content=latency / 2, end=latency + i % 3),
        attempts=1,
        constraint=ConstraintRecord(mode="off"),
        extraction=Extraction(value=None, rung="none"),
        score=Score(correct=ok and scored, detail="" if scored else "not scored: synthetic"),
        gold="",
        meta={},
        scored=scored,
    )


def fake_run(
    root: Path,
    config: dict[str, Any],
    *,
    accuracy: float,
    scored: bool = True,
    levels: tuple[str, ...] = LEVELS,
    items: int = 10,
    started: str | None = None,
) -> Path:
    """`items` items at each level, the first one the warm-up (as `--warmup 1` runs it); the first items right."""
    root.mkdir(parents=True)
    pinned = {"constraint": "single", "constraint_style": "structured_outputs", "thinking_switch": "none"}
    run = {"tasks": ["gsm8k"], "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": str(root), **config}
    manifest = {"fingerprint": "x", "config": run, "pinned": pinned, "started": started}
    (root / "manifest.json").write_text(json.dumps(manifest))
    right = round(items * accuracy)
    with (root / "records.jsonl").open("w") as handle:
        for level in levels:
            for i in range(items):
                record = _record(i, level, i < right, warmup=i == 0, scored=scored, latency=1000.0 * accuracy)
                handle.write(record.model_dump_json() + "\n")
    return root


def compare_cli(*runs: Path, out: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "qualeval", "compare", *map(str, runs), "--out", str(out)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})


def test_levels_in_numeric_order_settings_that_differ_and_warm_ups_compared_on_accuracy(tmp_path: Path) -> None:
    base = {"model": "sim", "concurrency": [1, 4, 16], "temperature": None, "slo": {}, "max_tokens": 512}
    a = fake_run(tmp_path / "a", base, accuracy=0.8)
    b = fake_run(tmp_path / "b", {**base, "temperature": 0.6, "slo": {"ttft_ms": 200}}, accuracy=0.6)
    result = compare_runs(a, b)
    assert list(result.tasks) == ["t @ c=1", "t @ c=4", "t @ c=16"]  # not c=1, c=16, c=4
    # `out` always differs and changes nothing measured; the rest is what the comparison is of
    assert result.settings == {"temperature": (None, 0.6), "slo.ttft_ms": (None, 200)}
    for t in result.tasks.values():
        # the warm-up is scored in each run, so it is compared on accuracy: the accuracies are the runs' own
        assert (t.pairs, t.warmup_pairs) == (10, 1)
        assert (t.accuracy_a, t.accuracy_b) == (0.8, 0.6)
    done = compare_cli(a, b, out=tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    shown = done.stdout
    assert shown.index("t @ c=1:") < shown.index("t @ c=4:") < shown.index("t @ c=16:")
    assert "10 paired items (1 warm-up pair: in accuracy, not in speed)" in shown
    assert "temperature" in shown and "slo.ttft_ms" in shown and "0.6" in shown and "not set" in shown
    written = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert list(written["tasks"]) == ["t @ c=1", "t @ c=4", "t @ c=16"]
    assert written["settings"] == {"temperature": [None, 0.6], "slo.ttft_ms": [None, 200]}
    assert written["tasks"]["t @ c=4"]["warmup_pairs"] == 1
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert page.index("t @ c=1 <small>") < page.index("t @ c=4 <small>") < page.index("t @ c=16 <small>")
    assert "10 paired items; 1 warm-up pair: in accuracy, not in speed" in page
    assert "<td>slo.ttft_ms</td><td><code>not set</code></td><td><code>200.0</code></td>" in page


def test_rates_sort_as_numbers_and_the_same_settings_say_so(tmp_path: Path) -> None:
    levels = ("rate=0.5", "rate=2", "rate=16")
    config = {"model": "sim", "request_rate": [0.5, 2, 16]}
    a = fake_run(tmp_path / "a", config, accuracy=0.8, levels=levels)
    b = fake_run(tmp_path / "b", config, accuracy=0.8, levels=levels)
    result = compare_runs(a, b)
    assert list(result.tasks) == ["t @ rate=0.5", "t @ rate=2", "t @ rate=16"]
    assert result.settings == {}
    done = compare_cli(a, b, out=tmp_path / "cmp")
    assert done.returncode == 0 and "the two runs have the same settings (out aside)" in done.stderr
    assert "the two runs have the same settings" in (tmp_path / "cmp" / "compare.html").read_text()


def test_synthetic_prompts_are_compared_on_speed_alone(tmp_path: Path) -> None:
    a = fake_run(tmp_path / "a", {"workload": "benchy-pp1024-tg1024"}, accuracy=0.5, scored=False, levels=("c=10",))
    b = fake_run(tmp_path / "b", {"workload": "benchy-pp1024-tg1024"}, accuracy=1.0, scored=False, levels=("c=10",))
    t = compare_runs(a, b).tasks["t"]
    assert not t.scored and t.accuracy_a is None and t.difference is None and t.p_value is None
    assert t.flipped_to_wrong == [] and t.flipped_to_right == [] and t.ratios["latency"].ratio > 1.5
    done = compare_cli(a, b, out=tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    assert "not scored (synthetic prompts)" in done.stdout
    assert "%" not in done.stdout and "McNemar" not in done.stdout and "flipped" not in done.stdout
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert "not scored: synthetic prompts" in page and "McNemar" not in page and "Right in A" not in page


BASE = {"model": "sim", "concurrency": [1, 4, 16], "temperature": 0.7}


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    return lines[0]


def test_a_rerun_must_have_as_configuration_and_items(tmp_path: Path) -> None:
    a = fake_run(tmp_path / "a", BASE, accuracy=0.8, started="1")
    b = fake_run(tmp_path / "b", {**BASE, "max_tokens": [256]}, accuracy=0.5, started="2")
    greedy = fake_run(tmp_path / "greedy", {**BASE, "temperature": 0.0}, accuracy=0.8, started="3")
    line = _one_line_error(compare_cli(a, greedy, b, out=tmp_path / "c1"))
    assert "temperature" in line and "not a rerun" in line
    assert not (tmp_path / "c1" / "compare.json").exists()
    half = fake_run(tmp_path / "half", BASE, accuracy=0.8, items=5, started="4")
    line = _one_line_error(compare_cli(a, half, b, out=tmp_path / "c2"))
    assert "15 of" in line and "not a rerun" in line  # 5 items at each of 3 levels that only A ran
    # its seeds, address and output folder are a rerun's own
    again = {**BASE, "sample_seed": 3, "arrival_seed": 9, "base_url": "http://127.0.0.1:2/v1"}
    rerun = fake_run(tmp_path / "again", again, accuracy=0.7, started="5")
    done = compare_cli(a, rerun, b, out=tmp_path / "c3")
    assert done.returncode == 0, done.stderr


def test_the_same_run_twice_is_refused(tmp_path: Path) -> None:
    a = fake_run(tmp_path / "a", BASE, accuracy=0.8, started="2026-01-01T00:00:00+00:00")
    b = fake_run(tmp_path / "b", BASE, accuracy=0.5, started="2026-01-02T00:00:00+00:00")
    assert "same run" in _one_line_error(compare_cli(a, a, out=tmp_path / "c1"))
    copy = tmp_path / "copy"
    shutil.copytree(a, copy)
    assert "same run" in _one_line_error(compare_cli(a, copy, out=tmp_path / "c2"))
    assert "same run" in _one_line_error(compare_cli(a, copy, b, out=tmp_path / "c3"))
    assert not any((tmp_path / c).exists() for c in ("c1", "c2", "c3"))


def test_the_reading_against_noise_is_shown_in_every_output(tmp_path: Path) -> None:
    a = fake_run(tmp_path / "a", BASE, accuracy=0.8, items=60, started="1")
    rerun = fake_run(tmp_path / "a2", BASE, accuracy=0.7, items=60, started="2")
    b = fake_run(tmp_path / "b", BASE, accuracy=0.5, items=60, started="3")
    done = compare_cli(a, rerun, b, out=tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    page = (tmp_path / "cmp" / "compare.html").read_text()
    shown = " ".join(done.stdout.split())
    # the noise is measured per level, as B - A is: one item at three levels is not three items' evidence
    assert list(written["noise"]) == list(written["tasks"]) == ["t @ c=1", "t @ c=4", "t @ c=16"]
    for name, t in written["tasks"].items():
        moved = abs(written["noise"][name]["difference"])
        assert t["rerun_moved"] == moved
        # 18 of 60 right answers lost, none gained (p far below 0.05), and more than the rerun's 6 lost
        assert t["within_noise"] is (t["p_value"] >= 0.05 or abs(t["difference"]) <= moved) is False
        assert t["noise_reading"].startswith("beyond noise: McNemar p = ")
        assert f"and larger than the {100 * moved:.1f} points the rerun moved on its own" in t["noise_reading"]
        assert t["noise_reading"] in shown and t["noise_reading"] in page


def test_without_a_rerun_the_difference_is_still_read_against_chance(tmp_path: Path) -> None:
    config = {"model": "sim", "concurrency": [1]}
    a = fake_run(tmp_path / "a", config, accuracy=1.0, items=10, levels=("c=1",), started="1")
    b = fake_run(tmp_path / "b", config, accuracy=0.8, items=10, levels=("c=1",), started="2")
    t = compare_runs(a, b).tasks["t"]
    # two right answers lost on ten items: McNemar p = 0.5, within noise whatever the point estimate reads
    assert t.difference == -0.2 and t.rerun_moved is None and t.within_noise is True
    assert (
        t.noise_reading
        == "within noise: McNemar p = 0.5 (not below 0.05), so on these items it cannot be told from chance"
    )


def test_a_rerun_too_small_to_detect_anything_leaves_every_difference_within_the_noise(tmp_path: Path) -> None:
    config = {"model": "sim", "concurrency": [1]}
    a = fake_run(tmp_path / "a", config, accuracy=1.0, items=3, levels=("c=1",), started="1")
    rerun = fake_run(tmp_path / "a2", config, accuracy=1.0, items=3, levels=("c=1",), started="2")
    b = fake_run(tmp_path / "b", config, accuracy=0.0, items=3, levels=("c=1",), started="3")
    t = compare_runs(a, b, again=rerun).tasks["t"]
    # three pairs cannot tell any difference from chance: "beyond noise" would be a verdict of nothing
    assert t.difference == -1.0 and t.p_value == 0.25 and t.within_noise is True


def test_a_question_the_reference_server_did_not_know_is_left_out_not_counted_wrong(tmp_path: Path) -> None:
    config = {"model": "sim", "concurrency": [1]}
    a = fake_run(tmp_path / "a", config, accuracy=1.0, levels=("c=1",), started="1")
    b = fake_run(tmp_path / "b", config, accuracy=1.0, levels=("c=1",), started="2")
    lines = (b / "records.jsonl").read_text().splitlines()
    refused = [json.loads(line) | {"status": "unknown_question", "score": {"correct": False}} for line in lines[-3:]]
    (b / "records.jsonl").write_text("\n".join([*lines[:-3], *map(json.dumps, refused)]) + "\n")
    t = compare_runs(a, b).tasks["t"]
    assert t.endpoint_errors == (0, 3) and t.pairs == 7  # 10 items, B's 3 refusals left out
    assert t.difference == 0.0 and t.a_right_b_wrong == 0


def test_a_sweep_beside_a_run_of_other_levels_is_refused_and_unpaired_items_are_said(tmp_path: Path) -> None:
    plain = fake_run(tmp_path / "plain", {"model": "sim", "concurrency": [4]}, accuracy=0.8, levels=("c=4",))
    swept = fake_run(tmp_path / "swept", {"model": "sim", "concurrency": [1, 8]}, accuracy=0.8, levels=("c=1", "c=8"))
    done = compare_cli(plain, swept, out=tmp_path / "cmp")
    assert done.returncode == 2 and done.stderr.count("error:") == 1 and "c=1, c=8" in done.stderr, done.stderr
    fewer = fake_run(tmp_path / "fewer", {"model": "sim", "concurrency": [8]}, accuracy=0.8, levels=("c=8",), items=7)
    done = compare_cli(plain, fewer, out=tmp_path / "cmp2")  # one level each: they pair, c=4 beside c=8
    assert done.returncode == 0, done.stderr
    assert "3 item(s) only in A and 0 only in B are in no figure above" in done.stderr


def test_two_runs_started_in_the_same_second_are_two_runs(tmp_path: Path) -> None:
    config = {"model": "sim", "concurrency": [1]}
    a = fake_run(tmp_path / "a", config, accuracy=0.8, levels=("c=1",), started="1")
    b = fake_run(tmp_path / "b", config, accuracy=0.6, levels=("c=1",), started="1")
    for root, run_id in ((a, "one"), (b, "two")):
        manifest = json.loads((root / "manifest.json").read_text())
        (root / "manifest.json").write_text(json.dumps({**manifest, "run_id": run_id}))
    assert compare_runs(a, b).tasks["t"].pairs == 10  # parallel jobs: same start, same fingerprint, two runs
    copy = tmp_path / "copy"
    shutil.copytree(a, copy)
    with pytest.raises(InputError, match="the same run"):
        compare_runs(a, copy)


def with_summary(root: Path, *, server: float) -> Path:
    """A summary.json as a run writes it: the task's speed over every one of its records, and a server metric."""
    records = list(RunStore(root).records())
    right = sum(r.score.correct for r in records)
    counts = TaskSummary(
        task="t", n=len(records), correct=right, accuracy=right / len(records), interval=None,
        accuracy_answered=None, statuses={}, rungs={},
    )  # fmt: skip
    report = TaskReport(summary=counts, speed=speed([r.timed() for r in records]), linked=linked([], None))
    summary = RunSummary(
        model="m", base_url=None, simulated=False, qualeval_version="0", records=len(records), tasks={"t": report},
        server={"http://127.0.0.1:1": {"running": MeanMax(n=1, mean=server, max=server)}},
    )  # fmt: skip
    (root / "summary.json").write_text(summary.model_dump_json())
    return root


def test_every_figure_but_the_servers_own_is_over_the_paired_items(tmp_path: Path) -> None:
    # A ran 20 items, B the first 3 of them (another --limit); B's requests carry 1.5 times A's tokens
    a = with_summary(write_run(tmp_path / "a", [*[True] * 3, *[False] * 17], tokens=100), server=3.0)
    b = with_summary(write_run(tmp_path / "b", [True] * 3, tokens=150), server=1.0)
    result = compare_runs(a, b)
    t = result.tasks["t"]
    assert result.unpaired_a == 17 and t.pairs == 3
    # over the paired items both runs took the same time for 1.5 times the tokens; A's summary pools 17 items
    # more, sent over a longer span, which B never ran
    assert t.throughput_ratio is not None and abs(t.throughput_ratio - 1.5) < 1e-9
    assert result.server["t: accuracy"] == [1.0, 1.0]  # A's summary says 3 of 20
    assert result.server["running"] == [3.0, 1.0]  # the server's own metric: each run whole, as labelled
    # on the same items the paired figure is the summaries' own
    whole = with_summary(write_run(tmp_path / "whole", [True] * 20, tokens=150), server=1.0)
    summaries = [json.loads((run / "summary.json").read_text())["tasks"]["t"]["speed"] for run in (a, whole)]
    expected = summaries[1]["output_throughput"] / summaries[0]["output_throughput"]
    assert abs(compare_runs(a, whole).tasks["t"].throughput_ratio - expected) < 1e-9
