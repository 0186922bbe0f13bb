"""Structured-output constraints: derived from a task's answer spec, sent the way an endpoint accepts them,
and checked on return. A constraint is never trusted: servers ignore parameters silently (vLLM >= 0.12 drops
`guided_*`, SGLang drops `structured_outputs`), so what comes back is validated and the record says whether
the constraint held.

Endpoint conventions (`Style`), from the servers' source:
  structured_outputs  vLLM >= 0.11: {"structured_outputs": {"choice" | "regex" | "json": ...}}
  guided              vLLM < 0.12: {"guided_choice" | "guided_regex" | "guided_json": ...}
  sglang              SGLang: top-level {"regex": ...}; JSON through response_format
  response_format     OpenAI's {"response_format": {"type": "json_schema", ...}}; JSON only
  json_schema         llama.cpp: a top-level {"json_schema": {...}}; JSON only
  grammar             llama.cpp: a top-level {"grammar": "<GBNF>"}. It binds from the first token, thinking
                      included (llama.cpp wraps only json_schema in an optional think block), so a run uses it
                      in followup mode, where thinking is off (FIRST_TOKEN)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import orjson
from pydantic import BaseModel

from qualeval.records import AnswerSpec, ConstraintKind, Style

__all__ = ["FIRST_TOKEN", "Constraint", "constraint_for", "gbnf", "request_params", "validate"]

FIRST_TOKEN: frozenset[str] = frozenset({"grammar"})
"""Conventions that constrain from the first token even where the server separates reasoning."""

# GBNF (llama.cpp's grammar format): a JSON string as in llama.cpp's grammars/json.gbnf, less its \uXXXX escapes:
# a lone surrogate (\udEbC) is JSON to that grammar but not to any JSON parser; other characters come as they are
_GBNF_STRING = r'''string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ["\\/bfnrt] )* "\""'''


class Constraint(BaseModel):
    """The answer's shape, in every form a server may want it."""

    kind: ConstraintKind
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    schema_: dict[str, Any]
    """A JSON schema with one `answer` property: every answer type can go this way."""


@cache
def _regexes() -> tuple[str, str]:
    from outlines.types import dsl

    return dsl.to_regex(dsl.python_types_to_terms(float)), dsl.to_regex(dsl.python_types_to_terms(int))


def _literal_regex(options: tuple[str, ...]) -> str:
    from typing import Literal as L

    from outlines.types import dsl

    return dsl.to_regex(dsl.python_types_to_terms(L[options]))


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


def _gbnf_literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def gbnf(constraint: Constraint) -> str:
    """The constraint as a llama.cpp GBNF grammar. Each accepts a subset of what `validate` accepts: the choices
    themselves, a plain decimal number (constraint_for makes regex constraints for numbers only), or a JSON
    object whose only key is a string `answer`."""
    if constraint.kind == "choice":
        return "root ::= " + " | ".join(_gbnf_literal(c) for c in constraint.choices) + "\n"
    if constraint.kind == "regex":
        return 'root ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)?\n'
    return 'root ::= "{\\"answer\\": " string "}"\n' + _GBNF_STRING + "\n"


def request_params(constraint: Constraint, style: Style) -> tuple[ConstraintKind, dict[str, Any]]:
    """The kind actually sent and the body keys that carry it, for one endpoint convention."""
    if style == "grammar":
        return constraint.kind, {"grammar": gbnf(constraint)}
    if style == "json_schema":
        return "json", {"json_schema": constraint.schema_}
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
        value: list[str] | str | dict[str, Any] | None = list(constraint.choices)
    elif constraint.kind == "regex":
        key = {"structured_outputs": ("structured_outputs", "regex"), "guided": (None, "guided_regex")}[style]
        value = constraint.pattern
    else:
        key = {"structured_outputs": ("structured_outputs", "json"), "guided": (None, "guided_json")}[style]
        value = constraint.schema_
    outer, inner = key
    return constraint.kind, ({outer: {inner: value}} if outer else {inner: value})


def validate(constraint: Constraint, kind: ConstraintKind, content: str) -> tuple[bool, str | None]:
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
