"""A run's summary from its records: per task the accuracy (per level, and pooled over distinct items unless the
levels asked differently: budgets, efforts, thinking on and off), repeated sampling, speed per level and
overall, the linked speed-and-quality analysis, and fault counts.

Accuracy counts each item once: a sweep over three load levels (or three --context-length values) of 20 questions
is 20 items, not 60, and its interval uses n = 20 (see qualeval.figures.accuracy for how an item's records are pooled).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from qualeval._version import __version__
from qualeval.figures.accuracy import Repeat, answered_cell, cell_of, per_level, repeated, summarize, unscored
from qualeval.figures.episodefigures import episode_figures
from qualeval.figures.frontier import Answer, answer_of, asked_differently, frontier, under_load
from qualeval.figures.repeats import Said, by_item, identical, said_of
from qualeval.figures.speeds import linked, speed
from qualeval.figures.toolfigures import ToolView, tool_figures, tool_view
from qualeval.records import (
    NOT_THE_MODELS,
    EpisodeFigures,
    EpisodeRecord,
    LevelReport,
    Linked,
    Outcome,
    Record,
    RunConfig,
    RunStore,
    RunSummary,
    TaskReport,
    TaskSummary,
    Timed,
)
from qualeval.tasks import Task

__all__ = ["offline_summary", "summarize_records", "write_summary_json"]


@dataclass
class _Rows:
    """One task's records, as the compact views the figures read (runs can hold 100,000 records)."""

    outcomes: list[Outcome] = field(default_factory=list)
    repeats: list[Repeat] = field(default_factory=list)
    timed: list[Timed] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    retried: int = 0
    answers: list[Answer] = field(default_factory=list)
    said: list[Said | None] = field(default_factory=list)
    tools: list[ToolView] = field(default_factory=list)
    """Tool-call items' records only (empty for any other task)."""
    episodes: list[tuple[str, bool, EpisodeRecord]] = field(default_factory=list)
    """Multi-turn items' episodes only, each with its level and whether it was a warm-up."""
    scored: bool = False

    def add(self, record: Record) -> None:
        outcome = record.outcome()
        length = record.shape.context_tokens if record.shape is not None else None
        if length and outcome.item is not None:
            # one question placed at several --context-length values is one item, not one per length: the
            # interval is over the questions asked; the per-length figures are the report's length table
            outcome = replace(outcome, item=outcome.item.removesuffix(f"@{length}"))
        self.outcomes.append(outcome)
        if record.status not in NOT_THE_MODELS:  # a sample the model never answered is no wrong sample
            self.repeats.append(Repeat(record.sample_id, record.right, record.extraction.value))
        self.timed.append(record.timed())
        self.answers.append(answer_of(record))
        self.said.append(said_of(record))
        if (view := tool_view(record)) is not None:
            self.tools.append(view)
        if record.episode is not None:
            self.episodes.append((record.level, record.warmup, record.episode))
        self.scored = self.scored or record.scored
        self.faults.update(record.retried)
        # a failed record's `retried` holds its own last attempt too, and an earlier session's failures: retried
        # is a second attempt sent (what makes its TTFT and latency count from the first); an episode's requests
        # are its steps
        self.retried += record.episode.retried if record.episode is not None else record.attempts > 1


def _collect(records: Iterable[Record], tasks: list[Task]) -> tuple[dict[str, _Rows], int]:
    """One pass over the records (streamed): each task's rows, and how many records there were."""
    rows = {t.name: _Rows() for t in tasks}
    count = 0
    for record in records:
        if record.task in rows:
            count += 1
            rows[record.task].add(record)
    return rows, count


def summarize_records(
    store: RunStore, config: RunConfig, tasks: list[Task], labels: list[str], simulated: bool
) -> RunSummary:
    """Every task's figures from the final records in `store`, at the run's levels (`labels`, in run order)."""
    rows, count = _collect(store.records(), tasks)
    return RunSummary(
        model=config.model,
        base_url=config.base_url,
        simulated=simulated,
        qualeval_version=__version__,
        records=count,
        tasks={task.name: _report(task, rows[task.name], labels, config) for task in tasks},
    )


def offline_summary(summary: TaskSummary, responses: Path, records: int) -> RunSummary:
    """The summary `qualeval score` writes: one task judged from `responses`, a file made elsewhere. No server was
    asked (no base_url: the file is its `source`) and no request was timed, so its speed is empty."""
    report = TaskReport(summary=summary, speed=speed([]), linked=linked([], None))
    return RunSummary(
        model=f"offline: {responses.name}",
        base_url=None,
        source=str(
            responses.resolve()
        ),  # read from the run directory, a path relative to where score ran points nowhere
        simulated=False,
        qualeval_version=__version__,
        records=records,
        tasks={summary.task: report},
    )


