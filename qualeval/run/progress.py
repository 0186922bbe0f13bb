"""The run's progress bar (items, accuracy so far, tokens per second, errors, truncations), for the CLI and for
`qualeval.evaluate(progress=True)`: callbacks for `run.execute`, and the bar they drive. Accuracy counts only
scored records that have an answer: a workload's synthetic prompts have no right answer, so a run of nothing else
shows none; a request that failed at the endpoint is an error, counted apart, never a wrong answer. In a sweep the
accuracy is the current level's, named: levels asked for different budgets are never pooled into one figure. On a
resume the records kept are counted in first, so the figures are the run's, as the summary's are. Its tok/s is
the speed table's output throughput, so far: the current level's output tokens, warm-ups left out, over the time
since its first request (not a warm-up) went out in this session; the probe's seconds and a level's warm-ups are no
part of it.

It lives beside execute rather than in the CLI: the API draws it too, and the API must not depend on the CLI
(the CLI is built on the API)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qualeval.records import ENDPOINT_FAILED, NOT_THE_MODELS, TRUNCATED

__all__ = ["Bar", "progress_bar"]


@dataclass
class Bar:
    """execute()'s on_start and on_record, drawing one bar; `also` is called with every record too."""

    progress: Progress
    also: Callable[[Any], None] | None = None
    counts: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("errors", "cut"), 0))
    levels: dict[str, list[int]] = field(default_factory=dict)
    """Per level, in run order: [right, scored]."""
    level: str = ""
    """The level of the latest record: the one the accuracy is shown for."""
    timed: dict[str, list[float]] = field(default_factory=dict)
    """Per level, this session's: [output tokens, when its first request was sent] (warm-ups left out)."""
    clock: Callable[[], float] = time.time
    """The clock records' `sent_at` is read on."""

    def __post_init__(self) -> None:
        self.task = self.progress.add_task("run", total=None, line="")

    def on_start(self, done: int, total: int, kept: Iterable[Any] = ()) -> None:
        """`kept`: the records a resumed run already holds, counted so the figures are the run's, not the
        session's (their tokens are not: the rate is of what this session generates, over its own time)."""
        for record in kept:
            self._count(record)
        self.progress.start()  # only now: a setup error stays alone on its line
        self.progress.update(self.task, total=total, completed=done, line=self.line() if done else "")

    def on_record(self, record: Any) -> None:
        self._count(record)
        if not record.warmup and record.sent_at is not None:
            timed = self.timed.setdefault(record.level or "", [0.0, record.sent_at])
            timed[0] += record.usage.completion_tokens or 0
            timed[1] = min(timed[1], record.sent_at)
        self.progress.update(self.task, advance=1, line=self.line())
        if self.also:
            self.also(record)

    def _count(self, record: Any) -> None:
        self.level = record.level or ""
        tally = self.levels.setdefault(self.level, [0, 0])
        if record.scored and record.status not in NOT_THE_MODELS:  # no answer of the model's is no wrong answer
            tally[0] += bool(record.score.correct)
            tally[1] += 1
        self.counts["errors"] += record.status in ENDPOINT_FAILED
        self.counts["cut"] += record.status in TRUNCATED

    def rate(self) -> float | None:
        """The current level's output tokens per second so far; None before its first timed record."""
        if self.level not in self.timed:
            return None
        tokens, first_sent = self.timed[self.level]
        return tokens / max(self.clock() - first_sent, 1e-9)

    def line(self) -> str:
        """What the bar says beside its count; no accuracy until a scored record has come in, no rate until a
        timed one has."""
        c = self.counts
        rate = self.rate()
        right, scored = self.levels.get(self.level, (0, 0))
        named = f"{self.level} " if len(self.levels) > 1 else ""
        acc = f"acc {right / scored:.1%} · " if scored else ""
        speed = f"{rate:,.0f} tok/s · " if rate is not None else ""
        return f"{named}{acc}{speed}errors {c['errors']:g} · truncated {c['cut']:g}"


@contextlib.contextmanager
def progress_bar(console: Console | None = None, also: Callable[[Any], None] | None = None) -> Iterator[Bar]:
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[line]}"),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        transient=False,
    )
    try:
        yield Bar(progress, also)
    finally:
        if progress.live.is_started:  # stopping one never started prints a blank line before a setup error
            progress.stop()
