"""A whole run: tasks -> samples -> requests -> records in a run directory -> summary -> reports.

Re-running with the same `--out` resumes: what is recorded is skipped. `rescore` re-judges the records with the
current extractor and task files, offline, and writes a new summary and reports beside the old ones.
"""

from __future__ import annotations

import functools
import random
import time
import uuid
import warnings
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

import orjson

from qualeval._version import __version__
from qualeval.errors import EndpointError, HTTPFailure, InputError, QualevalNote, QualevalWarning, TransportFailure
from qualeval.reasoning import builtin_formats
from qualeval.records import (
    SAMPLING,
    ClientConfig,
    Key,
    Manifest,
    Pinned,
    ProbeResult,
    Record,
    RunConfig,
    RunStore,
    RunSummary,
    ServerInfo,
    Shaping,
    TaskEntry,
    ThinkingSwitch,
    fingerprint,
)
from qualeval.run.arrivals import batch_loop, closed_loop, open_loop
from qualeval.run.checks import (
    check_code_allowed,
    check_published,
    check_run_tasks,
    check_warmup,
    data_task,
    run_notes,
    unread_data_error,
    warn_unlisted,
)
from qualeval.run.episodic import (
    Agents,
    Stamp,
    agents_for,
    check_passback_option,
    episode_tasks,
    run_agent,
    unfingerprinted,
)
from qualeval.run.levels import Level, RequestSettings, levels
from qualeval.run.pinned import SETTINGS_EXCLUDED, refuse_conflicts, resolve
from qualeval.run.pipeline import run_one
from qualeval.run.probepassback import add_passback, probe_passback
from qualeval.run.probetools import broken_for, check_tools, tool_tasks
from qualeval.run.probing import PROBE_CONCURRENCY, check_thinking_budget, is_simulated, probe, unanswered
from qualeval.run.written import write_summary
from qualeval.scoring import ModelJudge, check_scorers, model_judge_for
from qualeval.serving import needs_shaping, serving_client, shape_work
from qualeval.tasks import Sample, Task, build_samples, load_tasks
from qualeval.wire import ChatClient, ChatSender

__all__ = ["execute", "load_run_tasks"]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _samples(task: Task, ref: str, config: RunConfig, tasks: list[Task]) -> tuple[Task, list[Sample]]:
    data = config.data_for(task.name, ref)  # --data is keyed by what --task said, or by the task's name
    if data is not None:
        key = next(k for k in (ref, task.name, task.name.split(":", 1)[0], "*") if config.data.get(k) == data)
        task = data_task(task, data, str(data) if key == "*" else f"{key}={data}")
    try:
        samples = build_samples(
            task, data=data, limit_per_subset=config.limit_per_subject, num_fewshot=config.num_fewshot
        )
    except InputError as exc:  # one error naming the --data keys, not a warning and then a puzzle
        raise (exc if data else unread_data_error(exc, config, tasks)) from None
    if config.sample_seed is not None:
        samples = random.Random(config.sample_seed).sample(samples, len(samples))
    return task, samples[: config.limit] if config.limit else samples


def load_run_tasks(config: RunConfig) -> list[tuple[Task, list[Sample]]]:
    refs = [(ref, task) for ref in config.tasks for task in load_tasks(ref)]  # lm_eval:GROUP runs as its tasks
    tasks = [task for _, task in refs]
    check_scorers(tasks)
    check_code_allowed(tasks, config.allow_code_execution)  # refused before any data is read
    loaded = [_samples(task, ref, config, tasks) for ref, task in refs]  # each task as it reads its --data
    check_run_tasks(config, tasks)  # the warnings: --data for no task of the run, sampling cards advise against
    names = [t.name for t, _ in loaded]
    if len(set(names)) != len(names):
        raise InputError(f"--task: the same task is given twice ({', '.join(names)})")
    return loaded


