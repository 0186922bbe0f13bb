"""Multi-turn items through a run: a Sample with an `episode` goes through the agent's loop (qualeval.agent) in
place of run_one's single request, with the request run_one would send for turn 0 (request_for: the task's and
the run's settings), against the API classes of its task, and ends as one ordinary Record whose score is the
episode's verdict (qualeval.scoring.judge_episode), so every paired figure reads it as any item.

Each step is appended to steps.jsonl as it ends; the Record is written only once the episode has ended, so a
run killed mid-episode has no record of it: the resume replays the steps written (calls executed again on a
fresh environment) and goes on, never sending a recorded step twice (but the warm-up episode a resumed session
runs again whole, unrecorded) nor scoring half an episode. An episode stopped by an
endpoint failure (a 400 for a passback field the server rejects included) is an endpoint error, never a wrong
answer, and is sent again on resume from the step that failed.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qualeval.agent import (
    ClassSource,
    Episode,
    Stamp,
    bfcl_classes,
    cut_step,
    episode_record,
    episode_timing,
    open_env,
    run_episode,
    usage_total,
)
from qualeval.agent import execute as execute_call
from qualeval.errors import InputError
from qualeval.records import (
    AppliedPassback,
    ConstraintRecord,
    EpisodeSpec,
    EpisodeVerdict,
    Extraction,
    Key,
    PassbackMode,
    ProbeResult,
    Record,
    RunConfig,
    Score,
    SentBody,
    StepLog,
    StepRecord,
    ToolCall,
    ToolStatus,
    episode_steps,
    passback_found,
    read_steps,
    step_digests,
)
from qualeval.run.levels import RequestSettings
from qualeval.run.pipeline import request_for
from qualeval.scoring import judge_episode, wire_status
from qualeval.tasks import Sample, Task, build_samples
from qualeval.wire import ChatResponse, ChatSender, build_body

__all__ = [
    "Agents",
    "Stamp",
    "agents_for",
    "calls_of",
    "check_passback_option",
    "episode_rejudge",
    "episode_tasks",
    "rejudged",
    "resolve_passback",
    "run_agent",
    "step_judge",
    "unfingerprinted",
]

FALLBACK: AppliedPassback = "reasoning_content"
"""What `auto` sends when the probe could not tell: the field llama.cpp, SGLang and DeepSeek read."""


def resolve_passback(asked: PassbackMode, found: ProbeResult | None) -> tuple[AppliedPassback, str]:
    """The passback a run applies, and a line saying why where it is not simply what was asked."""
    if asked != "auto":
        return asked, ""
    chosen = passback_found(found)
    if chosen is None:
        return FALLBACK, (
            f"--reasoning-passback auto: the probe did not tell which field the server reads earlier reasoning "
            f"from, so {FALLBACK} is sent (llama.cpp, SGLang and DeepSeek read it)"
        )
    return chosen, f"--reasoning-passback auto: {chosen} (the probe found the server consumes it)"


@dataclass
class Agents:
    """What a run's episodes share: each task's API classes, the passback applied, the step log and the steps a
    killed session left, by request."""

    sources: dict[str, ClassSource]
    passback: AppliedPassback
    asked: PassbackMode
    note: str = ""
    log: StepLog | None = None
    left: dict[Key, list[StepRecord]] = field(default_factory=dict)

    def notes(self) -> list[str]:
        """What the run's summary says of its episodes."""
        return [self.note] if self.note else []

    def open(self, root: Path) -> None:
        """Open the run's steps.jsonl, keeping the steps of the episodes a killed session left, to replay."""
        self.log = StepLog(root)
        self.left = self.log.open()

    def close(self) -> None:
        if self.log is not None:
            self.log.close()


def episode_tasks(work: Sequence[tuple[Task, Sequence[Sample]]]) -> list[Task]:
    """The tasks whose items are episodes."""
    return [task for task, samples in work if any(s.episode is not None for s in samples)]


def unfingerprinted(work: Sequence[tuple[Task, Sequence[Sample]]], excluded: Iterable[str]) -> set[str]:
    """The options a run's fingerprint leaves out: `excluded`, and --reasoning-passback where no item is an
    episode (it changes nothing there: a run made before the option existed resumes)."""
    return {*excluded, *(() if episode_tasks(work) else ("reasoning_passback",))}


