"""A run judged again from its directory alone (`qualeval rescore`): the current extractor and answer specs over
the stored records, with no request sent. A task the run named by path is read again from its file, samples
included: an edited gold, choice, alias or meta judges the records it belongs to (matched by sample id; refused
where the id now names another question than the one the record sent)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

from qualeval.errors import InputError, QualevalWarning
from qualeval.reasoning import Completion
from qualeval.records import Manifest, Record, RunConfig, RunStore, RunSummary, TaskEntry
from qualeval.run.checks import check_code_allowed, run_notes
from qualeval.run.episodic import episode_rejudge
from qualeval.run.written import write_summary
from qualeval.scoring import check_scorers, decide
from qualeval.tasks import Sample, Task, build_samples, builtin_dir, load_task
from qualeval.wire import Message

__all__ = ["rescore", "run_config_of", "sample_of", "task_of", "tasks_of"]


def run_config_of(manifest: Manifest, root: Path) -> RunConfig:
    """The run's own configuration, at the directory it is now in."""
    if manifest.config is None:
        raise InputError(f"{root / 'manifest.json'}: holds no run configuration; was it edited?")
    return manifest.config.model_copy(update={"out": root})


def task_of(name: str, saved: TaskEntry, paths: Collection[str]) -> tuple[Task, str]:
    """The task a rescore judges with (the point of a rescore: the current one), and a line saying which it is.

    A task file the run named by path (`paths`: the run's task references that are files) is read again where it
    is; a built-in is the current built-in; the spec saved in the manifest stands in for a file that is gone, a
    built-in that no longer loads and an lm-eval import, whose library code a rescore does not run again.
    """
    kept = Task(saved.spec, None, name.partition(":")[2] or None) if saved.spec is not None else None
    file = saved.file
    if file is not None and file in paths:
        if Path(file).is_file():
            task = load_task(file)  # a file that no longer parses is the user's to fix: its error stands
            if task.name == name:
                return task, f"{name}: rescored with the current {file}"
            gone = f"{file} now holds task '{task.name}', not '{name}'"
        else:
            gone = f"{file} is not there any more"
    elif file is None or Path(file).parent == builtin_dir():
        try:
            return load_task(name), f"{name}: rescored with the current built-in task"
        except InputError as exc:
            gone = f"it does not load as a built-in task ({exc})"
    else:
        gone = f"it was imported from {file}, whose code a rescore does not run again"
    if kept is None:
        raise InputError(f"{name}: {gone}, and the run's manifest.json keeps no spec of it to rescore with")
    return kept, f"{name}: {gone}: rescored with the spec saved in the run's manifest.json"


def _paths(config: RunConfig) -> set[str]:
    """The run's task references that are files."""
    return {str(Path(r)) for r in config.tasks if r.endswith((".yaml", ".yml")) and not r.startswith("lm_eval:")}


def samples_of(name: str, task: Task, config: RunConfig) -> tuple[dict[str, Sample] | None, str]:
    """The samples the task's current file builds (with the run's --data), by id, and what the note adds; None
    where they cannot be read: the records' saved samples then stand, and the note says so."""
    file = str(task.path)
    ref = next((r for r in config.tasks if str(Path(r)) == file), file)
    try:
        built = build_samples(task, data=config.data_for(name, ref), num_fewshot=config.num_fewshot)
    except InputError as exc:
        return None, f"; its samples could not be read again ({exc}), so the gold saved in the run's records stands"
    return {sample.id: sample for sample in built}, ", samples (gold, choices, aliases, meta) included"


def _current_samples(
    manifest: Manifest, config: RunConfig, judged: dict[str, tuple[Task, str]]
) -> tuple[dict[str, dict[str, Sample]], list[str]]:
    """Per task re-read from its file, its current samples by id; and the note of every task."""
    paths = _paths(config)
    current: dict[str, dict[str, Sample]] = {}
    notes = []
    for name, (task, said) in judged.items():
        if manifest.tasks[name].file in paths and task.path is not None:
            built, more = samples_of(name, task, config)
            if built is not None:
                current[name] = built
            said += more
        notes.append(said)
    return current, notes