def _manifest(config: RunConfig, work: list[tuple[Task, list[Sample]]], pinned: Pinned | None) -> Manifest:
    """The manifest; its fingerprint covers the samples, the settings and what the run pinned (once it has)."""
    rows = [(s.id, s.gold, s.messages[-1].content) for _, samples in work for s in samples]
    settings = config.model_dump(mode="json", exclude=unfingerprinted(work, SETTINGS_EXCLUDED))
    rows.append(("settings", orjson.dumps(settings, option=orjson.OPT_SORT_KEYS).decode(), ""))
    if pinned is not None:
        rows.append(("pinned", orjson.dumps(pinned.fingerprinted(), option=orjson.OPT_SORT_KEYS).decode(), ""))
    return Manifest(
        qualeval_version=__version__,
        config=config,  # holds no secret: RunConfig never writes the API key
        fingerprint=fingerprint(rows),
        pinned=pinned,
        tasks={
            t.name: TaskEntry(
                file=str(t.path) if t.path else None,
                version=t.spec.version,
                samples=len(s),
                spec=t.spec,
            )
            for t, s in work
        },
        started=_now(),
        run_id=uuid.uuid4().hex,
    )


def _client_config(
    config: RunConfig, concurrency: int, switch: ThinkingSwitch = "none", opened: bool = False
) -> ClientConfig:
    own = {"api_key": config.api_key} if config.api_key is not None else {}  # else OPENAI_API_KEY, as the SDK does
    formats = (*config.reasoning_format, *builtin_formats()) if config.reasoning_format else None
    return ClientConfig(
        base_url=config.base_url,
        concurrency=concurrency,
        timeout=config.timeout,
        max_retries=config.max_retries,
        thinking_opened=config.thinking_opened or opened,
        max_tokens_field=config.max_tokens_field,
        thinking_switch=switch,
        formats=formats,
        **own,
    )


def _wanted_thinking(config: RunConfig, work: list[tuple[Task, list[Sample]]]) -> bool | None:
    """The thinking value the run's requests will carry: the flag's, else a task's own default. Paired thinking
    levels resolve as thinking off, the side that needs a switch, and a constraint that suits both."""
    if config.thinking_pair:
        return False
    if config.thinking is not None:
        return config.thinking
    return next((t.spec.generation.thinking for t, _ in work if t.spec.generation.thinking is not None), None)


async def _preflight(
    config: RunConfig,
    wanted: bool | None,
    old: Manifest | None,
    bare: dict[str, bool],
    scored: bool,
    tools: bool,
    agents: bool = False,
) -> tuple[dict[str, Any] | None, ProbeResult | None, Pinned, bool]:
    """The server's /models answer, the probe result, and the pinned resolution (a resumed run's own, with its
    probe: never probed again, never nulled); the flag says whether it was resolved now. `bare`: per task,
    whether its prompt asks for the answer alone; `scored`: whether any item is scored (an accuracy to warn of);
    `tools`: whether a task offers tools (the probe then checks the tool_choice contracts); `agents`: whether a
    task's items are episodes (the probe then checks which field the server reads earlier reasoning from)."""
    pinned = old.pinned if old else None
    fresh = pinned is None
    if fresh and not config.probe:
        pinned = resolve(config, None, wanted, bare)  # nothing to learn from the endpoint: refuse before contacting it
    # the probe finds out for itself how reasoning comes back (a close-only block among them), as `qualeval probe`
    # does: told that the template opens the block, it would read every answer without one as unfinished thinking
    probing = _client_config(config, PROBE_CONCURRENCY).model_copy(update={"thinking_opened": False})
    async with ChatClient(probing) as client:
        try:
            models = await client.models()
        except TransportFailure as exc:
            raise EndpointError(f"cannot reach the endpoint: {exc}") from None
        except HTTPFailure as exc:
            if exc.status in (401, 403):
                raise EndpointError(f"{config.base_url} refused us: {exc}") from None
            models = None  # some servers have no /models; the chat requests will tell
        warn_unlisted(config.model, models, scored)
        if pinned is not None:
            server = old.server if old is not None and not fresh else None  # a resumed run keeps its own probe
            return models, server.probe if server else None, pinned, fresh
        found, budget_note = await _probed(client, config, tools, agents and config.reasoning_passback == "auto")
    pinned = resolve(config, found, wanted, bare)  # a request that cannot be honoured stops here, before any is sent
    pinned.notes += [budget_note] if budget_note else []
    return models, found, pinned, True


