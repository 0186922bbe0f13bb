"""Find and parse task files: built-in names (`gsm8k`, `mmlu:stem`), paths, and `lm_eval:NAME`."""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from qualeval._shipped import shipped
from qualeval.errors import InputError, validation_problem, yaml_loader
from qualeval.records import SubsetSpec, TaskSpec
from qualeval.tasks.task import Task

__all__ = ["Task", "builtin_tasks", "load_task", "load_tasks", "parse_task"]


def builtin_dir() -> Path:
    return shipped("tasks")


@cache
def builtin_tasks() -> dict[str, Path]:
    return {p.stem: p for p in sorted(builtin_dir().glob("*.yaml"))}


def load_tasks(ref: str) -> list[Task]:
    """The tasks one reference stands for: `lm_eval:GROUP` is its tasks; any other reference is one task."""
    if ref.startswith("lm_eval:"):
        from qualeval.tasks.lmeval import import_lm_eval_tasks

        return import_lm_eval_tasks(ref.removeprefix("lm_eval:"))
    return [load_task(ref)]


def load_task(ref: str) -> Task:
    """A task by built-in name (optionally `name:subset` or `name:group`), YAML path, or `lm_eval:NAME`."""
    if ref.startswith("lm_eval:"):
        from qualeval.tasks.lmeval import import_lm_eval_task

        return import_lm_eval_task(ref.removeprefix("lm_eval:"))
    if ref.endswith((".yaml", ".yml")):
        path = Path(ref)
        return Task(parse_task(path), path)
    base, _, selector = ref.partition(":")
    builtin = builtin_tasks().get(base)
    if builtin is None:
        known = ", ".join(builtin_tasks())
        raise InputError(f"unknown task '{base}': expected one of {known}, a .yaml path, or lm_eval:NAME")
    spec = parse_task(builtin)
    if selector:
        sub = spec.subsets
        if sub is None:
            raise InputError(f"task '{base}' has no subsets, so '{ref}' means nothing")
        if selector not in sub.values and selector not in sub.groups:
            raise InputError(f"task '{base}' has no {sub.label} or group '{selector}'{_known(selector, sub)}")
    return Task(spec, builtin, selector or None)


def _known(selector: str, sub: SubsetSpec) -> str:
    """The nearest names to a misspelt subset, then the groups (a task's subsets may be too many to list)."""
    near = difflib.get_close_matches(selector, [*sub.values, *sub.groups], n=3, cutoff=0.6)
    if near:
        said = f"did you mean {' or '.join(repr(n) for n in near)}? "
    else:
        said = f"one of {', '.join(sub.values)}; " if len(sub.values) <= 12 else ""
    return f" ({said}groups: {', '.join(sub.groups) or 'none'})"


def _node_at(node: yaml.Node, loc: tuple[Any, ...]) -> yaml.Node:
    """The YAML node an error location points at (or the nearest existing parent)."""
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if str(k.value) == str(key)), None)
            if match is None:
                return node
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            return node
    return node


def parse_task(path: Path, text: str | None = None) -> TaskSpec:
    """Parse and validate a task file; every problem is one line naming the file, line and field."""
    try:
        text = path.read_bytes().decode("utf-8") if text is None else text
    except OSError as exc:
        raise InputError(f"{path}: cannot read task file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: task file is not UTF-8 text (byte {exc.start})") from None
    try:
        loader = yaml_loader()  # YAML 1.2's numbers: `1e-5` is a number, never text
        root = yaml.compose(text, Loader=loader)
        data = yaml.load(text, Loader=loader)
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 0
        tag = (exc.problem or "").rsplit("tag", 1)[-1].strip(" '")
        raise InputError(
            f"{path}:{line}: YAML tag {tag or '(unknown)'} is not allowed: task files cannot run code"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise InputError(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict) or root is None:
        raise InputError(f"{path}:1: a task file must be a mapping of fields")
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        problem = validation_problem(exc)
        line = _node_at(root, problem.loc).start_mark.line + 1
        raise InputError(f"{path}:{line}: field '{problem.field or '(task)'}': {problem.message}") from None
