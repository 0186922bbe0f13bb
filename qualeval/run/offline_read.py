"""Reading a file of responses made elsewhere into lines to judge, whatever tool wrote it.

qualeval      JSONL `{"id", "content", "reasoning"?, "finish_reason"?, "target"?, "choices"?}`; files from other
              tools name the text and the id otherwise (ZeroEval: `output`): see TEXT_FIELDS and ID_FIELDS.
csv           the same fields as the columns of a header row.
lm-eval       lm-eval's samples_*.jsonl (offline_formats).
openai-batch  the output file of an OpenAI Batch of /v1/chat/completions requests (offline_formats).
auto          the default: by the file's suffix (.csv) and the shape of its first line.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import orjson
from pydantic import ValidationError

from qualeval.errors import InputError, validation_problem
from qualeval.reasoning import known_finish
from qualeval.run.offline_formats import Line, Parsed, is_batch, is_lm_eval, read_batch, read_lm_eval, record_tools
from qualeval.run.offline_ids import MatchBy
from qualeval.tasks import jsonl_objects

__all__ = ["FORMATS", "Format", "Line", "Parsed", "ReadOptions", "read_responses"]

Format = Literal["auto", "qualeval", "csv", "lm-eval", "openai-batch"]
FORMATS: tuple[str, ...] = get_args(Format)

TEXT_FIELDS = ("content", "output", "response", "completion", "generated_text", "generation", "text")
"""Where a line may hold the model's text, in the order looked for: qualeval's own name, ZeroEval's `output`, the
common `response` and `completion`, Hugging Face's `generated_text`, then the vaguer names. `answer` is not one:
ZeroEval and others use it for the gold."""
ID_FIELDS = ("custom_id", "id", "sample_id", "doc_id", "idx", "question_id", "task_id", "key")
"""Where a line may hold its item's id: OpenAI Batch's `custom_id` (the user's own, before the Batch's request
`id` that a flattened Batch file keeps beside it), qualeval's, then lm-eval's, MMLU-Pro's, HumanEval's, IFEval's."""
_QUESTION_FIELDS = ("question", "problem")
_OPTIONAL = ("reasoning", "finish_reason", "target", "question", "problem")
"""CSV cells that an empty string leaves out (a CSV cannot say null); the text's empty cell is an empty answer."""


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to read the file: its format (`--format`), the fields that hold the text and the id when the user names
    them (`--text-field`, `--id-field`), and how an id of another tool's making finds its sample (`--match-by`,
    `--id-map`; qualeval.run.offline_ids)."""

    fmt: Format = "auto"
    text_field: str | None = None
    id_field: str | None = None
    match_by: MatchBy = "id"
    id_map: Path | None = None


@dataclass(frozen=True, slots=True)
class Fields:
    """The keys of a file's lines that hold the id and the response text."""

    id: str
    text: str


def read_responses(path: Path, read: ReadOptions) -> tuple[list[Parsed], str]:
    """Every line to judge, in file order, and a sentence saying what was read (for the `note:`)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read responses ({exc.strerror})") from None
    fmt = read.fmt
    if fmt == "auto" and path.suffix.lower() == ".csv":
        fmt = "csv"
    raw = raw.removeprefix(codecs.BOM_UTF8)  # Windows tools write UTF-8 with a byte-order mark: still UTF-8
    array = fmt != "csv" and raw.lstrip()[:1] == b"["
    rows = list(_csv_rows(raw, path) if fmt == "csv" else _array_rows(raw, path) if array else jsonl_objects(raw, path))
    if not rows:
        raise InputError(f"{path}: no responses in the file")
    # a qualeval run's records.jsonl keeps a request that failed for good and was sent again as `"final": false`;
    # its final record is the item's answer, as every summary of the run reads it
    final = [(n, obj) for n, obj in rows if fmt == "csv" or obj.get("final", True) is not False]
    superseded = len(rows) - len(final)
    parsed, said = _read_rows(final, path, fmt, read)
    said += f"; {superseded} records superseded by a later one (final: false) left out" if superseded else ""
    return parsed, said + ("; the file is one JSON array, each of its records read as a line" if array else "")


def _read_rows(
    rows: list[tuple[int, dict[str, Any]]], path: Path, fmt: Format, read: ReadOptions
) -> tuple[list[Parsed], str]:
    """The rows read as their format: by the first row's shape when it is not given."""
    if fmt == "auto":
        first = rows[0][1]
        fmt = "openai-batch" if is_batch(first) else "lm-eval" if is_lm_eval(first) else "qualeval"
    if fmt in ("lm-eval", "openai-batch") and (read.text_field or read.id_field):
        raise InputError(f"--text-field and --id-field are for qualeval and csv files, not {fmt} ({path})")
    if fmt == "lm-eval":
        return read_lm_eval(rows, path)
    if fmt == "openai-batch":
        return read_batch(rows, path)
    csv_file = fmt == "csv"  # a CSV's fields are its header's columns, named by the file
    fields = _fields_of(rows[0][1], read, str(path) if csv_file else f"{path}:{rows[0][0]}", csv_file)
    parsed = [_parse(obj, fields, f"{path}:{number}") for number, obj in rows]
    return parsed, f"{path.name}: read the response text from '{fields.text}' and the ids from '{fields.id}'"