async def _probed(
    client: ChatClient, config: RunConfig, tools: bool, passback: bool = False
) -> tuple[ProbeResult, str | None]:
    """The probe's result (its own token budget and seeds, never the run's) and the thinking-budget check's note,
    both within the probe's time; with `tools`, the tool_choice contracts too. A probe that failed at the endpoint
    does not fail the run it serves: its checks are inconclusive, and the run goes on with the defaults (its own
    requests then say what the endpoint does)."""
    began = time.perf_counter()
    # what --reasoning-passback auto sends, first: four short requests the sampled checks could leave no time for
    passed = await probe_passback(client, config.model, seconds=config.probe_time) if passback else None
    left = config.probe_time - (time.perf_counter() - began) if passed is not None else config.probe_time
    try:
        found = await probe(client, config.model, seconds=left)
    except EndpointError as exc:
        found = unanswered(client.config.base_url, config.model, str(exc), config.probe_time)
    if tools and not found.failed:  # the contracts get what time the checks before them left
        left = config.probe_time - (time.perf_counter() - began)
        await check_tools(client, config.model, found, efforts=config.reasoning_effort, seconds=left)
    if passed is not None and not found.failed:
        add_passback(found, passed)
        found.seconds = config.probe_time  # the budget of the whole probe, the passback check's share in it
    if not config.thinking_budget:
        return found, None
    left = config.probe_time - (time.perf_counter() - began)
    if left <= 0:
        return found, "probe: --thinking-budget: no time was left for the budget check; it is sent unchecked"
    return found, await check_thinking_budget(client, config.model, seconds=left)


def _notes(models: dict[str, Any] | None, found: ProbeResult | None, tooled: Any, scored: bool) -> list[str]:
    """The summary's notes (run_notes: a rescore gives the same); each tool task's tool_choice the probe found
    broken is also warned, once a session."""
    for line in broken_for(tooled, found):
        warnings.warn(line, QualevalWarning, stacklevel=3)
    return run_notes(models, found, tooled, scored)


def _served(
    manifest: Manifest, started: str | None, models: dict[str, Any] | None, found: ProbeResult | None, shaping: Shaping
) -> Manifest:
    """The manifest once the endpoint has been asked: its models, the probe's result, what serving shaped."""
    update = {
        "started": started,
        "server": ServerInfo(models=models, probe=found),
        "shaping": shaping,
        "simulated": bool(found and found.simulated) or is_simulated(models),
    }
    return manifest.model_copy(update=update)


def _started(
    on_start: Callable[[int, int, Iterable[Record]], None],
    store: RunStore,
    done: set[Key],
    swept: list[Level],
    items: list[tuple[Task, Sample, int]],
) -> None:
    """What a resume keeps is counted into the bar, so its accuracy is the run's, as the summary's is."""
    held = done & {(s.id, a, level.label) for level in swept for _, s, a in items}
    kept = (r for r in store.records() if (r.sample_id, r.repeat, r.level) in held)
    on_start(len(held), len(items) * len(swept), kept)


async def execute(
    config: RunConfig,
    *,
    on_record: Callable[[Record], None] | None = None,
    on_start: Callable[[int, int, Iterable[Record]], None] | None = None,
) -> RunSummary:
    """Run (or resume) everything the config asks for; returns the summary written to summary.json."""
    work = load_run_tasks(config)
    swept = levels(config)
    assert config.out is not None
    store = RunStore(config.out)
    old = store.manifest()
    shaping = Shaping()
    if needs_shaping(config):  # a workload, context lengths or a shard: prompts are counted on the endpoint
        work, shaping = await shape_work(config, work, old.shaping if old else None)
    if config.workload:  # a workload brings its own task: known once shaped (the others were checked on loading)
        check_published(config, [t for t, _ in work])
    check_warmup(config, work)
    check_passback_option(config, work)
    if old is not None:
        refuse_conflicts(config.out, old, config)
    manifest = _manifest(config, work, old.pinned if old else None)
    store.check(manifest)  # local mistakes surface before the endpoint is contacted
    started = time.perf_counter()
    bare = {t.name: t.spec.prompt.bare for t, _ in work}
    scored = any(s.scored for _, samples in work for s in samples)  # a workload's synthetic prompts are not
    tooled = tool_tasks(work)
    wanted = _wanted_thinking(config, work)
    episodic = episode_tasks(work)
    models, found, pinned, fresh = await _preflight(config, wanted, old, bare, scored, bool(tooled), bool(episodic))
    agents = agents_for(episodic, config, found)
    if agents is not None and fresh:  # kept for compare and board; a run pinned before it was kept resumes as is
        pinned = pinned.model_copy(update={"passback": agents.passback})
    notes = _notes(models, found, tooled, scored) + (agents.notes() if agents else [])
    manifest = _served(_manifest(config, work, pinned), manifest.started, models, found, shaping)
    cap = max(level.cap for level in swept)
    async with model_judge_for(config.judge_base_url, config.judge_model, cap) as model_judge:
        done = store.open(manifest)
        if agents is not None:  # the steps of the episodes a killed session left unfinished, to replay
            agents.open(config.out)
        for note in pinned.notes if fresh else ():
            warnings.warn(note, QualevalNote, stacklevel=2)
        items = [(t, s, a) for t, samples in work for s in samples for a in range(config.samples_per_item)]
        if on_start:
            _started(on_start, store, done, swept, items)
        client_config = _client_config(config, cap, pinned.thinking_switch, pinned.thinking_opened)
        try:
            async with serving_client(config, client_config, cap, on_record) as (client, told):
                # to the microsecond: a run killed and resumed within one second is still two sessions, whose
                # pause no rate may count
                session = datetime.now(timezone.utc).isoformat(timespec="microseconds")
                await _send_all(client, config, swept, items, store, done, pinned, session, told, model_judge, agents)
        finally:
            store.close()
            if agents is not None:
                agents.close()
    wall = time.perf_counter() - started
    tasks = [t for t, _ in work]
    return write_summary(store, config, tasks, manifest, started=manifest.started, wall_s=wall, notes=notes)


