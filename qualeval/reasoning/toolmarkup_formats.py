"""Tool-call markup formats as data: where a call opens, how it is read, what closes it (`parsers/tools/*.yaml`)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from qualeval._shipped import shipped
from qualeval.errors import InputError, validation_problem

__all__ = ["MarkupFormat", "load_markup_format", "markup_formats"]

_PATTERNS = ("anchor", "next", "partial", "param", "close")


class MarkupFormat(BaseModel):
    """One tool-call markup format. Every pattern is a regular expression compiled with DOTALL."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    reader: Literal["json_object", "json_list", "name_json", "params"]
    """json_object: a JSON object with the name and arguments; json_list: a JSON list of such objects;
    name_json: the anchor captures the name, JSON arguments follow; params: the anchor captures the name,
    then `param` matches each argument (groups key, value and, for DSML, string)."""
    triggers: tuple[str, ...]
    """Literal text the anchor cannot match without: plain text holding none of them is skipped at once."""
    anchor: str
    """Where the first call opens (the name in group `name`, unless the reader finds it in JSON)."""
    next: str | None = None
    """Where each later call opens, searched after the previous one; None: the anchor again."""
    partial: str | None = None
    """An opening cut off at the end of the text before the anchor could match: markup, not whole. Looked for in
    the text's last 1024 characters only: it is a call's header, not its arguments."""
    param: str | None = None
    close: str
    """Matched right after a call's arguments: the call is whole only if it matches there."""
    end_closes: bool = False
    """The end of the text closes a call too (the closing token ends generation and servers drop it)."""
    bare: bool = False
    """The format has no marker of its own (Llama's JSON): an object that is not a call, or is not closed where
    `close` says, is no markup at all rather than a malformed call."""
    args_keys: tuple[str, ...] = ("arguments",)
    args_required: bool = False
    trim_newline: bool = False
    """Drop one newline after a value's opening tag and one before its closing tag (the template writes them)."""
    models: tuple[str, ...] = ()

    @field_validator(*_PATTERNS)
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            re.compile(value, re.DOTALL)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression ({exc})") from None
        return value

    @field_validator("triggers")
    @classmethod
    def _some_trigger(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value or not all(value):
            raise ValueError("at least one non-empty trigger is needed")
        return value

    def pattern(self, field: str) -> re.Pattern[str] | None:
        return _compiled(getattr(self, field))

    def needs(self, field: str) -> re.Pattern[str]:
        found = self.pattern(field)
        if found is None:
            raise InputError(f"tool markup format '{self.name}': reader {self.reader} needs field '{field}'")
        return found


@cache
def _compiled(text: str | None) -> re.Pattern[str] | None:
    return None if text is None else re.compile(text, re.DOTALL)


def load_markup_format(path: Path) -> MarkupFormat:
    """Load one format file, raising InputError with the file and field on any problem."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read tool markup format ({exc.strerror})") from None
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: not a YAML text ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a tool markup format must be a mapping of fields")
    try:
        fmt = MarkupFormat.model_validate(data)
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{path}: field '{problem.field or '(top level)'}': {problem.message}") from None
    if fmt.reader == "params" and fmt.param is None:
        raise InputError(f"{path}: field 'param': the params reader needs it")
    return fmt


@cache
def markup_formats() -> tuple[MarkupFormat, ...]:
    """The built-in formats, in file-name order (ties between formats opening at one place go to the longer
    opening, not to this order)."""
    return tuple(load_markup_format(p) for p in sorted((shipped("parsers") / "tools").glob("*.yaml")))
