"""BFCL's function documents as OpenAI function tools, the way BFCL's own OpenAI-style handlers send them.

BFCL writes parameter types in Python's words (`dict`, `float`, `tuple`, `any`); a chat endpoint takes JSON
Schema. The conversion follows BFCL's `convert_to_tool` for OpenAI-style models, so that a served model sees what
it sees under BFCL: a `.` in a function name becomes `_` (OpenAI's names allow neither dots nor spaces), a
`float` becomes a `number` marked `format: float`, a parameter with no type a `string`.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["BFCL_TYPES", "openai_name", "openai_tools"]

BFCL_TYPES = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
}
"""BFCL's Python-flavoured type names -> JSON Schema's (BFCL's GORILLA_TO_OPENAPI, Python's part)."""


def openai_name(name: str) -> str:
    """A BFCL function name as OpenAI-style tools carry it (`math.factorial` -> `math_factorial`)."""
    return name.replace(".", "_")


def _json_type(bfcl: Any) -> str:
    return BFCL_TYPES.get(bfcl, "string") if isinstance(bfcl, str) else "string"


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    """Each property's type in JSON Schema's words, nested objects and array items too."""
    for prop in properties.values():
        if not isinstance(prop, dict):
            continue
        bfcl = prop.get("type")
        if bfcl == "float":  # BFCL tells the model a float is wanted, in the schema and in words
            prop["format"] = "float"
            prop["description"] = f"{prop.get('description', '')} This is a float type value."
        prop["type"] = _json_type(bfcl)
        if isinstance(prop.get("properties"), dict):
            prop["properties"] = _cast(prop["properties"])
        items = prop.get("items")
        if isinstance(items, dict):
            items["type"] = _json_type(items.get("type"))
            if isinstance(items.get("properties"), dict):
                items["properties"] = _cast(items["properties"])
            inner = items.get("items")
            if isinstance(inner, dict):
                inner["type"] = _json_type(inner.get("type"))
    return properties


def openai_tools(functions: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """BFCL function documents -> `tools` entries (`{"type": "function", "function": {...}}`); the documents are
    not changed."""
    tools = []
    for doc in copy.deepcopy(functions):
        doc["name"] = openai_name(str(doc["name"]))
        params = doc.setdefault("parameters", {})
        params["type"] = "object"
        params["properties"] = _cast(params.get("properties") or {})
        tools.append({"type": "function", "function": doc})
    return tuple(tools)