def _check_ids(store: RunStore, current: dict[str, dict[str, Sample]]) -> None:
    """Refused before anything is written: a record whose sample the current file no longer has, and records
    whose id now names another question (samples added, removed or reordered: ids are positions), which would
    be judged against another question's gold, and records whose options the file now gives otherwise."""
    moved: dict[str, list[str]] = {}
    reordered: dict[str, list[str]] = {}
    for record in store.records():
        samples = current.get(record.task)
        if samples is None:
            continue
        fresh = samples.get(record.sample_id)
        if fresh is None:
            raise InputError(
                f"{record.task}: sample '{record.sample_id}' of the run is not in its current task file any more; "
                "restore it, or rescore with the file the run used"
            )
        sent = record.prompt()
        if sent is not None and not _asks(fresh, sent):
            moved.setdefault(record.task, []).append(record.sample_id)
        elif not _same_options(fresh, record, sent):
            reordered.setdefault(record.task, []).append(record.sample_id)
    for task, ids in moved.items():
        raise InputError(
            f"{task}: the current task file asks another question under the id of {len(ids)} record(s) of the run "
            f"({_named(ids)}): were samples added, removed or reordered? Restore the file the run used, or run again"
        )
    for task, ids in reordered.items():
        raise InputError(
            f"{task}: the current task file gives other options, or the same in another order, than the run sent "
            f"for {len(ids)} record(s) ({_named(ids)}): the answers name options as they were sent. Restore the "
            "file the run used, or run again"
        )


