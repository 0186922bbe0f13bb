"""A loaded task: its spec, where it came from, and which of its subsets runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qualeval.tasks.spec import TaskSpec

__all__ = ["Task"]


@dataclass(frozen=True, slots=True)
class Task:
    spec: TaskSpec
    path: Path | None
    selector: str | None = None
    """The part after ':' in `mmlu:stem`: a subset or a group of subsets."""

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
