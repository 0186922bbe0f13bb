"""The folders qualeval ships as data (reasoning formats, tasks, run profiles and workloads, examples): inside the
wheel under `qualeval/_data/`, and at the top of a source checkout or editable install."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["shipped"]


def shipped(folder: str) -> Path:
    """`parsers`, `tasks`, `configs`, `configs/workloads` or `examples`, wherever this install keeps it."""
    packaged = resources.files("qualeval") / "_data" / folder
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / folder
