"""Names of the installed lm-eval tree -> task configurations: tasks, groups (a group is its tasks) and tags.

A task or group is found by its own top-level `task:` / `group:` line (quoted or not: MMLU's files say
`"task": "mmlu_anatomy"`), read as text, which is quick; a tag (lm-eval's other kind of group, named by its
members' `tag:` keys, often in an included template) needs every file parsed, so only a name not found by its
line costs that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from qualeval.errors import InputError
from qualeval.tasks.lmeval.files import read_config

__all__ = ["Found", "resolve", "resolve_file"]

_OWN_LINE = re.compile(r"""^["']?(task|group)["']?[ \t]*:[ \t]*["']?([^"'\s#\[\]{},]+)["']?[ \t]*(?:#.*)?$""", re.M)
_GROUP_KEYS = frozenset({"group", "group_alias", "task", "aggregate_metric_list", "metadata"})
"""What a group file says about the group itself; its other keys are defaults of its tasks (lm-eval's rule)."""


@dataclass(frozen=True, slots=True)
class Found:
    """One task to import: its merged configuration and the file that defines it."""

    cfg: dict[str, Any]
    path: Path


@cache
def _files(root: Path) -> list[Path]:
    # lm-eval's own order (sorted posix paths), so a duplicated name resolves to the file lm-eval would take
    return sorted((p for p in root.rglob("*.yaml") if "__pycache__" not in p.parts), key=lambda p: p.as_posix())


@cache
def _lines(root: Path) -> dict[str, tuple[str, Path]]:
    """Name -> (kind, file) from each file's own top-level line; the first file wins."""
    out: dict[str, tuple[str, Path]] = {}
    for path in _files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for kind, name in _OWN_LINE.findall(text):
            out.setdefault(name, (kind, path))
    return out


@cache
def _parsed(root: Path) -> dict[str, tuple[str, Path | None, dict[str, Any], tuple[str, ...]]]:
    """Every task, group and tag of the tree, as lm-eval indexes them: name -> (kind, file, config, tag members).

    Files that do not parse are left out, as lm-eval leaves them out of its own index."""
    out: dict[str, tuple[str, Path | None, dict[str, Any], tuple[str, ...]]] = {}
    tags: dict[str, list[str]] = {}
    for path in _files(root):
        try:
            cfg = read_config(path)
        except InputError:
            continue
        kind = "group" if "group" in cfg else "task" if isinstance(cfg.get("task"), str) else None
        if kind is None:
            continue
        name = str(cfg[kind])
        if name in out:
            continue
        out[name] = (kind, path, cfg, ())
        for tag in _as_list(cfg.get("tag")) if kind == "task" else []:
            tags.setdefault(str(tag), []).append(name)
    for tag, members in tags.items():
        out.setdefault(tag, ("tag", None, {}, tuple(sorted(members))))
    return out


def _as_list(value: Any) -> list[Any]:
    return [] if value is None else value if isinstance(value, list) else [value]


def _entry(root: Path, name: str) -> tuple[str, Path | None, dict[str, Any], tuple[str, ...]]:
    line = _lines(root).get(name)
    if line is not None:
        kind, path = line
        cfg = read_config(path)
        if ("group" in cfg) == (kind == "group"):  # the line agrees with what the file is
            return kind, path, cfg, ()
    entry = _parsed(root).get(name)
    if entry is None:
        raise InputError(f"lm_eval:{name}: no lm-eval task, group or tag of that name under {root}")
    return entry


def resolve(root: Path, name: str) -> list[Found]:
    """The tasks a name stands for: one task, a group's tasks (through its subgroups), or a tag's tasks."""
    return _unique(_expand(root, name, {}, ()))


def resolve_file(root: Path | None, path: Path) -> list[Found]:
    """The tasks of a YAML file given by path: the task it defines, or a group's tasks."""
    cfg = read_config(path)
    if "group" in cfg:
        return _unique(_group(root, cfg, path, {}, ()))
    return [Found(cfg, path)]


def _unique(found: list[Found]) -> list[Found]:
    # a task reached through two subgroups runs once
    seen: dict[str, Found] = {}
    for item in found:
        seen.setdefault(str(item.cfg.get("task")), item)
    return list(seen.values())


def _expand(root: Path, name: str, overrides: dict[str, Any], trail: tuple[str, ...]) -> list[Found]:
    if name in trail:
        raise InputError(f"lm_eval:{trail[0]}: group '{name}' contains itself")
    kind, path, cfg, members = _entry(root, name)
    if kind == "tag":
        return [f for member in members for f in _expand(root, member, overrides, (*trail, name))]
    assert path is not None  # tasks and groups come from files
    if kind == "group":
        return _group(root, cfg, path, overrides, (*trail, name))
    return [Found({**cfg, **overrides}, path)]


def _group(
    root: Path | None, cfg: dict[str, Any], path: Path, overrides: dict[str, Any], trail: tuple[str, ...]
) -> list[Found]:
    name = str(cfg.get("group"))
    defaults = {**{k: v for k, v in cfg.items() if k not in _GROUP_KEYS}, **overrides}
    out: list[Found] = []
    for item in _as_list(cfg.get("task")):
        if isinstance(item, str):
            out += _member(root, item, path, defaults, (*trail, name))
        elif isinstance(item, dict) and "group" in item:
            if root is not None and _known(root, str(item["group"])):
                rest = {k: v for k, v in item.items() if k != "group"}
                out += _expand(root, str(item["group"]), {**defaults, **rest}, (*trail, name))
            else:  # a subgroup defined in place
                out += _group(root, {**item, "group": f"{name}::{item['group']}"}, path, defaults, (*trail, name))
        elif isinstance(item, dict) and "task" in item:
            out += _member(root, str(item["task"]), path, {**defaults, **item}, (*trail, name))
        else:
            raise InputError(f"{path}: field 'task': group '{name}' lists {str(item)[:60]}, not a task or group")
    return out


def _known(root: Path, name: str) -> bool:
    return name in _lines(root) or name in _parsed(root)


def _member(root: Path | None, name: str, path: Path, overrides: dict[str, Any], trail: tuple[str, ...]) -> list[Found]:
    overrides = {k: v for k, v in overrides.items() if k != "task"}  # the member keeps its own name
    if root is not None and _known(root, name):
        return _expand(root, name, overrides, trail)
    if not {"dataset_path", "include", "doc_to_text"} & overrides.keys():
        where = f"under {root}" if root is not None else "(lm-eval is not installed)"
        raise InputError(f"{path}: field 'task': group '{trail[-1]}' names '{name}', no lm-eval task {where}")
    # a task defined in place, named in the group's namespace as lm-eval names it
    inline = dict(overrides)
    for extra in _as_list(inline.pop("include", None)):
        inline = {**read_config(path.parent / str(extra)), **inline}
    return [Found({**inline, "task": f"{trail[-1]}::{name}"}, path)]
