"""Tasks: YAML task files, their datasets, and the samples they render (a `Sample`, a task's item)."""

from qualeval.tasks.load import Task, builtin_dir, builtin_tasks, load_task, load_tasks, parse_task
from qualeval.tasks.prompts import warn_once
from qualeval.tasks.sample import Sample
from qualeval.tasks.samples import build_samples, sample_from_doc
from qualeval.tasks.sources import jsonl_objects

__all__ = [
    "Sample",
    "Task",
    "build_samples",
    "builtin_dir",
    "builtin_tasks",
    "jsonl_objects",
    "load_task",
    "load_tasks",
    "parse_task",
    "sample_from_doc",
    "warn_once",
]
