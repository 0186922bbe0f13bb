"""A multi-turn task's API classes (BFCL's `func_source_code`), loaded in-process from the source files in its
wheel (or the folder --data gives): never installed, and without the package's own `__init__` or dependency set.

Each module is compiled into a fresh module object that is never registered in `sys.modules`; its imports of
its sibling modules (`from <package>.long_context import ...`) are served from the same wheel, any other import
is Python's (the stdlib, and mpmath for the math class). What comes back is a value the caller keeps: nothing
here is cached between calls."""

from __future__ import annotations

import builtins
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qualeval.errors import InputError
from qualeval.records import EnvironmentSpec, TaskSpec, WheelSpec
from qualeval.tasks import data_root, read_member

__all__ = ["ClassSource", "bfcl_classes"]


@dataclass(frozen=True, slots=True)
class ClassSource:
    """The API classes an episode runs against, by class name, and what the task says about them."""

    classes: Mapping[str, type]
    environment: EnvironmentSpec
    where: Mapping[str, str] = field(default_factory=dict)
    """Class name -> the file it was loaded from (for messages)."""

    def cls(self, name: str) -> type:
        try:
            return self.classes[name]
        except KeyError:
            known = ", ".join(sorted(self.classes))
            raise InputError(f"API class '{name}' is not one of the task's environment ({known})") from None


def _code_root(wheel: WheelSpec, data: Path | None, code: str) -> Path:
    """The wheel, or the modules' folder in an extracted one: --data may be the folder holding `bfcl_eval/`,
    `bfcl_eval/` itself, or the data folder under it (`bfcl_eval/data`), as a single-turn task takes it."""
    root = data_root(wheel, data)
    if root.is_file():
        return root
    top = next((up for up in (root, *root.parents[:3]) if (up / code).is_dir()), root)
    return top / code  # read_member reads a folder's files as they are named, the wheel's under `code`


class _Loader:
    """Loads one task's modules, each once, serving their imports of one another from the same source."""

    def __init__(self, wheel: WheelSpec, root: Path, environment: EnvironmentSpec) -> None:
        self.code = wheel.model_copy(update={"root": environment.code})
        self.root = root
        self.package = environment.package
        self.modules: dict[str, types.ModuleType] = {}
        self.labels: dict[str, str] = {}

    def module(self, stem: str) -> types.ModuleType:
        if stem in self.modules:
            return self.modules[stem]
        raw, label = read_member(self.root, self.code, f"{stem}.py")
        module = types.ModuleType(f"{self.package}.{stem}")
        module.__file__ = label
        namespace = dict(vars(builtins))
        namespace["__import__"] = self._importer(label)
        module.__dict__["__builtins__"] = namespace
        self.modules[stem] = module  # before running it: a module importing itself back finds it
        try:
            exec(compile(raw, label, "exec"), module.__dict__)  # the wheel's own source, pinned by sha256
        except InputError:
            raise
        except Exception as exc:
            del self.modules[stem]
            raise InputError(f"{label}: cannot load ({type(exc).__name__}: {exc})") from None
        self.labels[stem] = label
        return module

    def _importer(self, label: str) -> Callable[..., Any]:
        prefix = self.package + "."

        def load(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
            if level == 0 and name.startswith(prefix) and fromlist:
                return self.module(name.removeprefix(prefix))
            if level or name == self.package or name.startswith(prefix):
                raise ImportError(f"{label}: imports {name}, which is not served from the wheel")
            return builtins.__import__(name, globals, locals, fromlist, level)

        return load


def bfcl_classes(spec: TaskSpec, data: Path | None = None) -> ClassSource:
    """The task's API classes, loaded from its wheel (or --data); an InputError naming the file of a class that
    fails to load (a missing module, a missing dependency, a damaged wheel)."""
    if spec.environment is None or spec.wheel is None:
        raise InputError(f"task {spec.name}: no `environment` and `wheel` naming its API classes")
    environment = spec.environment
    loader = _Loader(spec.wheel, _code_root(spec.wheel, data, environment.code), environment)
    classes: dict[str, type] = {}
    where: dict[str, str] = {}
    for name, file in environment.modules.items():
        module = loader.module(file.removesuffix(".py"))
        found = getattr(module, name, None)
        if not isinstance(found, type):
            raise InputError(f"{loader.labels[file.removesuffix('.py')]}: defines no class {name}")
        classes[name] = found
        where[name] = loader.labels[file.removesuffix(".py")]
    return ClassSource(classes, environment, where)
