"""Correct answers per minute: the right answers of the requests the duration spans, over that duration. A warm-up
is in no speed figure (its time is not in the duration), so its right answer is not in the numerator either."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualeval.figures import speed
from qualeval.figures.runset import figures, load_runs
from qualeval.figures.speeds import linked
from qualeval.records import Timed
from tests.figures.test_board import write_run


def _row(correct: bool, sent: float, warmup: bool = False) -> Timed:
    return Timed(correct=correct, warmup=warmup, sent_at=sent, end=1000.0, ttft=10.0, completion_tokens=10, session="s")


def test_a_right_warmup_is_not_counted_per_minute() -> None:
    rows = [_row(True, 0.0, warmup=True), _row(True, 1.0), _row(True, 31.0), _row(False, 60.0)]
    duration = speed(rows).duration_s
    assert duration == pytest.approx(60.0)  # the measured requests: from 1 s to 61 s
    k = linked(rows, duration)
    assert k.correct_per_minute == pytest.approx(2.0)  # 2 right among the measured ones, not 3
    assert k.seconds_per_correct == pytest.approx(30.0)


def test_board_and_gate_figures_count_the_same_requests(tmp_path: Path) -> None:
    """A run whose warm-up was right: the board's correct answers per minute leaves it out as its duration does."""
    write_run(tmp_path / "a", [True, True, False, True])  # the first record a warm-up, answered right
    write_run(tmp_path / "b", [True, False, False, True])
    run = load_runs([tmp_path / "a", tmp_path / "b"])[0]
    group = figures(run, list(run.records))
    measured = [r for r in run.records.values() if not r.warmup]
    assert group.speed.duration_s is not None and group.correct_per_minute is not None
    right = sum(r.score.correct for r in measured)
    assert group.correct_per_minute == pytest.approx(right / (group.speed.duration_s / 60))
