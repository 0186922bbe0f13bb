"""A whole run: tasks -> samples -> requests -> records in a run directory -> summary -> reports.

Re-running with the same `--out` resumes: what is recorded is skipped. `rescore` re-judges the records with the
current extractor and task files, offline, and writes a new summary and reports beside the old ones.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from qualeval import __version__
from qualeval.client import ChatClient, ClientConfig
from qualeval.config import RunConfig
from qualeval.constrain import Style
from qualeval.errors import EndpointError, HTTPFailure, InputError, TransportFailure
from qualeval.metrics import Attempt, Linked, Repeated, Speed, Timed, linked, repeated, speed
from qualeval.models import Completion, Sample
from qualeval.probe import ProbeResult, probe
from qualeval.runner import Record, judge, outcome_of, resolve_mode, run_one
from qualeval.store import RunStore, fingerprint
from qualeval.summary import Cell, Outcome, TaskSummary, summarize
from qualeval.tasks import Task, build_samples, load_task
from qualeval.tasks.spec import TaskSpec

__all__ = ["RunSummary", "TaskReport", "execute", "load_run_tasks", "rescore", "summarize_records", "timed_of"]


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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _samples(task: Task, config: RunConfig) -> list[Sample]:
    samples = build_samples(
        task, data=config.data_for(task.name), limit_per_subset=config.limit_per_subject, num_fewshot=config.num_fewshot
    )
    if config.sample_seed is not None:
        samples = random.Random(config.sample_seed).sample(samples, len(samples))
    return samples[: config.limit] if config.limit else samples


def load_run_tasks(config: RunConfig) -> list[tuple[Task, list[Sample]]]:
    out = []
    for ref in config.tasks:
        task = load_task(ref)
        out.append((task, _samples(task, config)))
    names = [t.name for t, _ in out]
    if len(set(names)) != len(names):
        raise InputError(f"--task: the same task is given twice ({', '.join(names)})")
    return out


def _manifest(config: RunConfig, work: list[tuple[Task, list[Sample]]]) -> dict[str, Any]:
    rows = [(s.id, s.gold, s.messages[-1].content) for _, samples in work for s in samples]
    settings = config.model_dump(
        mode="json", exclude={"out", "concurrency", "timeout", "max_retries", "fail_under", "probe"}
    )
    return {
        "qualeval_version": __version__,
        "config": config.model_dump(mode="json"),  # holds no secret: the API key is never part of it
        "fingerprint": fingerprint(
            [*rows, ("settings", orjson.dumps(settings, option=orjson.OPT_SORT_KEYS).decode(), "")]
        ),
        "tasks": {
            t.name: {
                "file": str(t.path) if t.path else None,
                "version": t.spec.version,
                "samples": len(s),
                "spec": t.spec.model_dump(mode="json"),
            }
            for t, s in work
        },
        "started": _now(),
    }


async def _preflight(client: ChatClient, config: RunConfig) -> tuple[dict[str, Any] | None, ProbeResult | None]:
    try:
        models = await client.models()
    except TransportFailure as exc:
        raise EndpointError(f"cannot reach the endpoint: {exc}") from None
    except HTTPFailure as exc:
        if exc.status in (401, 403):
            raise EndpointError(f"{config.base_url} refused us: {exc}") from None
        models = None  # some servers have no /models; the chat requests will tell
    found = None
    if config.probe:
        found = await probe(client, config.model, max_tokens=min(config.max_tokens or 2048, 2048))
    return models, found


def _styles(config: RunConfig, found: ProbeResult | None) -> list[Style]:
    if config.constraint_style:
        return [config.constraint_style]
    return found.styles() if found else []


async def execute(
    config: RunConfig,
    *,
    on_record: Callable[[Record], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> RunSummary:
    """Run (or resume) everything the config asks for; returns the summary written to summary.json."""
    work = load_run_tasks(config)
    assert config.out is not None
    store = RunStore(config.out)
    manifest = _manifest(config, work)
    store.check(manifest)  # local mistakes surface before the endpoint is contacted
    levels = config.levels()
    client_config = ClientConfig(
        base_url=config.base_url,
        concurrency=max(cap for _, cap, _ in levels),
        timeout=config.timeout,
        max_retries=config.max_retries,
        thinking_opened=config.thinking_opened,
        max_tokens_field=config.max_tokens_field,
    )
    started = time.perf_counter()
    async with ChatClient(client_config) as client:
        models, found = await _preflight(client, config)
        manifest["server"] = {"models": models, "probe": found.model_dump(mode="json") if found else None}
        manifest["simulated"] = bool(found and found.simulated) or _simulated(models)
        done = store.open(manifest)
        mode, style = resolve_mode(config.constraint, _styles(config, found))
        items = [(t, s, a) for t, samples in work for s in samples for a in range(config.samples_per_item)]
        remaining = sum((s.id, a, label) not in done for label, _, _ in levels for _, s, a in items)
        if on_start:
            on_start(len(items) * len(levels) - remaining, len(items) * len(levels))
        overrides = {
            "max_tokens": config.max_tokens,
            "temperature": config.temperature,
            "thinking": config.thinking,
            "stream": config.stream,
        }
        session = manifest["started"]

        async def one(item: tuple[Task, Sample, int], level: str, warmup: bool) -> None:
            task, sample, attempt = item
            record = await run_one(
                client,
                task,
                sample,
                model=config.model,
                mode=mode,
                style=style,
                rescue=config.rescue,
                attempt=attempt,
                level=level,
                warmup=warmup,
                session=session,
                **overrides,
            )
            store.append(record.model_dump_json().encode())
            if on_record:
                on_record(record)

        try:
            for label, cap, rate in levels:
                # the same warm-up items at every level, whatever was resumed
                warm = items[: config.warmup]
                for item in warm:
                    if (item[1].id, item[2], label) not in done:
                        await one(item, label, True)
                todo = [x for x in items[config.warmup :] if (x[1].id, x[2], label) not in done]
                if rate is None:
                    await _closed_loop(todo, cap, lambda x, lab=label: one(x, lab, False))
                else:
                    rng = random.Random(f"{config.arrival_seed}|{label}")
                    await _open_loop(todo, rate, config.burstiness, rng, lambda x, lab=label: one(x, lab, False))
        finally:
            store.close()
    wall = time.perf_counter() - started
    summary = summarize_records(store, config, [t for t, _ in work], manifest["simulated"])
    summary.started = manifest["started"]
    summary.wall_s = wall
    store.write_json("summary.json", summary.model_dump(mode="json"))
    return summary


async def _closed_loop(todo: list[Any], workers: int, run: Callable[[Any], Awaitable[None]]) -> None:
    """A fixed number of requests in flight: each worker sends its next item as soon as one finishes."""
    queue = iter(todo)

    async def worker() -> None:
        for item in queue:  # workers share one iterator: each item is taken once
            await run(item)

    await asyncio.gather(*(worker() for _ in range(min(workers, max(len(todo), 1)))))


async def _open_loop(
    todo: list[Any], rate: float, burstiness: float, rng: random.Random, run: Callable[[Any], Awaitable[None]]
) -> None:
    """Requests arrive on their own clock, as in vllm bench serve: gamma-distributed gaps with mean 1/rate
    (shape `burstiness`: 1 is a Poisson process). The client's cap still bounds requests in flight."""
    pending = []
    for index, item in enumerate(todo):
        if index:
            await asyncio.sleep(rng.gammavariate(burstiness, 1.0 / (rate * burstiness)))
        pending.append(asyncio.create_task(run(item)))
    await asyncio.gather(*pending)


