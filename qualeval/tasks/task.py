"""A loaded task: its spec, where it came from, which of its subsets runs, and any library code it renders with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qualeval.records import TaskSpec

__all__ = ["Doc", "Task", "TaskCode"]

Doc = dict[str, Any]
"""One document of a task's dataset, as read (a JSON object, a CSV row, a hub record): its fields are the task's."""


@dataclass(frozen=True, slots=True)
class TaskCode:
    """Python functions of the installed lm-eval's task tree that an imported task renders with.

    Held in memory only: the spec, which is persisted, stays data and names these functions in its description.
    """

    keys: Mapping[str, Callable[[Doc], Any]] = field(default_factory=dict)
    """Spec key (`doc_to_text`, `fewshot_doc_to_target`...) -> the function that computes it from a document."""
    process_docs: Callable[[list[Doc]], list[Doc]] | None = None
    """Applied to every split read from the hub or --data, as lm-eval applies it (not to inline samples); for
    lm-eval's MMLU tasks, first the conversion of the original release's CSV rows to the hub's documents."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Spec key (and `process_docs`) -> the function's name in lm-eval's tree (`utils.doc_to_text`), for messages."""


@dataclass(frozen=True, slots=True)
class Task:
    spec: TaskSpec
    path: Path | None
    selector: str | None = None
    """The part after ':' in `mmlu:stem`: a subset or a group of subsets."""
    code: TaskCode | None = None

    @property
    def name(self) -> str:
        return f"{self.spec.name}:{self.selector}" if self.selector else self.spec.name

    @property
    def where(self) -> str:
        return str(self.path) if self.path else f"task {self.spec.name}"

    def subsets(self) -> list[str | None]:
        """The subsets this task runs, in order; [None] for a task without subsets."""
        sub = self.spec.subsets
        if sub is None:
            return [None]
        if self.selector is None:
            return list(sub.values)
        if self.selector in sub.groups:
            return list(sub.groups[self.selector])
        return [self.selector]
