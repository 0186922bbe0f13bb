"""Summaries: Wilson intervals that stay inside [0, 1] around k/n, and accuracy pooled over distinct items."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qualeval.figures.accuracy import summarize, wilson
from qualeval.records import Outcome
from tests.conftest import sim_process


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(min_value=1, max_value=200))
    return draw(st.integers(min_value=0, max_value=n)), n


def _holds(k: int, n: int) -> None:
    low, high = wilson(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0, (k, n, low, high)
    if k == 0:
        assert low == 0.0
    if k == n:
        assert high == 1.0


@given(counts())
def test_wilson_stays_inside_zero_one_around_the_share(kn: tuple[int, int]) -> None:
    _holds(*kn)


def test_wilson_for_every_count_up_to_200() -> None:
    for n in range(1, 201):
        for k in range(n + 1):
            _holds(k, n)
    assert wilson(0, 0) == (0.0, 1.0)


def test_accuracy_counts_each_item_once() -> None:
    # 3 items, each answered at 3 load levels: item a always right, b once in three, c never
    rows = [
        Outcome(status="ok", correct=c, rung="anchor", item=item, meta={"kind": kind})
        for item, kind, flags in (("a", "x", (1, 1, 1)), ("b", "x", (1, 0, 0)), ("c", "y", (0, 0, 0)))
        for c in map(bool, flags)
    ]
    s = summarize("t", rows, breakdowns=["kind"])
    assert (s.n, s.records) == (3, 9)
    assert s.correct == pytest.approx(4 / 3) and s.accuracy == pytest.approx(4 / 9)
    assert s.interval == wilson(4 / 3, 3)
    assert s.breakdowns["kind"]["x"].n == 2 and s.breakdowns["kind"]["x"].accuracy == pytest.approx(2 / 3)
    assert s.statuses == {"ok": 9}  # counts of responses stay per record
    # without item ids every record is an item, as for offline scoring
    plain = summarize("t", [Outcome(status="ok", correct=True, rung="anchor")] * 4)
    assert (plain.n, plain.correct, plain.interval[1]) == (4, 4, 1.0)


def test_a_sweep_reports_distinct_items_per_level_and_pooled(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    with sim_process("--task", "knowledge_qa", "--burst", "--accuracy", "0.6") as url:
        done = subprocess.run(
            [
                sys.executable, "-m", "qualeval", "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa",
                "--limit", "20", "--concurrency", "1,2,4", "--no-probe", "--out", str(out),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    task = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]
    summary = task["summary"]
    assert (summary["n"], summary["records"]) == (20, 60)
    assert "knowledge_qa: 20 items" in done.stdout
    for level in ("c=1", "c=2", "c=4"):
        assert task["levels"][level]["accuracy"]["n"] == 20
    by_level: dict[str, set[str]] = {}
    for line in (out / "records.jsonl").read_text().splitlines():
        row = json.loads(line)
        by_level.setdefault(row["level"], set()).add(row["sample_id"])
    assert len(by_level) == 3 and all(ids == by_level["c=1"] for ids in by_level.values())  # the same items
    assert tuple(summary["interval"]) == pytest.approx(wilson(summary["correct"], 20))


def test_the_naive_accuracy_has_the_accuracys_denominator() -> None:
    def said(item: str, status: str, correct: bool, naive: bool | None) -> Outcome:
        return Outcome(status=status, correct=correct, rung="anchor", naive_correct=naive, item=item)  # type: ignore[arg-type]

    rows = [
        said("a", "ok", True, True),
        said("b", "ok", True, True),
        said("c", "ok", False, False),
        said("d", "content_filter", False, None),  # no answer to read, naively or not: not right
        said("e", "transport_error", False, None),  # no answer of the model's: in neither
    ]
    summary = summarize("t", rows)
    assert (summary.n, summary.accuracy, summary.naive_accuracy) == (4, 0.5, 0.5)  # 2 of 4, not 2 of 3
    assert summarize("t", [said("a", "ok", True, None)]).naive_accuracy is None  # a free-text task has none


def test_items_without_a_breakdowns_value_are_a_named_row_out_of_the_macro_average() -> None:
    rows = [
        Outcome(status="ok", correct=False, rung="anchor", item="a", meta={"subject": "law"}),
        Outcome(status="ok", correct=True, rung="anchor", item="b", meta={"subject": None}),
        Outcome(status="ok", correct=True, rung="anchor", item="c"),
    ]
    summary = summarize("t", rows, ["subject"])
    assert list(summary.breakdowns["subject"]) == ["(no subject)", "law"]
    assert summary.breakdowns["subject"]["(no subject)"].n == 2 and summary.macro_accuracy["subject"] == 0.0