def _simulated(models: dict[str, Any] | None) -> bool:
    data = (models or {}).get("data") or []
    return any(isinstance(m, dict) and m.get("owned_by") == "qualeval-simulated" for m in data)


def timed_of(row: dict[str, Any]) -> Timed:
    """The speed figures' view of a record, read from its JSON form."""
    t, u = row.get("timing") or {}, row.get("usage") or {}
    itl = t.get("itl") or {}
    body = row.get("request") or {}
    return Timed(
        level=row.get("level", ""),
        warmup=bool(row.get("warmup")),
        session=row.get("session", ""),
        sent_at=row.get("sent_at"),
        correct=row["score"]["correct"],
        status=row["status"],
        ttft=t.get("ttft"),
        first_reasoning=t.get("first_reasoning"),
        first_content=t.get("first_content"),
        end=t.get("end"),
        itl_hist=itl.get("hist") or {},
        itl_count=itl.get("count", 0),
        itl_mean=itl.get("mean"),
        completion_tokens=u.get("completion_tokens"),
        reasoning_tokens=u.get("reasoning_tokens"),
        answer_tokens=u.get("answer_tokens"),
        budget=body.get("max_tokens") or body.get("max_completion_tokens"),
    )


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
    count = 0
    for row in records if records is not None else store.records():
        name = row["task"]
        if name not in outcomes:
            continue
        count += 1
        outcomes[name].append(outcome_of(row))
        attempts[name].append(Attempt(row["sample_id"], row["score"]["correct"], row["extraction"]["value"]))
        timed[name].append(timed_of(row))
        faults[name].update(row.get("retried") or ())
        if row.get("error"):
            errors[name][row["error"]] += 1
    labels = [label for label, _, _ in config.levels()]
    reports = {}
    for task in tasks:
        name = task.name
        rows = timed[name]
        levels = {}
        for label in labels:
            at = [r for r in rows if r.level == label]
            if at:
                levels[label] = LevelReport(accuracy=Cell.of([r.correct for r in at]), speed=speed(at, config.slo))
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
        )
    return RunSummary(
        model=config.model,
        base_url=config.base_url,
        simulated=simulated,
        qualeval_version=__version__,
        records=count,
        tasks=reports,
    )