def _warmups(
    warm: list[tuple[Task, Sample, int]], done: set[Key], label: str, more: bool
) -> tuple[list[tuple[Task, Sample, int]], bool]:
    """The warm-up requests a level sends in this session, and whether to record them. A resumed session whose
    warm-ups an earlier one recorded sends them again, unrecorded (their items keep their records), when it has
    requests left to time: they would otherwise meet the cold connection (and maybe a restarted server) that an
    uninterrupted run's warm-up absorbed."""
    fresh = [x for x in warm if (x[1].id, x[2], label) not in done]
    if warm and not fresh and more:
        return warm, False
    return fresh, True


async def _send_all(
    client: ChatSender,
    config: RunConfig,
    swept: list[Level],
    items: list[tuple[Task, Sample, int]],
    store: RunStore,
    done: set[Key],
    pinned: Pinned,
    session: str,
    on_record: Callable[[Record], None] | None,
    model_judge: ModelJudge | None = None,
    agents: Agents | None = None,
) -> None:
    """Every request not yet recorded, level by level, each record appended as it completes; an episode's through
    the agent's loop."""
    sampled = config.model_dump(include=set(SAMPLING))  # temperature, top_p...: plain numbers
    run_settings = RequestSettings(thinking=config.thinking, stream=config.stream, sampling=config.sampling, **sampled)

    async def one(item: tuple[Task, Sample, int], at: Level, warmup: bool, keep: bool = True) -> None:
        task, sample, repeat = item
        level, settings = at.label, at.request.over(run_settings)
        if agents is not None and sample.episode is not None:
            stamp = Stamp(sample.id, task.name, repeat, level, session)
            record = await run_agent(agents, client, task, sample, config.model, stamp, warmup, keep, settings)
        else:
            mode, style = pinned.mode_for(task.name), pinned.constraint_style
            record = await run_one(
                client, task, sample, model=config.model, mode=mode, style=style, rescue=config.rescue,
                allow_code=config.allow_code_execution, repeat=repeat, level=level, warmup=warmup, session=session,
                model_judge=model_judge, settings=settings,
            )  # fmt: skip
        if not keep:
            return
        earlier = store.history.get((sample.id, repeat, level))
        if earlier:  # sent again after failing for good in an earlier session: its faults still count
            record = record.model_copy(update={"retried": [*earlier, *record.retried]})
        store.append(record.model_dump_json().encode())
        if on_record:
            on_record(record)

    for at in swept:
        # the same warm-up items at every level, whatever was resumed
        todo = [x for x in items[config.warmup :] if (x[1].id, x[2], at.label) not in done]
        warm, keep = _warmups(items[: config.warmup], done, at.label, bool(todo))
        for item in warm:
            await one(item, at, True, keep)
        send = functools.partial(one, at=at, warmup=False)
        if config.batch:  # llama-benchy's batches, whatever the rate
            await batch_loop(todo, at.cap, send)
        elif at.rate is None:
            await closed_loop(todo, at.cap, send)
        else:
            rng = random.Random(f"{config.arrival_seed}|{at.label}")
            await open_loop(todo, at.rate, config.burstiness, rng, send)