def write_summary_json(store: RunStore, summary: RunSummary) -> Path:
    """summary.json: the one writer of it, for a run, a rescore, a merge and `qualeval score` alike."""
    return store.write_json("summary.json", summary.model_dump(mode="json"))


def _report(task: Task, rows: _Rows, labels: list[str], config: RunConfig) -> TaskReport:
    scored = rows.scored or not rows.timed
    levels = _levels(labels, rows.outcomes, rows.timed, config, scored)
    # pooled over several levels: latencies yes, throughput no (it only means something per level)
    overall = speed(rows.timed, config.slo, throughput=len(levels) <= 1)
    k = config.samples_per_item
    for label, against in (under_load(list(levels), rows.answers) if scored else {}).items():
        same = identical(by_item(rows.said, label), by_item(rows.said, against.against))
        levels[label].vs_first = against.model_copy(update={"identical": same})
    summary = summarize(task.name, rows.outcomes, task.spec.breakdowns)
    if not scored:
        summary = unscored(summary)
    elif asked_differently(levels):
        at = {
            label: [o for o, r in zip(rows.outcomes, rows.timed, strict=True) if r.level == label] for label in levels
        }
        own = {label: summarize(task.name, at[label], task.spec.breakdowns) for label in levels}
        summary = per_level(summary, own)
        for label, lv in levels.items():  # the shares pooled over the levels are gone: each level's own stand
            lv.accuracy_answered, lv.naive_accuracy = own[label].accuracy_answered, own[label].naive_accuracy
    # a tool-call task's accuracy is pooled over its levels only where the task's own is; per level beside it
    tools = tool_figures(rows.tools, pooled_accuracy=summary.interval is not None) if rows.tools else None
    for label, lv in levels.items() if tools is not None and len(levels) > 1 else ():
        lv.tools = tool_figures([v for v in rows.tools if v.level == label])
    for label, lv in levels.items() if rows.episodes and len(levels) > 1 else ():
        lv.episodes = _episodes([e for e in rows.episodes if e[0] == label])
    return TaskReport(
        tools=tools,
        episodes=_episodes(rows.episodes) if rows.episodes else None,
        summary=summary,
        repeated=repeated(rows.repeats, k) if k > 1 and scored else None,
        speed=overall,
        levels=levels,
        frontier=frontier(levels, rows.timed, rows.answers, config.within / 100) if scored else None,
        linked=_linked(rows.timed, overall.duration_s, scored),
        faults=dict(rows.faults),
        retried=rows.retried,
        published=_published(config, task.name),
        scored=scored,
    )


def _episodes(rows: list[tuple[str, bool, EpisodeRecord]]) -> EpisodeFigures | None:
    return episode_figures([e for _, _, e in rows], [w for _, w, _ in rows]) if rows else None


def _linked(rows: list[Timed], duration_s: float | None, scored: bool) -> Linked:
    """Speed read with quality; with no right answer to the prompts, only what does not count right answers."""
    both = linked(rows, duration_s)
    if scored:
        return both
    per_correct = ("correct_per_minute", "tokens_per_correct", "seconds_per_correct")
    return both.model_copy(
        update={"accuracy_by_reasoning_length": {}, "latency_by_outcome": {}, **dict.fromkeys(per_correct)}
    )


def _levels(
    labels: list[str], outcomes: list[Outcome], rows: list[Timed], config: RunConfig, scored: bool
) -> dict[str, LevelReport]:
    """Per load level: accuracy over the distinct items answered there (several records each with
    --samples-per-item; none judged, n = 0, where the prompts have no right answer), the requests the endpoint
    failed, and speed."""
    levels = {}
    for label in labels:
        at = [r for r in rows if r.level == label]
        if at:
            answers = [(o.item, o.correct, o.status) for o, r in zip(outcomes, rows, strict=True) if r.level == label]
            cell, failed = answered_cell(answers)
            cell = cell if scored else cell_of([])
            levels[label] = LevelReport(accuracy=cell, speed=speed(at, config.slo), endpoint_errors=failed)
    return levels


def _published(config: RunConfig, name: str) -> float | None:
    return config.published.get(name, config.published.get(name.split(":", 1)[0]))