def check_passback_option(config: RunConfig, work: Sequence[tuple[Task, Sequence[Sample]]]) -> None:
    """--reasoning-passback given for a run with no multi-turn item is refused: it would change nothing, yet the
    run would keep it as a setting and `compare` list it as one that differs."""
    if "reasoning_passback" in config.model_fields_set and not episode_tasks(work):
        raise InputError(
            f"--reasoning-passback {config.reasoning_passback} changes nothing here: no task of this run has "
            f"multi-turn items (bfcl_multi_turn); leave the option out"
        )


def agents_for(tasks: Sequence[Task], config: RunConfig, found: ProbeResult | None) -> Agents | None:
    """The episodes' shared parts for the tasks whose items are episodes (None: there are none); a class that
    fails to load is one line naming its file, before any request."""
    if not tasks:
        return None
    sources = {t.name: bfcl_classes(t.spec, config.data_for(t.name)) for t in tasks}
    passback, note = resolve_passback(config.reasoning_passback, found)
    return Agents(sources, passback, config.reasoning_passback, note)


def calls_of(steps: Sequence[StepRecord]) -> list[list[tuple[ToolCall, ...]]]:
    """The calls per turn and step, as the judge reads them, from the steps of an ended episode."""
    turns: list[list[tuple[ToolCall, ...]]] = []
    for step in steps:
        while len(turns) <= step.turn:
            turns.append([])
        turns[step.turn].append(step.calls)
    return turns


async def run_agent(
    agents: Agents,
    client: ChatSender,
    task: Task,
    sample: Sample,
    model: str,
    stamp: Stamp,
    warmup: bool = False,
    keep: bool = True,
    settings: RequestSettings | None = None,
) -> Record:
    """One episode from its first request (or from where a killed session left it) to its record. `keep`: its
    steps are written (a warm-up sent again unrecorded writes none)."""
    spec = sample.episode
    if spec is None:
        raise InputError(f"{sample.id}: not a multi-turn item")
    source = agents.sources[task.name]
    key = (stamp.sample_id, stamp.repeat, stamp.level)
    done = episode_steps(agents.left.pop(key, [])) if keep else []
    request = request_for(task, sample, model, settings)
    env = open_env(spec, source)
    episode = await run_episode(
        client.chat,
        request,
        spec,
        functools.partial(execute_call, env),
        passback=agents.passback,
        stamp=stamp,
        on_step=agents.log.append if keep and agents.log is not None else None,
        done=done,
        judge=step_judge(request.tool_choice),
    )
    verdict = None
    if episode.stopped is None:  # replaying the calls on fresh instances takes a while: off the event loop
        verdict = await asyncio.to_thread(judge_episode, spec, episode.calls_by_turn, source, episode.forced_quit)
    sent = SentBody.model_validate(build_body(request, client.config))
    return _record(agents, sample, episode, verdict, sent, stamp, warmup)


def _record(
    agents: Agents,
    sample: Sample,
    episode: Episode,
    verdict: EpisodeVerdict | None,
    sent: SentBody,
    stamp: Stamp,
    warmup: bool,
) -> Record:
    steps = episode.steps
    last = episode.stopped or (steps[-1] if steps else None)
    # the episode's status and finish are its worst step's: an endpoint stop, else the first step cut off (the
    # loop goes on after a cut step, but its user saw a truncated answer there)
    worst = episode.stopped or cut_step(steps)
    finish = worst or last
    return Record(
        sample_id=stamp.sample_id,
        task=stamp.task,
        repeat=stamp.repeat,
        level=stamp.level,
        warmup=warmup,
        session=stamp.session,
        sent_at=steps[0].sent_at if steps else None,
        retried=[fault for s in steps for fault in s.retried],
        request=sent,
        reasoning=last.reasoning if last else "",
        content=last.content if last else "",
        reasoning_source=last.reasoning_source if last else "none",
        status=worst.status if worst else "ok",
        finish_reason=finish.finish_reason if finish else None,
        usage=usage_total(steps),
        timing=episode_timing(steps),
        attempts=sum(s.attempts for s in steps),
        constraint=ConstraintRecord(mode="off"),
        extraction=Extraction(value=None, rung="calls"),
        score=_score(verdict),
        gold=sample.gold,
        choices=sample.choices,
        aliases=sample.aliases,
        meta=sample.meta,
        scored=sample.scored,
        shape=sample.shape,
        error=_where(episode.stopped) if episode.stopped else None,
        episode=episode_record(
            steps,
            passback=agents.passback,
            asked=agents.asked,
            note=agents.note,
            forced_quit=episode.forced_quit,
            verdict=verdict,
        ),
    )


