"""A task's documents from a wheel's files, and a second file joined to them by a key (BFCL's questions and their
possible answers, matched by `id`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qualeval.errors import InputError
from qualeval.records import JoinSpec, TaskSpec
from qualeval.tasks.sources import parse_docs, read_file, read_split
from qualeval.tasks.task import Doc
from qualeval.tasks.wheels import data_root, read_member

__all__ = ["join_docs", "join_local", "read_docs", "read_wheel_split"]


def read_docs(spec: TaskSpec, split: str, *, subset: str | None, data: Path | None, where: str) -> list[Doc]:
    """The documents of one split (and subset): from the task's wheel where it names one, else as
    sources.read_split reads them; joined with the task's second file where it names one."""
    inline = bool(spec.samples or spec.generator)
    if spec.wheel and not inline:
        return read_wheel_split(spec, split, subset, data, where)
    docs = read_split(spec, split, subset=subset, data=data, where=where)
    if spec.join and data is not None and not inline:
        return join_local(spec, docs, subset, data, where)
    return docs


def _joined(join: JoinSpec | None, split: str, spec: TaskSpec, subset: str | None) -> JoinSpec | None:
    """The join that applies to this split and subset: the test split's, of the subsets that have the file."""
    if join is None or split != spec.test_split or (join.subsets and subset not in join.subsets):
        return None
    return join


def read_wheel_split(spec: TaskSpec, split: str, subset: str | None, data: Path | None, where: str) -> list[Doc]:
    """One split's documents from the task's wheel (or the folder --data gives), joined where the task says."""
    assert spec.wheel is not None
    root = data_root(spec.wheel, data)
    pattern = spec.data_files.get(split)
    if pattern is None:
        raise InputError(f"{where}: data_files has no entry for split '{split}'")
    docs, label = _member_docs(spec, root, pattern.replace("{subset}", subset or ""))
    join = _joined(spec.join, split, spec, subset)
    if join is None:
        return docs
    extra, extra_label = _member_docs(spec, root, join.file.replace("{subset}", subset or ""))
    return join_docs(docs, extra, join.key, label, extra_label)


def _member_docs(spec: TaskSpec, root: Path, name: str) -> tuple[list[Doc], str]:
    assert spec.wheel is not None
    raw, label = read_member(root, spec.wheel, name)
    kind = f".{spec.data_format}" if spec.data_format else Path(name).suffix.lower()
    docs = parse_docs(raw, label, kind, spec.columns)
    if not docs:
        raise InputError(f"{label}: no documents in the file")
    return docs, label


def join_local(spec: TaskSpec, docs: list[Doc], subset: str | None, data: Path, where: str) -> list[Doc]:
    """The test split read from a --data folder, joined with the join file beside it."""
    join = _joined(spec.join, spec.test_split, spec, subset)
    if join is None:
        return docs
    if not data.is_dir():
        raise InputError(f"{data}: {where} joins a second file ({join.file}): give the folder holding both")
    path = data / join.file.replace("{subset}", subset or "")
    if not path.exists():
        raise InputError(f"{path}: no such file (the join of {where})")
    pattern = spec.data_files.get(spec.test_split, "")
    label = str(data / pattern.replace("{subset}", subset or ""))
    return join_docs(docs, read_file(path, spec.columns, spec.data_format), join.key, label, str(path))


def _key(doc: Doc, on: str, label: str, index: int) -> Any:
    if on not in doc:
        raise InputError(f"{label}: document {index} has no field '{on}' to join by")
    key = doc[on]
    return key if isinstance(key, (str, int)) else str(key)


def join_docs(docs: list[Doc], extra: list[Doc], on: str, label: str, extra_label: str) -> list[Doc]:
    """Each document with the fields of the one document of `extra` that has the same `on`. Every document must
    have its match and every match its document: a question without its answer would be scored against nothing."""
    by_key: dict[Any, Doc] = {}
    for index, doc in enumerate(extra):
        key = _key(doc, on, extra_label, index)
        if by_key.setdefault(key, doc) is not doc:
            raise InputError(f"{extra_label}: two documents have {on} '{key}'")
    out, used = [], set()
    for index, doc in enumerate(docs):
        key = _key(doc, on, label, index)
        match = by_key.get(key)
        if match is None:
            raise InputError(f"{extra_label}: no document with {on} '{key}' (document {index} of {label})")
        clash = next((k for k, v in match.items() if k in doc and doc[k] != v), None)
        if clash is not None:
            raise InputError(f"{extra_label}: field '{clash}' of {on} '{key}' differs from {label}'s")
        used.add(key)
        out.append({**doc, **match})
    if unmatched := [k for k in by_key if k not in used]:
        raise InputError(f"{extra_label}: {len(unmatched)} documents match none of {label} (first: {unmatched[0]})")
    return out
