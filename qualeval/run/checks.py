"""Checks of a run's tasks against its options, before any request is sent."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from qualeval.errors import InputError, QualevalNote, QualevalWarning
from qualeval.records import ProbeResult, RunConfig
from qualeval.run.pipeline import sampling_for
from qualeval.run.probetools import broken_for
from qualeval.run.probing import is_simulated
from qualeval.scoring import REFUSAL, runs_code
from qualeval.tasks import Sample, Task, builtin_dir

__all__ = [
    "KEYLESS",
    "check_code_allowed",
    "check_not_episodes",
    "check_published",
    "check_run_tasks",
    "check_task_names",
    "check_warmup",
    "data_keys",
    "data_task",
    "keyless",
    "limit_per_subject_warnings",
    "one_task_data",
    "run_notes",
    "sampling_warnings",
    "unread_data_error",
    "warn_unlisted",
]


def check_code_allowed(tasks: list[Task], allowed: bool) -> None:
    """A code-scored task needs --allow-code-execution: refused, with the reason, before anything is sent or
    written."""
    code = [t.name for t in tasks if runs_code(t.spec.scorer.kind)]
    if code and not allowed:
        raise InputError(f"task {code[0]} {REFUSAL}")


def sampling_warnings(config: RunConfig, tasks: list[Task]) -> list[str]:
    """Sampling a model card advises against, or that makes repeated samples pointless: one line each."""
    lines = []
    for task in tasks:
        thinking = config.thinking if config.thinking is not None else task.spec.generation.thinking
        temperature = config.temperature
        if temperature is None:
            temperature = sampling_for(task, thinking, config.sampling).get("temperature")
        if temperature != 0:
            continue
        if thinking:
            lines.append(
                f"{task.name}: thinking on at temperature 0: the Qwen3 and DeepSeek-R1 model cards advise against "
                "greedy decoding in thinking mode (it can repeat itself endlessly); use the cards' sampling with "
                "--config qwen3-sampling or --config deepseek-r1-sampling, or set --temperature"
            )
        if config.samples_per_item > 1:
            lines.append(
                f"{task.name}: --samples-per-item {config.samples_per_item} at temperature 0: a greedy model gives "
                "the same answer every time, so maj@K and pass@K say nothing more; set --temperature"
            )
    return lines


def _names(task: Task) -> tuple[str, str]:
    return task.name, task.name.split(":", 1)[0]


def data_keys(config: RunConfig, tasks: list[Task]) -> list[str]:
    """The TASK of `--data TASK=PATH` that reaches a task of this run (RunConfig.data_for): what --task said
    (`lm_eval:gsm8k`, `my.yaml`), each task's name (`mmlu:stem`) and its base name (`mmlu`)."""
    return list(dict.fromkeys([*config.tasks, *(name for t in tasks for name in _names(t))]))


def one_task_data(data: Path | None, ref: str, task: Task) -> Path | None:
    """`--data` of a command about one task (`score`, `tasks show`): PATH, or TASK=PATH as `run` takes it, TASK
    naming this task; an existing file or folder is a PATH even with `=` in its name."""
    if data is None or data.exists():
        return data
    if "=" not in str(data):  # a path that is not there would be passed over, the task read from elsewhere unsaid
        raise InputError(f"--data {data}: no such file or folder")
    name, _, path = str(data).partition("=")
    keys = list(dict.fromkeys((ref, *_names(task))))
    if name not in keys:
        raise InputError(f"--data {data}: '{name}' is not this task (its keys: {', '.join(keys)}; or PATH alone)")
    if not Path(path).exists():
        raise InputError(f"--data {data}: no such file or folder: {path}")
    return Path(path)


