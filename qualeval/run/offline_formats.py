"""The line every input format is read into, and the formats of other tools' own files:

lm-eval       samples_*.jsonl: `doc_id`, `doc`, `target`, `arguments`, `resps` (the raw output, a list per
              request), `filtered_resps`, `filter`, `metrics`. A generation task's log holds each doc once per
              filter (gsm8k: `strict-match`, `flexible-extract`) with the same raw response: it is read once,
              since the filters are lm-eval's reading of the answer and qualeval does its own.
openai-batch  the output file of an OpenAI Batch of /v1/chat/completions requests: `custom_id`, and
              `response.body.choices[0].message` (`content`, `reasoning_content`/`reasoning`), or `error` / a
              `response.status_code` other than 200: an endpoint error, counted apart, never a wrong answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError, field_validator

from qualeval.errors import InputError, validation_problem
from qualeval.reasoning import FINISH_REASONS, known_finish
from qualeval.records import ToolCall, ToolChoice, ToolsRecord, openai_calls

__all__ = [
    "Line",
    "Parsed",
    "is_batch",
    "is_lm_eval",
    "lm_eval_task_of",
    "read_batch",
    "read_lm_eval",
    "record_tools",
]

Rows = list[tuple[int, dict[str, Any]]]


class Line(BaseModel):
    """One response, whatever file it came from."""

    id: str | int
    content: str | None = None
    reasoning: str | None = None
    reasoning_field: str = "reasoning"
    """The name the reasoning came under (a Batch message's `reasoning_content`): the record's reasoning source."""
    finish_reason: str | None = None
    target: str | int | float | bool | None = None
    choices: list[str] | None = None
    question: str | None = None
    """The question as the line gives it: checked against the sample an id was matched to by its number."""
    error: str | None = None
    """The endpoint's reason, when the request failed (a Batch line's `error` or non-200 status): no answer."""
    tool_calls: tuple[ToolCall, ...] = ()
    """A tool-call item's calls, as a chat completion's message gives them."""
    tools: tuple[dict[str, Any], ...] | None = None
    """The tools that were offered, when the line says (over the task's)."""
    tool_choice: str | dict[str, Any] | None = None
    tool_record: ToolsRecord | None = None
    """A qualeval run's record of the calls (its `tools`: calls, timing, wire details), judged as rescore does."""

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _calls(cls, value: Any) -> Any:
        return openai_calls(value)

    def came_back(self) -> ToolsRecord:
        """What came back as calls: a run's record of them (with their timing and wire details), else the line's
        own tool_calls."""
        return self.tool_record if self.tool_record is not None else ToolsRecord(calls=self.tool_calls)

    @field_validator("tool_choice", mode="before")
    @classmethod
    def _choice_form(cls, value: Any) -> Any:
        # a tool_choice of no known form would be read as auto's, unseen
        if value is not None:
            _CHOICE.validate_python(value)
        return value

    @field_validator("finish_reason", mode="before")
    @classmethod
    def _known_finish(cls, value: Any) -> Any:
        # an unknown word read as no finish reason would make an answer cut off at the budget a finished one
        if not isinstance(value, str) or not value.strip():
            return value or None
        known = known_finish(value)
        if known is None:
            names = ", ".join(sorted(set(FINISH_REASONS.values())))
            raise ValueError(
                f"'{value}' is no finish reason qualeval knows ({names}, or their other spellings such as "
                "max_tokens): whether the answer was cut off is not known"
            )
        return known

    @field_validator("id", mode="before")
    @classmethod
    def _string_or_integer(cls, value: Any) -> Any:
        # a JSON true or 1.0 would otherwise be read as the sample numbered 1: scored against another item's gold
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise ValueError(f"id {orjson.dumps(value).decode()} is not a string or an integer")
        return value


_CHOICE: TypeAdapter[Any] = TypeAdapter(ToolChoice)


def record_tools(obj: dict[str, Any]) -> dict[str, Any]:
    """A qualeval run's record read as a line: its `tools` is the record of the calls, and the tools offered and
    the tool_choice are what its request sent (a line's own `tools` is the list of offered tools)."""
    if not isinstance(obj.get("tools"), dict):
        return {}
    request = obj.get("request")
    request = request if isinstance(request, dict) else {}
    return {"tool_record": obj["tools"], "tools": request.get("tools") or (), "tool_choice": request.get("tool_choice")}


@dataclass(frozen=True, slots=True)
class Parsed:
    """A line read, where it was read (`FILE:LINE`), the lm-eval document it carries, and whether its id is by
    definition the sample's number (lm-eval's `doc_id`, the document's index)."""

    where: str
    line: Line
    doc: dict[str, Any] | None = None
    numbered: bool = False
    prompt: str | None = None
    """The prompt as it was sent, when the file says (lm-eval's `arguments`): what a response may echo."""


def is_lm_eval(obj: dict[str, Any]) -> bool:
    return "doc_id" in obj and "resps" in obj


def is_batch(obj: dict[str, Any]) -> bool:
    return "custom_id" in obj and (isinstance(obj.get("response"), dict) or obj.get("error") is not None)


def _validated(values: dict[str, Any], where: str, names: dict[str, str]) -> Line:
    try:
        return Line.model_validate(values)
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{where}: field '{names.get(problem.field, problem.field)}': {problem.message}") from None


def read_lm_eval(rows: Rows, path: Path) -> tuple[list[Parsed], str]:
    """One line per doc: the first line's raw response, `resps[0][0]`. A later line of the same doc must hold the
    same response (another filter's reading of it); a different one is refused, naming the doc."""
    out: list[Parsed] = []
    first: dict[str, tuple[str, str]] = {}
    filters: dict[str, dict[Any, str]] = {}  # per doc, the line each filter's reading of it is on
    repeats = 0
    for number, obj in rows:
        where = f"{path}:{number}"
        if not is_lm_eval(obj):
            raise InputError(f"{where}: not an lm-eval sample log line (needs 'doc_id' and 'resps')")
        text = _raw_response(obj["resps"], where)
        key = str(obj["doc_id"])
        seen = filters.setdefault(key, {}).setdefault(str(obj.get("filter")), where)
        if seen != where:  # the same doc under the same filter again: two logs joined, or one written twice
            raise InputError(
                f"{where}: doc {key} appears twice under filter '{obj.get('filter')}' (first on {seen}): each doc "
                "is logged once per filter; score each log on its own"
            )
        if key in first:
            if first[key][1] != text:
                raise InputError(
                    f"{where}: doc {key} has another response than on {first[key][0]}: which one to score is not known"
                )
            repeats += 1
            continue
        first[key] = (where, text)
        doc = obj.get("doc") if isinstance(obj.get("doc"), dict) else None
        values = {"id": obj["doc_id"], "content": text, "target": None if doc else obj.get("target")}
        line = _validated(values, where, {"id": "doc_id"})
        out.append(Parsed(where, line, doc, numbered=True, prompt=_sent_prompt(obj.get("arguments"))))
    said = f"{path.name}: read as lm-eval samples, each doc's raw response (resps) once"
    if repeats:
        said += f" ({repeats} lines repeated a doc's response under another filter: lm-eval's filters are not used)"
    return out, said


def _sent_prompt(arguments: Any) -> str | None:
    """The prompt lm-eval sent (`arguments.gen_args_0.arg_0`), few-shot examples and any chat template included:
    qualeval's own rendering of the doc may differ from it, and a response echoes what was sent."""
    first = arguments.get("gen_args_0") if isinstance(arguments, dict) else None
    prompt = first.get("arg_0") if isinstance(first, dict) else None
    return prompt if isinstance(prompt, str) and prompt.strip() else None


def _raw_response(resps: Any, where: str) -> str:
    """The one generated text of a doc. A doc with several (lm-eval's `repeats`, several requests) is refused:
    keeping one of them would score a sample of the model's answers as if it were all of them."""
    first = resps[0] if isinstance(resps, list) and resps else None
    text = first[0] if isinstance(first, list) and first else None
    if not isinstance(text, str):
        raise InputError(
            f"{where}: field 'resps': no generated text at resps[0][0] (a log-likelihood task's log holds "
            "scores, and qualeval scores generated answers)"
        )
    assert isinstance(resps, list) and isinstance(first, list)  # as checked above
    if len(resps) > 1 or len(first) > 1:
        held = f"{len(first)} responses" if len(resps) == 1 else f"{len(resps)} requests"
        raise InputError(
            f"{where}: field 'resps': the doc holds {held}, and qualeval score reads one response per doc "
            "(lm-eval's repeats are not read): log one response per doc, or write each one as a line of "
            "qualeval's own JSONL and score them apart"
        )
    return text


_LOG_NAME = re.compile(r"samples_(?P<task>.+?)_\d{4}-\d{2}-\d{2}(?:T[0-9.:-]+)?\.jsonl")
"""lm-eval's name for a samples log: `samples_<task>_<date>T<time>.jsonl`."""


def lm_eval_task_of(path: Path) -> str | None:
    """The lm-eval task a samples log's file name says it is of, when it has lm-eval's name."""
    named = _LOG_NAME.fullmatch(path.name)
    return named.group("task") if named else None


def read_batch(rows: Rows, path: Path) -> tuple[list[Parsed], str]:
    """Each line's `custom_id` and message; the Batch's own request id (`id`, `batch_req_...`) is never read."""
    out = [Parsed(f"{path}:{number}", _batch_line(obj, f"{path}:{number}")) for number, obj in rows]
    said = f"{path.name}: read as OpenAI Batch output: the ids from 'custom_id', the text from its message"
    failed = sum(p.line.error is not None for p in out)
    if failed:
        said += f"; {failed} requests failed at the endpoint and are counted apart, not scored"
    return out, said


def _batch_line(obj: dict[str, Any], where: str) -> Line:
    if "custom_id" not in obj:
        raise InputError(f"{where}: not an OpenAI Batch output line (needs 'custom_id')")
    key = obj["custom_id"]
    error = obj.get("error")
    response = obj.get("response")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else None
        return _validated({"id": key, "error": str(message or error)}, where, {"id": "custom_id"})
    if not isinstance(response, dict):
        raise InputError(f"{where}: field 'response': neither a response nor an 'error'")
    body: dict[str, Any] = response["body"] if isinstance(response.get("body"), dict) else {}
    status = response.get("status_code")
    if status != 200:
        problem: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
        reason = f"HTTP {status}" + (f": {problem['message']}" if problem.get("message") else "")
        return _validated({"id": key, "error": reason}, where, {"id": "custom_id"})
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    message = choice.get("message") if choice else None
    if not isinstance(message, dict):
        raise InputError(
            f"{where}: field 'response.body.choices[0].message': not there (only batches of "
            "/v1/chat/completions requests are read)"
        )
    name = next((n for n in ("reasoning_content", "reasoning") if message.get(n)), "reasoning")
    values = {
        "id": key,
        "tool_calls": message.get("tool_calls"),
        "content": message.get("content"),
        "reasoning": message.get(name),
        "reasoning_field": name,
        "finish_reason": choice.get("finish_reason") if choice else None,
    }
    prefix = "response.body.choices[0]"
    names = {"id": "custom_id", "content": f"{prefix}.message.content", "reasoning": f"{prefix}.message.{name}"}
    names["tool_calls"] = f"{prefix}.message.tool_calls"
    return _validated(values, where, {**names, "finish_reason": f"{prefix}.finish_reason"})
