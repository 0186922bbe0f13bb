"""lm-eval's own task functions, imported as lm-eval imports them and wrapped for the roles qualeval gives them.

`!function utils.process_docs` in `<tree>/gsm8k/x.yaml` is attribute `process_docs` of `<tree>/gsm8k/utils.py`
(lm-eval resolves the module next to the YAML file; a dotted `lm_eval.tasks.a.b` names a module of the tree).
The module must lie inside the installed tree: the rule that lets the tag through also bounds what it may load.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from qualeval.errors import InputError
from qualeval.tasks.lmeval.files import FunctionRef, tasks_root

__all__ = ["documents_function", "first_line", "module_file", "resolve_function"]

_modules: dict[Path, ModuleType | InputError] = {}
"""Loaded modules, and the failures, by file: a module shared by hundreds of tasks is executed once."""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:160]}" if text else type(exc).__name__


def module_file(ref: FunctionRef) -> Path:
    """The file holding a reference's module; InputError when it is not a file of the installed tree."""
    root = tasks_root(ref.name)
    module = ref.name.rpartition(".")[0]
    candidates = [ref.folder / f"{module.replace('.', '/')}.py"]
    if module.startswith("lm_eval.tasks."):
        candidates.append(root / f"{module.removeprefix('lm_eval.tasks.').replace('.', '/')}.py")
    for path in candidates:
        real = path.resolve()
        if real.is_file() and real.is_relative_to(root):
            return real
    raise InputError(f"{ref.where}: !function {ref.name}: no module {module} in lm-eval's task tree ({root})")


def _load(path: Path, ref: FunctionRef) -> ModuleType:
    known = _modules.get(path)
    if isinstance(known, ModuleType):
        return known
    if known is not None:
        raise known
    root = tasks_root(ref.name)
    # lm-eval's own module name for the file, so the tree's modules that import each other meet the same one
    name = "lm_eval.tasks." + ".".join(path.relative_to(root).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"{ref.where}: !function {ref.name}: {path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a module of the tree failing at import is that task's problem, told in one line
        sys.modules.pop(name, None)
        missing = exc.name if isinstance(exc, ImportError) else None
        why = f"{path.name} needs the module '{missing}', which is not installed" if missing else None
        why = why or f"importing {path} failed: {first_line(exc)}"
        error = _modules[path] = InputError(f"{ref.where}: !function {ref.name}: {why}")
        raise error from None
    _modules[path] = module
    return module


def resolve_function(ref: FunctionRef) -> Callable[..., Any]:
    """The callable a reference names, imported (once per module) from the installed tree."""
    module = _load(module_file(ref), ref)
    value = getattr(module, ref.attr, None)
    if not callable(value):
        raise InputError(f"{ref.where}: !function {ref.name}: the module has no function '{ref.attr}'")
    return value


def documents_function(ref: FunctionRef) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """lm-eval's `process_docs` (a datasets.Dataset in, one out) as documents in, documents out."""
    function = resolve_function(ref)

    def process(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        try:
            import datasets
        except ImportError:
            raise InputError(f"{ref.where}: process_docs {ref.name} needs the 'datasets' package") from None
        try:
            table = datasets.Dataset.from_list(docs)
        except Exception as exc:  # pyarrow's own hierarchy: documents whose fields change type
            raise InputError(
                f"{ref.where}: process_docs {ref.name}: the documents do not make one table ({first_line(exc)})"
            ) from None
        try:
            return [dict(doc) for doc in function(table)]
        except Exception as exc:  # lm-eval's code on the user's documents: its failure, in one line
            raise InputError(f"{ref.where}: process_docs {ref.name} failed: {first_line(exc)}") from None

    return process