def data_task(task: Task, data: Path | None, given: str) -> Task:
    """The task as it reads `data` (`given` is the --data value, for messages). A task's inline samples would
    otherwise win over the user's file unsaid: the file's documents take their place (the test split, as a
    single file is for every task). A generated task takes no data: refused rather than passed over."""
    if data is None:
        return task
    if not data.exists():
        raise InputError(f"--data {given}: no such file or folder")
    spec = task.spec
    if spec.generator:
        raise InputError(f"--data {given}: task {task.name} generates its items ({spec.generator}) and reads no data")
    if not spec.samples:
        return task
    if not data.is_file():
        raise InputError(
            f"--data {given}: task {task.name} reads one file in place of its bundled samples, not a folder"
        )
    fields = spec.model_dump() | {"samples": (), "data_files": {spec.test_split: data.name}}
    return replace(task, spec=type(spec).model_validate(fields))


def _unread(config: RunConfig, tasks: list[Task]) -> list[str]:
    keys = set(data_keys(config, tasks))
    return [name for name in config.data if name != "*" and name not in keys]


def unread_data_error(exc: InputError, config: RunConfig, tasks: list[Task]) -> InputError:
    """A task that got no --data failed to load while a --data key reached no task: most likely the key was
    meant for it, so the error says which keys this run takes instead of leaving "no --data given" to puzzle."""
    unread = _unread(config, tasks)
    if not unread:
        return exc
    keys, name = ", ".join(data_keys(config, tasks)), unread[0]
    return InputError(f"{exc}; --data {name}={config.data[name]} names no task of this run (its keys: {keys})")


def _source(task: Task) -> str:
    builtin = task.path is not None and task.path.parent == builtin_dir()
    return f"the built-in {task.spec.name} ({task.where})" if builtin else task.where


def check_published(config: RunConfig, tasks: list[Task]) -> None:
    """`--published TASK=FIGURE` for a task the run does not have would be shown nowhere: refused before anything
    is sent, naming the run's tasks (a figure is matched to a task's name, or its base name: `mmlu` for
    `mmlu:stem`)."""
    names = list(dict.fromkeys(name for task in tasks for name in _names(task)))
    for key in config.published:
        if key not in names:
            raise InputError(
                f"--published {key}: no task '{key}' in this run (its tasks: {', '.join(t.name for t in tasks)})"
            )


def check_task_names(tasks: list[Task]) -> None:
    """Two different tasks under one name would share their records and their line of the summary: refused,
    naming both sources. The same task given twice (equal specs) is left to the run's own message."""
    seen: dict[str, Task] = {}
    for task in tasks:
        other = seen.setdefault(task.name, task)
        if other is not task and other.spec != task.spec:
            raise InputError(
                f"--task: two different tasks are named '{task.name}': {_source(other)} and {_source(task)}; "
                "records and the summary know a task by its name, so give one of them another `name:` in a task "
                "file (for an lm-eval task, a file that says `include:` of its file and its own `task:` name)"
            )


def limit_per_subject_warnings(config: RunConfig, tasks: list[Task]) -> list[str]:
    """`--limit-per-subject` caps the subjects of tasks that have them (MMLU's); on the others it does nothing. A
    run where no task has subjects would run in full while asked to run a few of each: refused."""
    if config.limit_per_subject is None:
        return []
    whole = [t.name for t in tasks if t.spec.subsets is None]
    if whole and len(whole) == len(tasks):
        raise InputError(
            f"--limit-per-subject {config.limit_per_subject}: no task of this run has subjects ({', '.join(whole)}); "
            "--limit caps each task's samples (an lm-eval MMLU task is one subject)"
        )
    return [f"--limit-per-subject: {name} has no subjects, so it runs every sample (--limit caps it)" for name in whole]