def _run_config(manifest: dict[str, Any], root: Path) -> RunConfig:
    try:
        return RunConfig.model_validate({**manifest["config"], "out": str(root)})
    except Exception as exc:  # an old or edited manifest
        raise InputError(f"{root / 'manifest.json'}: the run's configuration does not load ({exc})") from None


def _task_of(name: str, saved: dict[str, Any]) -> Task:
    """The current task file when it still loads (the point of a rescore), else the snapshot in the manifest."""
    try:
        return load_task(name)
    except InputError:
        return Task(TaskSpec.model_validate(saved["spec"]), None, name.partition(":")[2] or None)


def rescore(root: Path, *, rescue: bool | None = None) -> tuple[RunSummary, RunStore]:
    """Re-judge every record with the current extractor and answer specs; no request is sent.

    Writes rescore/records.jsonl and rescore/summary.json beside the original ones.
    """
    store = RunStore(root)
    manifest = store.manifest()
    if manifest is None:
        raise InputError(f"{root}: no manifest.json here; is this a qualeval run directory?")
    config = _run_config(manifest, root)
    tasks = {name: _task_of(name, saved) for name, saved in manifest["tasks"].items()}
    use_rescue = config.rescue if rescue is None else rescue
    out = RunStore(root / "rescore")

    def rejudged() -> Iterator[bytes]:
        for row in store.records():
            task = tasks.get(row["task"])
            if task is not None:
                yield orjson.dumps(_rejudged(task, row, use_rescue))

    out.write_lines("records.jsonl", rejudged())  # streamed: a rescore stays flat in memory
    summary = summarize_records(out, config, list(tasks.values()), bool(manifest.get("simulated")))
    summary.rescored = True
    out.write_json("summary.json", summary.model_dump(mode="json"))
    return summary, out


def _rejudged(task: Task, row: dict[str, Any], rescue: bool) -> dict[str, Any]:
    sample = Sample(
        id=row["sample_id"],
        task=row["task"],
        messages=(),
        gold=row["gold"],
        choices=tuple(row.get("choices") or ()),
        aliases=tuple(row.get("aliases") or ()),
        meta=row.get("meta") or {},
    )
    done = Completion(
        reasoning=row["reasoning"],
        content=row["content"],
        reasoning_source=row["reasoning_source"],
        status=row["status"],
    )
    constraint = row.get("constraint") or {}
    held = None
    if constraint.get("held"):
        follow = constraint.get("followup")
        answer = follow["content"] if follow else row["content"]
        held = _held_answer(answer, constraint.get("kind"))
    verdict = judge(task, sample, done, held=held, rescue=rescue)
    return {
        **row,
        "extraction": verdict.extraction.model_dump(),
        "score": verdict.score.model_dump(),
        "naive_correct": verdict.naive_correct,
        "rescue": verdict.rescue.model_dump() if verdict.rescue else None,
        "rescue_correct": verdict.rescue_correct,
    }


def _held_answer(content: str, kind: str | None) -> str | None:
    if kind == "json":
        try:
            obj = orjson.loads(content)
            return str(obj["answer"]) if isinstance(obj, dict) and "answer" in obj else None
        except orjson.JSONDecodeError:
            return None
    return content.strip()