def _array_rows(raw: bytes, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """A file that is one JSON array (`[{...}, {...}]`, as many tools save a list) read record by record, each with
    the line it starts on, so a message names a line as for JSONL."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    decoder = json.JSONDecoder()
    at, first = text.index("[") + 1, True
    while True:
        at = _past_space(text, at)
        if text.startswith("]", at) and first:
            at += 1
            break
        line = text.count("\n", 0, at) + 1
        try:
            record, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            raise InputError(
                f"{path}:{line}: not valid JSON (the file starts with '[', so it is read as a JSON array)"
            ) from None
        if not isinstance(record, dict):
            raise InputError(f"{path}:{line}: each record of the JSON array must be a JSON object")
        yield line, record
        at, first = _past_space(text, at), False
        if text.startswith("]", at):
            at += 1
            break
        if not text.startswith(",", at):
            raise InputError(
                f"{path}:{text.count(chr(10), 0, at) + 1}: not valid JSON (expected ',' or ']' in the array)"
            )
        at += 1
    if text[at:].strip():
        raise InputError(f"{path}:{text.count(chr(10), 0, at) + 1}: more after the JSON array's closing ']'")


def _past_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _csv_rows(raw: bytes, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # an unclosed quote would swallow the rows after it
    header: list[str] | None = None
    try:
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if header is None:
                header = [c.strip() for c in cells]
                continue
            where = f"{path}:{reader.line_num}"
            if len(cells) != len(header):  # a short row would read its missing text as an empty answer
                raise InputError(f"{where}: {len(cells)} cells, but the header has {len(header)}")
            yield reader.line_num, _csv_values(dict(zip(header, cells, strict=True)), where)
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: not valid CSV ({exc})") from None


def _csv_values(row: dict[str, str], where: str) -> dict[str, Any]:
    values: dict[str, Any] = {k: v for k, v in row.items() if not (k in _OPTIONAL and v == "")}
    if row.get("choices"):
        try:
            values["choices"] = orjson.loads(row["choices"])
        except orjson.JSONDecodeError:
            raise InputError(f'{where}: field \'choices\': a JSON list of strings, such as ["red", "blue"]') from None
    return values


def _fields_of(obj: dict[str, Any], read: ReadOptions, where: str, csv_file: bool) -> Fields:
    """The fields the user named, else the first of the known names the first line has. A line holding two of
    the other tools' text names (ZeroEval's prompt echo under `output` beside a `response`) is refused: which one
    is the model's is not known, and reading the wrong one scores every answer wrong unseen."""
    has = ", ".join(sorted(obj)) or "nothing"
    kind, on = ("header", "in the header") if csv_file else ("line", "on the line")
    found = []
    for names, what, given, flag in (
        (ID_FIELDS, "id", read.id_field, "--id-field"),
        (TEXT_FIELDS, "response text", read.text_field, "--text-field"),
    ):
        if given is not None:
            if given not in obj:
                raise InputError(f"{where}: {flag} {given}: no such field (the {kind} has {has})")
            found.append(given)
            continue
        present = [n for n in names if n in obj]
        if not present and what == "response text" and "tool_calls" in obj:
            found.append("content")  # a chat completion's message with calls may leave its content out
            continue
        if not present:
            raise InputError(f"{where}: no {what} {on}: none of {', '.join(names)} (the {kind} has {has})")
        if what == "response text" and present[0] != "content" and len(present) > 1:
            raise InputError(
                f"{where}: the {kind} has both '{present[0]}' and '{present[1]}', and which one is the model's "
                f"response is not known: name it with --text-field"
            )
        found.append(present[0])
    return Fields(*found)


_FAILED = {"transport_error", "endpoint_error", "error", "failed"}
"""A line's `status` that says the request got no answer (qualeval's own `transport_error` among them)."""


def _failure(obj: dict[str, Any]) -> str | None:
    """Why the line's request got no answer, when it says so (`"error": ...`, or a failed `status`): the line is
    an endpoint error, counted apart, never an empty answer scored wrong."""
    error, status = obj.get("error"), obj.get("status")
    if isinstance(error, dict):
        error = error.get("message") or orjson.dumps(error).decode()
    if error not in (None, "", False):
        return str(error)
    if isinstance(status, str) and status.lower() in _FAILED:
        return f"the line's status is {status}"
    finish = obj.get("finish_reason")
    if isinstance(finish, str) and known_finish(finish) == "abort":  # as a live run reads it
        return f"the server aborted the generation (finish_reason '{finish}')"
    return None


def _parse(obj: dict[str, Any], fields: Fields, where: str) -> Parsed:
    failure = _failure(obj)
    for name, what in ((fields.id, "id"), (fields.text, "response text")):
        if name not in obj and not ((failure or "tool_calls" in obj) and what != "id"):
            # a line without the text is not an empty answer (it would be scored wrong unseen), unless it failed
            # or it holds calls (the answer is the calls)
            empty = f'; a response with no text is "{name}": null' if what != "id" else ""
            raise InputError(f"{where}: no '{name}' field (the file's {what}, as on its first line){empty}")
    question = next((obj[n] for n in _QUESTION_FIELDS if isinstance(obj.get(n), str)), None)
    values = {k: v for k, v in obj.items() if k in Line.model_fields and k not in ("error", "reasoning_field")}
    values.update(id=obj[fields.id], content=obj.get(fields.text), question=question, error=failure)
    values.update(record_tools(obj))
    try:
        return Parsed(where, Line.model_validate(values))
    except ValidationError as exc:
        problem = validation_problem(exc)
        field = {"id": fields.id, "content": fields.text}.get(problem.field, problem.field)
        raise InputError(f"{where}: field '{field or '(line)'}': {problem.message}") from None
