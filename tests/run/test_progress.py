"""The progress bar's running figures."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from qualeval.run.progress import progress_bar


def _record(status: str, correct: bool, scored: bool = True) -> SimpleNamespace:
    return SimpleNamespace(
        scored=scored, status=status, score=SimpleNamespace(correct=correct), level="",
        usage=SimpleNamespace(completion_tokens=10), warmup=False, sent_at=0.0,
    )  # fmt: skip


def test_the_bar_s_accuracy_leaves_endpoint_errors_out_and_counts_them_apart() -> None:
    with progress_bar(Console(file=io.StringIO(), width=200)) as bar:
        bar.on_start(0, 4)
        for record in (_record("ok", True), _record("transport_error", False), _record("transport_error", False)):
            bar.on_record(record)
        line = bar.line()
        assert line.startswith("acc 100.0% · ") and "errors 2" in line  # one answered, right; two errors apart
        bar.on_record(_record("ok", False))
        assert bar.line().startswith("acc 50.0% · ")


def test_the_bar_shows_no_accuracy_when_every_scored_request_failed() -> None:
    with progress_bar(Console(file=io.StringIO(), width=200)) as bar:
        bar.on_start(0, 2)
        bar.on_record(_record("transport_error", False))
        assert not bar.line().startswith("acc") and "errors 1" in bar.line()


def test_in_a_sweep_the_bar_shows_the_current_level_s_accuracy_named() -> None:
    """Levels asked for different budgets are not pooled: the bar names the level its accuracy is of."""
    with progress_bar(Console(file=io.StringIO(), width=200)) as bar:
        bar.on_start(0, 4)
        for level, correct in (("max_tokens=128", False), ("max_tokens=128", False), ("max_tokens=2048", True)):
            record = _record("ok", correct)
            record.level = level
            bar.on_record(record)
        assert bar.line().startswith("max_tokens=2048 acc 100.0% · ")  # not 33.3% pooled over both


def test_a_resumed_run_s_kept_records_count_in_the_bar_s_figures_but_not_in_its_rate() -> None:
    with progress_bar(Console(file=io.StringIO(), width=200)) as bar:
        kept = [_record("ok", False), _record("ok", False), _record("transport_error", False)]
        bar.on_start(3, 5, kept)
        assert bar.line().startswith("acc 0.0% · ") and "errors 1" in bar.line()
        assert bar.rate() is None  # the rate is of what this session generates
        bar.on_record(_record("ok", True))
        assert bar.line().startswith("acc 33.3% · ")  # one right of three answered, not of one
        assert bar.progress.tasks[0].completed == 4


def test_the_bar_s_rate_runs_from_the_first_request_sent_and_leaves_warm_ups_out() -> None:
    """As the speed table's output throughput: the probe's seconds before the first request are no part of it,
    nor are warm-ups (their tokens or their time), and a sweep's rate is the current level's."""
    now = [1000.0]  # the bar is made (the probe would run now), then the first request goes out 30 s later
    with progress_bar(Console(file=io.StringIO(), width=200)) as bar:
        bar.clock = lambda: now[0]
        bar.on_start(0, 4)
        warm = _record("ok", True)
        warm.warmup, warm.sent_at, warm.usage.completion_tokens = True, 1030.0, 5000
        bar.on_record(warm)
        assert bar.rate() is None and "tok/s" not in bar.line()  # only a warm-up so far: no rate yet
        for sent in (1032.0, 1033.0):
            record = _record("ok", True)
            record.sent_at, record.usage.completion_tokens = sent, 400
            bar.on_record(record)
        now[0] = 1036.0
        assert bar.rate() == 800 / 4  # 800 tokens over the 4 s since 1032, not 6000 over 36 s
        other = _record("ok", True)
        other.level, other.sent_at, other.usage.completion_tokens = "c=4", 1035.0, 100
        bar.on_record(other)
        assert bar.rate() == 100 / 1 and bar.line().startswith("c=4 acc 100.0% · ")