def check_run_tasks(config: RunConfig, tasks: list[Task]) -> None:
    """The code permission (before the endpoint is contacted); two different tasks sharing a name, a published
    figure for no task of the run, and `--limit-per-subject` where no task has subjects, are errors.
    `--data TASK=PATH` for a task the run does not have is a warning naming the keys it does take, since it reads
    nothing (a task that then lacks its data is an error saying so: unread_data_error); so are sampling a model
    card advises against and `--limit-per-subject` on a task without subjects."""
    check_code_allowed(tasks, config.allow_code_execution)
    check_task_names(tasks)
    if not config.workload:  # a workload's own task is checked once shaping has made it
        check_published(config, tasks)
    # warned by every run, never once per process: a second run in the same process is owed its own warnings (the
    # CLI shows every one; a library user's warning filters decide what a notebook shows)
    lines = [*limit_per_subject_warnings(config, tasks), *sampling_warnings(config, tasks)]
    unread = _unread(config, tasks)
    keys = ", ".join(data_keys(config, tasks)) if unread else ""  # named only in a warning
    for name in unread:
        lines.append(
            f"--data {name}={config.data[name]}: no task '{name}' in this run, so it is not read (keys: {keys})"
        )
    for line in lines:
        warnings.warn(line, QualevalWarning, stacklevel=2)


def warn_unlisted(model: str, models: dict[str, Any] | None, scored: bool = True) -> None:
    """A model the server does not list may be refused, or (llama.cpp) silently served by another one. A
    reference server without an answer key is said only to a run that scores something (`scored`): a
    workload's synthetic prompts have no accuracy to be 0."""
    listed = [str(m.get("id")) for m in (models or {}).get("data") or () if isinstance(m, dict)]
    if listed and model not in listed:
        shown = ", ".join(listed[:5]) + (" ..." if len(listed) > 5 else "")
        warnings.warn(f"model '{model}' is not among the server's models ({shown})", QualevalWarning, stacklevel=2)
    if scored and keyless(models):
        warnings.warn(KEYLESS, QualevalWarning, stacklevel=2)


KEYLESS = (
    "the reference server has no answer key (serve-sim --answers FILE or --task NAME): every answer it gives is a "
    "refusal, so every accuracy measured here is 0"
)


def run_notes(
    models: dict[str, Any] | None,
    found: ProbeResult | None,
    tooled: Mapping[str, Iterable[str | Mapping[str, Any] | None]],
    scored: bool,
) -> list[str]:
    """The notes a run's summary opens with, from what its manifest keeps (the server's /models answer, the
    probe) and the tool_choice its tool tasks send: a live run and a rescore of it say the same."""
    return ([KEYLESS] if scored and keyless(models) else []) + broken_for(tooled, found)


def keyless(models: dict[str, Any] | None) -> bool:
    """A simulated server that says it was given no questions and answers."""
    data = (models or {}).get("data") or ()
    return is_simulated(models) and any(isinstance(m, dict) and m.get("answer_key") is False for m in data)


def check_not_episodes(task: Task) -> None:
    """`qualeval score` refuses a task whose items are episodes: a response file holds one reply an item, never
    the loop of requests whose calls an episode executes."""
    if task.spec.environment is not None:
        raise InputError(
            f"{task.where}: its items are episodes (an agent's loop of requests, its calls executed): qualeval score "
            "cannot judge responses made elsewhere; run it with qualeval run, and rescore that run's directory"
        )


def check_warmup(config: RunConfig, work: list[tuple[Task, list[Sample]]]) -> None:
    """A --warmup that takes every request of a task leaves it nothing to time: refused when asked for, said
    when it is the default's one request (a --limit 1 run, whose speed figures are then none)."""
    if not config.warmup:
        return
    sent = 0
    for task, samples in work:
        count = len(samples) * config.samples_per_item
        sent += count
        if sent > config.warmup:
            return  # the warm-up ends inside this task: it and every task after it have measured requests
        if "warmup" in config.model_fields_set:
            raise InputError(
                f"--warmup {config.warmup}: task {task.name}'s {count} requests per level would all be warm-ups, "
                "so none would be measured; give a --warmup below the run's requests per level, or a larger --limit"
            )
        warnings.warn(
            f"{task.name}: its {count} request per level is the warm-up (--warmup {config.warmup}), so no speed "
            "figure is measured; --warmup 0 times it",
            QualevalNote,
            stacklevel=3,
        )
