"""Whether a tool's parameters are valid JSON Schema, checked where a task is loaded (so a bad schema is one error
line before any request, not an `args_schema_violation` charged to the model on every item).

jsonschema's own check (the schema against the 2020-12 metaschema, as the scorer reads it) costs several
milliseconds a schema, and BFCL alone has thousands: a schema written only in the keywords tools use, each with a
value of the form the metaschema asks, is valid without asking it; any other schema is checked by jsonschema.
"""

from __future__ import annotations

import functools
import json
from typing import Any

__all__ = ["json_schema_problem"]

_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_TEXT = frozenset({"description", "title", "format", "$comment"})
_NUMBER = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNT = frozenset({"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"})


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and len(set(value)) == len(value)


def _plain_keyword(key: str, value: Any) -> bool:
    """Whether one keyword is surely valid: a keyword tools use, its value of the form the metaschema asks."""
    if key == "type":
        kinds = value if isinstance(value, list) else [value]
        return bool(kinds) and all(isinstance(k, str) and k in _TYPES for k in kinds) and len(set(kinds)) == len(kinds)
    if key in _TEXT:
        return isinstance(value, str)
    if key == "default":
        return True
    if key == "enum":
        return isinstance(value, list)
    if key == "required":
        return _names(value)
    if key == "properties":
        return isinstance(value, dict) and all(_plain(v) for v in value.values())
    if key in ("items", "additionalProperties"):
        return _plain(value) or (key == "additionalProperties" and isinstance(value, bool))
    if key in _NUMBER:
        return _is_number(value)
    if key in _COUNT:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return False  # any other keyword: jsonschema decides


def _plain(schema: Any) -> bool:
    return isinstance(schema, dict) and all(_plain_keyword(k, v) for k, v in schema.items())


@functools.lru_cache(maxsize=4096)
def _checked(schema_text: str) -> str | None:
    from jsonschema import Draft202012Validator  # imported only for a schema the fast reading cannot vouch for
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    schema = json.loads(schema_text)
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as error:
        where = "/".join(str(p) for p in error.absolute_path)
        return " ".join(f"{where + ': ' if where else ''}{error.message}".split())[:200]
    return None


def json_schema_problem(schema: Any) -> str | None:
    """What makes `schema` no valid JSON Schema (jsonschema's words, where in the schema), or None."""
    if _plain(schema):
        return None
    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return "it holds values JSON cannot write"
    return _checked(text)
