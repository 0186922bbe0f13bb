"""Whether a call's arguments parse and validate against its tool's JSON schema: JSON Schema's reading, reported
apart from BFCL's verdict (BFCL takes an integer for a `number` marked float as JSON Schema does, but it also
takes a "variable" of another type, which JSON Schema refuses, and JSON Schema takes things BFCL refuses)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from qualeval.records import ToolCall, json_schema_problem
from qualeval.scoring.toolcheck import call_arguments, tool_functions

__all__ = ["schema_problem"]


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@functools.lru_cache(maxsize=1024)
def _validator(schema_text: str) -> Validator | str:
    """A validator for a schema (given as canonical JSON text, so it can be cached), or what makes the schema no
    valid JSON Schema (as a task's load reads it: records.json_schema_problem)."""
    schema = json.loads(schema_text)
    problem = json_schema_problem(schema)
    if problem is not None:
        return problem
    return validator_for(schema, default=Draft202012Validator)(schema)


def _parameters(function: Mapping[str, Any]) -> Any:
    return function.get("parameters") or {"type": "object"}


def schema_problem(call: ToolCall, tools: Sequence[Mapping[str, Any]]) -> str | None:
    """None when the call names an offered tool and its arguments parse and validate against the tool's JSON
    schema; else one line saying what is wrong."""
    function = tool_functions(tools).get(call.name)
    if function is None:
        return f"{call.name}: no tool of that name is offered"
    arguments = call_arguments(call)
    if arguments is None:
        return f"{call.name}: the arguments are not a JSON object"
    found = _validator(json.dumps(_parameters(function), sort_keys=True))
    if isinstance(found, str):
        return f"{call.name}: the tool's parameters are not a valid JSON Schema: {found}"
    error = best_match(found.iter_errors(arguments))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return _one_line(f"{call.name}: {where + ': ' if where else ''}{error.message}")
