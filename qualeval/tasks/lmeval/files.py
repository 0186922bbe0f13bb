"""lm-eval task YAML as data: `include:` chains, and `!function` tags kept as references, never run here.

A tag is kept only in a file inside the installed lm-eval package's own `tasks` tree; anywhere else it is refused
(the rule is in the package docstring). Parsed files are cached: the installed tree has some 14,000 of them, many
including the same templates.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from qualeval.errors import InputError

__all__ = ["FunctionRef", "read_config", "tasks_root", "trusted"]

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser: 10x on the whole tree


@dataclass(frozen=True, slots=True)
class FunctionRef:
    """`!function module.attr` in a file of lm-eval's installed tree: lm-eval's own code, resolved by its role."""

    name: str
    """As written: `utils.process_docs`; the module is found relative to `folder`, as lm-eval finds it."""
    folder: Path
    where: str
    """`file:line`, for messages."""

    @property
    def attr(self) -> str:
        return self.name.rpartition(".")[2]


@cache
def _installed_root() -> Path | None:
    # find_spec locates the package without importing it (its import pulls in half of lm-eval)
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or spec.origin is None:
        return None
    return (Path(spec.origin).parent / "tasks").resolve()


def tasks_root(name: str) -> Path:
    """The installed lm-eval's task tree; `name` is what the user asked for, for the message."""
    root = _installed_root()
    if root is None:
        raise InputError(
            f'lm_eval:{name}: lm-eval is not installed (pip install "qualeval[lm-eval]"), '
            "or give lm_eval:path/to/task.yaml"
        )
    return root


def _real(path: Path) -> Path:
    # the folder resolves once for all its files; only a file that is itself a link needs its own resolve
    return path.resolve() if path.is_symlink() else path


def trusted(path: Path) -> bool:
    """Whether a file's `!function` tags name library code: its real path lies in the installed tree."""
    return _trusted_folder(_real(path).parent)


@cache
def _trusted_folder(folder: Path) -> bool:
    # by folder: resolving each of the tree's 14,000 paths would be most of the cost of reading it
    root = _installed_root()
    return root is not None and folder.resolve().is_relative_to(root)


class _Loader(_Base):
    """Safe loading, plus `!function` as a FunctionRef where the file is trusted; every other tag is refused."""

    origin: Path
    folder: Path
    """Where lm-eval looks for a tag's module: the real file's folder."""
    allows_code: bool


def _function(loader: _Loader, node: yaml.Node) -> FunctionRef:
    where = f"{loader.origin}:{node.start_mark.line + 1}"
    name = str(loader.construct_scalar(node))
    if not loader.allows_code:
        raise InputError(
            f"{where}: YAML tag !function runs code ({name}); qualeval runs lm-eval's functions only from the "
            f"installed lm-eval's own task tree ({_installed_root() or 'lm-eval is not installed'}), "
            "never from another file"
        )
    if "." not in name:
        raise InputError(f"{where}: !function {name}: expected module.attribute (utils.process_docs)")
    return FunctionRef(name, loader.folder, where)


def _other_tag(loader: _Loader, suffix: str, node: yaml.Node) -> Any:
    raise InputError(
        f"{loader.origin}:{node.start_mark.line + 1}: YAML tag !{suffix} is not something an lm-eval task "
        "file holds; qualeval reads data and !function only"
    )


_Loader.add_constructor("!function", _function)
_Loader.add_multi_constructor("!", _other_tag)


@cache
def _parse(path: Path) -> dict[str, Any]:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read lm-eval task ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    loader = _Loader(text)
    loader.origin, loader.folder, loader.allows_code = path, _real(path).parent, trusted(path)
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f":{mark.line + 1}" if mark else ""
        raise InputError(f"{path}{at}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise InputError(f"{path}: an lm-eval task must be a mapping")
    return data


def read_config(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A file's configuration with its `include:` chain merged in (later includes, then the file, win).

    The result shares nested values with the cache: callers build new values, never change these."""
    path = Path(os.path.normpath(path))  # one cache entry per file, however an include spells its path
    if path in seen:
        raise InputError(f"{path}: 'include' loops back to itself")
    data = dict(_parse(path))
    include = data.pop("include", None)
    if not include:
        return data
    merged: dict[str, Any] = {}
    for name in include if isinstance(include, list) else [include]:
        base = read_config(path.parent / str(name), (*seen, path))
        base.pop("task_list", None)  # lm-eval: a task_list defines tasks of the including file only
        merged.update(base)
    return {**merged, **data}
