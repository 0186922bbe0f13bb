"""Structured-output constraints: derived from a task's answer spec, sent the way an endpoint accepts them,
and checked on return. A constraint is never trusted: servers ignore parameters silently (vLLM >= 0.12 drops
`guided_*`, SGLang drops `structured_outputs`), so what comes back is validated and the record says whether
the constraint held.

Endpoint conventions (`Style`), from the servers' source:
  structured_outputs  vLLM >= 0.11: {"structured_outputs": {"choice" | "regex" | "json": ...}}
  guided              vLLM < 0.12: {"guided_choice" | "guided_regex" | "guided_json": ...}
  sglang              SGLang: top-level {"regex": ...}; JSON through response_format
  response_format     OpenAI's {"response_format": {"type": "json_schema", ...}}; JSON only
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal

import orjson
from pydantic import BaseModel

from qualeval.tasks.spec import AnswerSpec

__all__ = [
    "Constraint",
    "ConstraintRecord",
    "Style",
    "constraint_for",
    "request_params",
    "styles_from_probe",
    "validate",
]

Style = Literal["structured_outputs", "guided", "sglang", "response_format"]
Mode = Literal["auto", "single", "followup", "off"]


class Constraint(BaseModel):
    """The answer's shape, in every form a server may want it."""

    kind: Literal["choice", "regex", "json"]
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    schema_: dict[str, Any]
    """A JSON schema with one `answer` property: every answer type can go this way."""


class ConstraintRecord(BaseModel):
    """What happened to the constraint of one request, kept in its record."""

    mode: str
    kind: str | None = None
    style: str | None = None
    held: bool | None = None
    """Whether what came back satisfied the constraint (None: nothing was sent or nothing came back)."""
    followup: dict[str, Any] | None = None
    """Followup mode: the second request's content, status, timing and usage, apart from the main ones."""


@cache
def _regexes() -> tuple[str, str]:
    from outlines.types import dsl

    return dsl.to_regex(dsl.python_types_to_terms(float)), dsl.to_regex(dsl.python_types_to_terms(int))


def _literal_regex(options: tuple[str, ...]) -> str:
    from typing import Literal as L

    from outlines.types import dsl

    return dsl.to_regex(dsl.python_types_to_terms(L[options]))  # type: ignore[valid-type]


def constraint_for(spec: AnswerSpec, choices: tuple[str, ...] = ()) -> Constraint:
    """The constraint of an answer type: choices for choice and yes/no answers, a number regex for numbers,
    a JSON object with a string `answer` for free text."""
    if spec.type in ("choice", "boolean"):
        if spec.type == "boolean":
            options: tuple[str, ...] = ("yes", "no")
        elif spec.labels == "letters":
            options = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(choices)])
        else:
            options = tuple(choices)
        schema = {
            "type": "object",
            "properties": {"answer": {"type": "string", "enum": list(options)}},
            "required": ["answer"],
            "additionalProperties": False,
        }
        return Constraint(kind="choice", choices=options, pattern=_literal_regex(options), schema_=schema)
    if spec.type == "number":
        schema = {
            "type": "object",
            "properties": {"answer": {"type": "number"}},
            "required": ["answer"],
            "additionalProperties": False,
        }
        return Constraint(kind="regex", pattern=_regexes()[0], schema_=schema)
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    return Constraint(kind="json", schema_=schema)


def request_params(constraint: Constraint, style: Style) -> tuple[str, dict[str, Any]]:
    """The kind actually sent and the body keys that carry it, for one endpoint convention."""
    json_format = {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": constraint.schema_, "strict": True},
        }
    }
    if style == "response_format":
        return "json", json_format
    if style == "sglang":
        return ("regex", {"regex": constraint.pattern}) if constraint.pattern else ("json", json_format)
    if constraint.kind == "choice":
        key = {"structured_outputs": ("structured_outputs", "choice"), "guided": (None, "guided_choice")}[style]
        value = list(constraint.choices)
    elif constraint.kind == "regex":
        key = {"structured_outputs": ("structured_outputs", "regex"), "guided": (None, "guided_regex")}[style]
        value = constraint.pattern
    else:
        key = {"structured_outputs": ("structured_outputs", "json"), "guided": (None, "guided_json")}[style]
        value = constraint.schema_
    outer, inner = key
    return constraint.kind, ({outer: {inner: value}} if outer else {inner: value})


def validate(constraint: Constraint, kind: str, content: str) -> tuple[bool, str | None]:
    """Whether `content` satisfies the constraint as sent (`kind`), and the answer it carries."""
    text = content.strip()
    if kind == "json":
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError:
            return False, None
        if not isinstance(obj, Mapping) or set(obj) != {"answer"}:
            return False, None
        answer = obj["answer"]
        wanted = constraint.schema_["properties"]["answer"]
        if "enum" in wanted and answer not in wanted["enum"]:
            return False, None
        if wanted.get("type") == "number" and (isinstance(answer, bool) or not isinstance(answer, (int, float))):
            return False, None
        if wanted.get("type") == "string" and not isinstance(answer, str):
            return False, None
        return True, str(answer)
    if kind == "choice":
        return (True, text) if text in constraint.choices else (False, None)
    if constraint.pattern and re.fullmatch(constraint.pattern, text):
        return True, text
    return False, None


_PROBE_STYLES: dict[str, Style] = {
    "structured_outputs.choice": "structured_outputs",
    "structured_outputs.regex": "structured_outputs",
    "structured_outputs.json": "structured_outputs",
    "guided_choice": "guided",
    "guided_regex": "guided",
    "guided_json": "guided",
    "regex (SGLang)": "sglang",
    "response_format.json_schema": "response_format",
}


def styles_from_probe(verdicts: Mapping[str, str]) -> list[Style]:
    """The conventions a probe found enforced, best first (native choice/regex before JSON)."""
    found = {
        _PROBE_STYLES[mode] for mode, verdict in verdicts.items() if verdict == "enforced" and mode in _PROBE_STYLES
    }
    return [s for s in ("structured_outputs", "guided", "sglang", "response_format") if s in found]  # type: ignore[misc]
