"""Tasks: YAML task files, their datasets, and the samples they render (a `Sample`, a task's item)."""

from qualeval.tasks.bfcl_calls import parse_call
from qualeval.tasks.bfcl_schema import openai_name
from qualeval.tasks.choices import LETTERS, Kinds, choice_index, kinds_of
from qualeval.tasks.load import Task, builtin_dir, builtin_tasks, load_task, load_tasks, parse_task
from qualeval.tasks.prompts import warn_once
from qualeval.tasks.sample import Sample
from qualeval.tasks.samples import build_samples, sample_from_doc
from qualeval.tasks.sources import jsonl_objects
from qualeval.tasks.toolvalues import call_problem, gold_problem
from qualeval.tasks.wheels import data_root, read_member

__all__ = [
    "LETTERS",
    "Kinds",
    "Sample",
    "Task",
    "build_samples",
    "builtin_dir",
    "builtin_tasks",
    "call_problem",
    "choice_index",
    "data_root",
    "gold_problem",
    "jsonl_objects",
    "kinds_of",
    "load_task",
    "load_tasks",
    "openai_name",
    "parse_call",
    "parse_task",
    "read_member",
    "sample_from_doc",
    "warn_once",
]
