"""Checks of a run's tasks against its options, before any request is sent."""

from __future__ import annotations

from qualeval.config import RunConfig
from qualeval.errors import InputError
from qualeval.scorers.humaneval import REFUSAL
from qualeval.tasks.prompts import warn_once
from qualeval.tasks.task import Task

__all__ = ["check_code_allowed", "check_run_tasks"]


def check_code_allowed(tasks: list[Task], allowed: bool) -> None:
    """A code-scored task needs --allow-code-execution: refused, with the reason, before anything is sent or
    written."""
    code = [t.name for t in tasks if t.spec.scorer.kind == "code"]
    if code and not allowed:
        raise InputError(f"task {code[0]} {REFUSAL}")


def check_run_tasks(config: RunConfig, tasks: list[Task]) -> None:
    """The code permission (before the endpoint is contacted); `--data TASK=PATH` for a task the run does not
    have is a warning, since it reads nothing."""
    check_code_allowed(tasks, config.allow_code_execution)
    known = set(config.tasks) | {name for t in tasks for name in (t.name, t.name.split(":", 1)[0], t.spec.name)}
    for name in config.data:
        if name != "*" and name not in known:
            path = config.data[name]
            warn_once(f"data:{name}", f"--data {name}={path}: no task '{name}' in this run, so it is not read")