def _named(ids: list[str]) -> str:
    return ", ".join(dict.fromkeys(ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _same_options(sample: Sample, record: Record, sent: str | None) -> bool:
    """Whether the options the record's prompt offered are the sample's current ones, in the same order: an
    answer names an option by its label or position, which an edited or reordered list gives to another one.
    A record that keeps no choices is read from its prompt: the current options, in order, after the question."""
    if record.choices:
        return [_words(c) for c in record.choices] == [_words(c) for c in sample.choices]
    if not sample.choices or sent is None:
        return True
    said = _words(sent)
    at = said.find(_words(sample.question)) + len(_words(sample.question)) if sample.question.strip() else 0
    for choice in sample.choices:
        found = said.find(_words(choice), max(at, 0))
        if found < 0:
            return False
        at = found + len(_words(choice))
    return True


def _asks(sample: Sample, sent: str) -> bool:
    """Whether `sent` (the last user message a record sent) asked `sample`'s question: the sample's prompt as
    rendered now, or its question within what was sent (an edited instruction or a shaped prompt keeps it)."""
    said = _words(sent)
    rendered = _words(sample.messages[-1].content) if sample.messages else ""
    return rendered == said or (bool(sample.question.strip()) and _words(sample.question) in said)


def _words(text: str) -> str:
    return " ".join(text.split())


def tasks_of(manifest: Manifest, config: RunConfig) -> dict[str, tuple[Task, str]]:
    """Each task of a run as a rescore judges it (`task_of`), by name."""
    paths = _paths(config)
    return {name: task_of(name, saved, paths) for name, saved in manifest.tasks.items()}


def rescore(
    root: Path, *, rescue: bool | None = None, allow_code: bool = False, note: Callable[[str], None] | None = None
) -> tuple[RunSummary, RunStore]:
    """Re-judge every record with the current extractor and answer specs; no request is sent. `note` hears, per
    task, which spec judged it (qualeval.run.rescoring.task_of).

    `allow_code` is this rescore's own permission to run a code task's programs again: the run's manifest may say
    it allowed them, but the user who rescores (maybe later, maybe someone else) has to say so again.
    Writes rescore/records.jsonl and rescore/summary.json beside the original ones.
    """
    store = RunStore(root)
    manifest = store.manifest()
    if manifest is None:
        raise InputError(f"{root}: no manifest.json here; is this a qualeval run directory?")
    config = run_config_of(manifest, root)
    judged = tasks_of(manifest, config)
    tasks = {name: task for name, (task, _) in judged.items()}
    current, notes = _current_samples(manifest, config, judged)
    for said in notes:
        if note is not None:
            note(said)
    use_rescue = config.rescue if rescue is None else rescue
    # refused before anything is written, as a run is: a refusal must not leave a partial rescore behind
    check_scorers(tasks.values())
    check_code_allowed(list(tasks.values()), allow_code)
    _check_ids(store, current)
    rejudge = episode_rejudge(tasks, {name: config.data_for(name) for name in tasks}, root)
    out = RunStore(root / "rescore")
    tooled: dict[str, list[Any]] = {}  # each tool task's tool_choice as sent, for the notes a live run gives
    scored = False

    def rejudged() -> Iterator[bytes]:
        nonlocal scored
        for record in store.records():
            task = tasks.get(record.task)
            scored = scored or record.scored
            sent = record.request.model_extra or {}
            if sent.get("tools"):  # as the live run counts a task: an item that offers tools
                tooled.setdefault(record.task, []).append(sent.get("tool_choice"))
            if record.episode is not None and rejudge is not None:  # from steps.jsonl, its calls replayed
                yield rejudge(record).model_dump_json().encode()
            elif task is not None:
                fresh = current.get(record.task, {}).get(record.sample_id)
                yield _rejudged(task, record, fresh, use_rescue, allow_code=allow_code).model_dump_json().encode()

    out.write_lines("records.jsonl", rejudged())  # streamed: a rescore stays flat in memory
    torn = _torn_line(store)
    server = manifest.server
    notes = run_notes(server.models if server else None, server.probe if server else None, tooled, scored)
    notes += [torn] if torn else []
    if torn:
        warnings.warn(torn, QualevalWarning, stacklevel=2)
    summary = write_summary(
        out, config, list(tasks.values()), manifest, series=root, rescored=True, started=manifest.started, notes=notes
    )
    return summary, out


def _torn_line(store: RunStore) -> str | None:
    """What to say of a last line cut off mid-write (no newline ends it: a run killed while writing it), which
    the store's reader skips: the rescore judges the records before it, and must not pass them off as the run."""
    path = store.records_path
    if not path.exists() or not path.stat().st_size:
        return None
    lines = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    if last == b"\n":
        return None
    return (
        f"{path}:{lines + 1}: 1 line could not be read (cut off mid-write, as a killed run leaves it) and is left "
        f"out: this rescore judges the {lines} lines before it, not the whole run; resuming the run (qualeval run "
        "with the same --out) sends that request again"
    )


def sample_of(record: Record) -> Sample:
    """What scoring reads of the sample a record answered: the messages it sent (a scorer reads the question:
    an alias the question itself holds is no answer), its gold, choices, aliases and the task's values."""
    sent = record.request.messages
    return Sample(
        id=record.sample_id,
        task=record.task,
        messages=tuple(_message(m.role, m.content) for m in sent if m.role in ("system", "user", "assistant")),
        gold=record.gold,
        choices=record.choices,
        aliases=record.aliases,
        meta=record.meta,
        scored=record.scored,
        **_offered(record),
    )


def _offered(record: Record) -> dict[str, Any]:
    """A tool-call record's tools and tool_choice as the request sent them, and the calls it expected."""
    if record.tools is None:
        return {}
    sent = record.request.model_extra or {}
    tools = sent.get("tools")
    return {
        "tools": tuple(t for t in tools if isinstance(t, dict)) if isinstance(tools, list) else (),
        "tool_choice": sent.get("tool_choice"),
        "tool_answer": record.tools.expected,
    }


def _rejudged(task: Task, record: Record, fresh: Sample | None, rescue: bool, *, allow_code: bool) -> Record:
    """The record judged again by the current rules, against its sample as the task file now has it (`fresh`)
    where it was read again; what was sent and what came back stay as they were."""
    if fresh is not None:
        current: dict[str, Any] = {
            "gold": fresh.gold,
            "choices": fresh.choices,
            "aliases": fresh.aliases,
            "meta": fresh.meta,
        }
        if record.tools is not None and fresh.tool_answer is not None:
            current["tools"] = record.tools.model_copy(update={"expected": fresh.tool_answer})
        record = record.model_copy(update=current)
    sample = sample_of(record)
    status = record.status
    if status == "echoed":  # judged again: the status the split gave, which the current rules may not call an echo
        status = "answer_truncated" if record.finish_reason == "length" else "ok"
    done = Completion(
        reasoning=record.reasoning,
        content=record.content,
        reasoning_source=record.reasoning_source,
        status=status,
    )
    verdict = decide(
        task,
        sample,
        done,
        record.constraint,
        rescue=rescue,
        grade=record.grade,
        allow_code=allow_code,
        calls=record.tools,
        finish=record.finish_reason,
    )
    return record.model_copy(
        update={
            "extraction": verdict.extraction,
            "score": verdict.score,
            "naive_correct": verdict.naive_correct,
            "rescue": verdict.rescue,
            "rescue_correct": verdict.rescue_correct,
            "constraint": verdict.constraint or record.constraint,
            "status": verdict.status or status,
            "tools": verdict.tools,
        }
    )


def _message(role: str, content: object) -> Message:
    text = content if isinstance(content, str) else "" if content is None else str(content)
    return Message.model_validate({"role": role, "content": text})  # the caller keeps the roles a Message takes
