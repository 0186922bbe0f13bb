"""A run judged again from its directory alone (`qualeval rescore`): the current extractor and answer specs over
the stored records, with no request sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from qualeval.errors import InputError
from qualeval.reasoning.completion import Completion
from qualeval.records import Manifest, Record, RunConfig, RunSummary, TaskEntry
from qualeval.records.store import RunStore
from qualeval.run.checks import check_code_allowed
from qualeval.run.written import write_summary
from qualeval.scoring.verdict import decide
from qualeval.tasks import Task, load_task
from qualeval.wire.models import Message, Sample

__all__ = ["rescore", "run_config_of", "sample_of", "task_of"]


def run_config_of(manifest: Manifest, root: Path) -> RunConfig:
    """The run's own configuration, at the directory it is now in."""
    if manifest.config is None:
        raise InputError(f"{root / 'manifest.json'}: holds no run configuration; was it edited?")
    return manifest.config.model_copy(update={"out": root})


def task_of(name: str, saved: TaskEntry) -> Task:
    """The current task file when it still loads (the point of a rescore), else the snapshot in the manifest."""
    try:
        return load_task(name)
    except InputError:
        if saved.spec is None:
            raise
        return Task(saved.spec, None, name.partition(":")[2] or None)


def rescore(root: Path, *, rescue: bool | None = None, allow_code: bool = False) -> tuple[RunSummary, RunStore]:
    """Re-judge every record with the current extractor and answer specs; no request is sent.

    `allow_code` is this rescore's own permission to run a code task's programs again: the run's manifest may say
    it allowed them, but the user who rescores (maybe later, maybe someone else) has to say so again.
    Writes rescore/records.jsonl and rescore/summary.json beside the original ones.
    """
    store = RunStore(root)
    manifest = store.manifest()
    if manifest is None:
        raise InputError(f"{root}: no manifest.json here; is this a qualeval run directory?")
    config = run_config_of(manifest, root)
    tasks = {name: task_of(name, saved) for name, saved in manifest.tasks.items()}
    use_rescue = config.rescue if rescue is None else rescue
    # refused before anything is written, as a run is: a refusal must not leave a partial rescore behind
    check_code_allowed(list(tasks.values()), allow_code)
    out = RunStore(root / "rescore")

    def rejudged() -> Iterator[bytes]:
        for record in store.records():
            task = tasks.get(record.task)
            if task is not None:
                yield _rejudged(task, record, use_rescue, allow_code=allow_code).model_dump_json().encode()

    out.write_lines("records.jsonl", rejudged())  # streamed: a rescore stays flat in memory
    return write_summary(out, config, list(tasks.values()), manifest, series=root, rescored=True), out


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
    )


def _rejudged(task: Task, record: Record, rescue: bool, *, allow_code: bool) -> Record:
    """The record judged again by the current rules; what was sent and what came back stay as they were."""
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
    verdict = decide(task, sample, done, record.constraint, rescue=rescue, grade=record.grade, allow_code=allow_code)
    return record.model_copy(
        update={
            "extraction": verdict.extraction,
            "score": verdict.score,
            "naive_correct": verdict.naive_correct,
            "rescue": verdict.rescue,
            "rescue_correct": verdict.rescue_correct,
            "constraint": verdict.constraint or record.constraint,
            "status": verdict.status or status,
        }
    )


def _message(role: str, content: object) -> Message:
    text = content if isinstance(content, str) else "" if content is None else str(content)
    return Message.model_validate({"role": role, "content": text})  # the caller keeps the roles a Message takes
