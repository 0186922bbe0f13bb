"""Tasks: YAML task files, their datasets, and the samples they render (a `Sample`, a task's item)."""

from qualeval.tasks.load import Task, builtin_tasks, load_task, parse_task
from qualeval.tasks.sample import Sample
from qualeval.tasks.samples import build_samples

__all__ = ["Sample", "Task", "build_samples", "builtin_tasks", "load_task", "parse_task"]
