"""Reasoning formats: the inline markers a model uses for its thinking, loaded from YAML data files."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from qualeval._shipped import shipped
from qualeval.errors import InputError, validation_problem

__all__ = ["ReasoningFormat", "builtin_formats", "load_format", "resolve_formats"]


class ReasoningFormat(BaseModel):
    """One inline reasoning format. See parsers/*.yaml for the built-in ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Literal["tags", "channel"] = "tags"
    start: str
    end: str
    answer_start: str | None = None
    """Channel formats: the final answer begins after this marker; text between `end` and it is dropped."""
    drop: tuple[str, ...] = ()
    """Markers removed from the final content wherever they appear."""
    implicit_end: str | None = None
    """A regular expression that ends an unclosed reasoning block where it matches; the matched text starts
    the content. Qwen3.5 calls a tool from inside its thinking without writing `end` first."""
    models: tuple[str, ...] = ()
    description: str = ""

    @field_validator("start", "end", "answer_start")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("a marker must not be empty or whitespace")
        return value

    @field_validator("implicit_end")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            pattern = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression ({exc})") from None
        # an empty match would end every block at its first character
        if pattern.match(""):
            raise ValueError("the regular expression must not match empty text")
        return value

    @property
    def source_paired(self) -> str:
        return f"channel:{self.name}" if self.kind == "channel" else "inline:paired"


def _parsers_dir() -> Path:
    return shipped("parsers")


def load_format(path: Path) -> ReasoningFormat:
    """Load one format file, raising InputError with the file and field on any problem."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read reasoning format ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: reasoning format is not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise InputError(f"{path}:{where} invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a reasoning format must be a mapping of fields")
    try:
        return ReasoningFormat.model_validate(data)
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{path}: field '{problem.field or '(top level)'}': {problem.message}") from None


@cache
def builtin_formats() -> dict[str, ReasoningFormat]:
    found = (load_format(p) for p in sorted(_parsers_dir().glob("*.yaml")))
    return {fmt.name: fmt for fmt in found}


def resolve_formats(names: str | list[str] | tuple[str, ...] | None) -> tuple[ReasoningFormat, ...]:
    """Turn format names or YAML paths into formats; None or "all" means every built-in format."""
    if names is None or names == "all":
        return tuple(builtin_formats().values())
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    out = []
    for name in names:
        if name.endswith((".yaml", ".yml")):
            out.append(load_format(Path(name)))
        elif name in builtin_formats():
            out.append(builtin_formats()[name])
        else:
            known = ", ".join(sorted(builtin_formats()))
            raise InputError(f"unknown reasoning format '{name}': expected one of {known} or a .yaml path")
    return tuple(out)
