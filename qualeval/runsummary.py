"""A run's summary from its records: per task the accuracy (per load level, and pooled over distinct items),
repeated sampling, speed per level and overall, the linked speed-and-quality analysis, and fault counts.

Accuracy counts each item once: a sweep over three load levels of 20 questions is 20 items, not 60, and its
interval uses n = 20 (see qualeval.summary for how an item's records are pooled).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from qualeval._version import __version__
from qualeval.config import RunConfig
from qualeval.metrics import Attempt, Linked, Repeated, Speed, Timed, linked, repeated, speed
from qualeval.records import Record
from qualeval.store import RunStore
from qualeval.summary import Cell, Outcome, TaskSummary, item_scores, summarize
from qualeval.tasks import Task

__all__ = ["LevelReport", "RunSummary", "TaskReport", "summarize_records", "timed_of"]


class LevelReport(BaseModel):
    """One load level: the same items as every other level, under this load."""

    accuracy: Cell
    speed: Speed


class TaskReport(BaseModel):
    summary: TaskSummary
    repeated: Repeated | None = None
    speed: Speed
    """Over every level; throughput only when there is one level."""
    levels: dict[str, LevelReport] = {}
    linked: Linked
    faults: dict[str, int] = {}
    """Every failed attempt by fault class (429, 503, connection, timeout, protocol...), retried or final."""
    errors: dict[str, int] = {}
    """The most common errors of requests that failed for good (never scored as answers)."""
    published: float | None = None
    """The published figure for this task (a model card's, as a share), given with the run, shown beside ours."""
    scored: bool = True
    """False for a workload's synthetic prompts: there is no right answer, so no accuracy to show."""


class RunSummary(BaseModel):
    model: str
    base_url: str
    simulated: bool
    qualeval_version: str
    started: str | None = None
    wall_s: float | None = None
    records: int
    rescored: bool = False
    tasks: dict[str, TaskReport]
    serving: dict[str, Any] | None = None
    """Workload figures as vllm bench serve and llama-benchy define them, accuracy by context length, speed per
    replica (qualeval.loadfigures)."""
    server: dict[str, Any] | None = None
    """The server's own metrics per replica over the run, from timeseries.jsonl (qualeval.timeseries)."""


def timed_of(row: dict[str, Any]) -> Timed:
    """The speed figures' view of a record stored as JSON."""
    return Record.model_validate(row).timed()


def summarize_records(
    store: RunStore,
    config: RunConfig,
    tasks: list[Task],
    simulated: bool,
    records: Iterator[dict[str, Any]] | None = None,
) -> RunSummary:
    """One pass over the records (streamed), compact rows per task, then the figures."""
    outcomes: dict[str, list[Outcome]] = {t.name: [] for t in tasks}
    attempts: dict[str, list[Attempt]] = {t.name: [] for t in tasks}
    timed: dict[str, list[Timed]] = {t.name: [] for t in tasks}
    faults: dict[str, Counter[str]] = {t.name: Counter() for t in tasks}
    errors: dict[str, Counter[str]] = {t.name: Counter() for t in tasks}
    scored: dict[str, bool] = {t.name: False for t in tasks}
    count = 0
    for row in records if records is not None else store.records():
        name = row["task"]
        if name not in outcomes:
            continue
        count += 1
        record = Record.model_validate(row)  # read into its type once; the figures are its views
        outcomes[name].append(record.outcome())
        attempts[name].append(Attempt(record.sample_id, record.score.correct, record.extraction.value))
        timed[name].append(record.timed())
        scored[name] = scored[name] or record.meta.get("scored", True) is not False
        faults[name].update(record.retried)
        if record.error:
            errors[name][record.error] += 1
    labels = [label for label, _, _ in config.levels()]
    reports = {}
    for task in tasks:
        name = task.name
        rows = timed[name]
        levels = _levels(labels, outcomes[name], rows, config)
        # pooled over several levels: latencies yes, throughput no (it only means something per level)
        overall = speed(rows, config.slo, throughput=len(levels) <= 1)
        rep = repeated(attempts[name], config.samples_per_item) if config.samples_per_item > 1 else None
        reports[name] = TaskReport(
            summary=summarize(name, outcomes[name], task.spec.breakdowns),
            repeated=rep,
            speed=overall,
            levels=levels,
            linked=linked(rows, overall.duration_s),
            faults=dict(faults[name]),
            errors=dict(errors[name].most_common(5)),
            published=_published(config, name),
            scored=scored[name] or not rows,
        )
    return RunSummary(
        model=config.model,
        base_url=config.base_url,
        simulated=simulated,
        qualeval_version=__version__,
        records=count,
        tasks=reports,
    )


def _levels(labels: list[str], outcomes: list[Outcome], rows: list[Timed], config: RunConfig) -> dict[str, LevelReport]:
    """Per load level: accuracy over its distinct items (several records each with --samples-per-item), speed."""
    levels = {}
    for label in labels:
        at = [r for r in rows if r.level == label]
        if at:
            answers = [(o.item, o.correct) for o, r in zip(outcomes, rows, strict=True) if r.level == label]
            levels[label] = LevelReport(accuracy=Cell.of(item_scores(answers)), speed=speed(at, config.slo))
    return levels


def _published(config: RunConfig, name: str) -> float | None:
    figure = config.published.get(name, config.published.get(name.split(":", 1)[0]))
    return None if figure is None else figure / 100