def step_judge(
    tool_choice: str | dict[str, Any] | None,
) -> Callable[[ChatResponse, tuple[dict[str, Any], ...]], ToolStatus]:
    """What judges each step of an episode whose requests send `tool_choice`: its wire status."""
    return functools.partial(_wire_status, tool_choice)


def _wire_status(
    tool_choice: str | dict[str, Any] | None, response: ChatResponse, tools: tuple[dict[str, Any], ...]
) -> ToolStatus:
    """A step's wire status, as a single tool-call response's (nothing expected of its calls)."""
    done, calls = response.completion, response.tool_calls
    unindexed = response.delta_without_index
    return wire_status(
        done, calls, tools=tools, tool_choice=tool_choice, finish=response.finish_reason, unindexed=unindexed
    )


def _where(stopped: StepRecord) -> str | None:
    """An endpoint error inside an episode, saying where it came and what the step carried back."""
    if stopped.error is None:
        return None
    carried = f", reasoning passed back as {stopped.passback}" if stopped.step or stopped.turn else ""
    return f"turn {stopped.turn} step {stopped.step}{carried}: {stopped.error}"


def _score(verdict: EpisodeVerdict | None) -> Score:
    if verdict is None:
        return Score(correct=None, detail="the episode stopped at an endpoint error")
    return Score(correct=verdict.correct, detail=verdict.message or verdict.error_type)


def rejudged(record: Record, spec: EpisodeSpec, source: ClassSource, steps: Sequence[StepRecord]) -> Record:
    """An ended episode's record judged again from its steps (steps.jsonl) and its spec, offline."""
    if record.episode is None or record.episode.ended == "endpoint_error":
        return record
    kept = episode_steps(steps)
    if len(kept) != record.episode.steps:
        raise InputError(
            f"{record.sample_id}: steps.jsonl holds {len(kept)} steps of this episode, its record says "
            f"{record.episode.steps}: the episode cannot be judged again from them"
        )
    verdict = judge_episode(spec, calls_of(kept), source, record.episode.forced_quit)
    passed = [*verdict.turns, *[None] * len(record.episode.turns)]
    turns = [t.model_copy(update={"passed": p}) for t, p in zip(record.episode.turns, passed, strict=False)]
    digests = tuple(step_digests(s) for s in kept)  # a record written before they were kept gets them
    update = {"failed_turn": verdict.failed_turn, "error_type": verdict.error_type, "turns": turns, "digests": digests}
    episode = record.episode.model_copy(update=update)
    return record.model_copy(update={"score": _score(verdict), "episode": episode})


def episode_rejudge(
    tasks: dict[str, Task], data: dict[str, Path | None], root: Path
) -> Callable[[Record], Record] | None:
    """For a rescore: a function that judges an ended episode's record again from steps.jsonl and its task's
    current items; None where no task's items are episodes. An item or a class that cannot be read is one line
    naming the task, before anything is written (a rescore never passes an episode off as judged)."""
    episodic = {name: t for name, t in tasks.items() if t.spec.environment is not None}
    if not episodic:
        return None
    specs: dict[tuple[str, str], EpisodeSpec] = {}
    sources: dict[str, ClassSource] = {}
    for name, task in episodic.items():
        try:
            built = build_samples(task, data=data.get(name))
        except InputError as exc:
            raise InputError(f"task {name}: its episodes cannot be judged again: {exc}") from None
        specs.update({(name, s.id): s.episode for s in built if s.episode is not None})
        sources[name] = bfcl_classes(task.spec, data.get(name))
    steps = read_steps(root)

    def rejudge(record: Record) -> Record:
        spec = specs.get((record.task, record.sample_id))
        if spec is None or record.task not in sources:
            raise InputError(f"{record.sample_id}: no episode of task {record.task} has this id now")
        return rejudged(
            record, spec, sources[record.task], steps.get((record.sample_id, record.repeat, record.level), [])
        )

    return rejudge
