"""Jinja templates of task files, rendered in a sandbox: a task file can shape text, never run code."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, TemplateError, UndefinedError, meta
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from qualeval.errors import InputError

__all__ = ["Value", "compile_value", "function_value", "sandbox"]

_EXPRESSION = re.compile(r"\s*\{\{(.*)\}\}\s*", re.DOTALL)


def _seeded_shuffle(values: Any, seed: Any) -> list[Any]:
    """The values in an order fixed by `seed` alone: the same item gets the same order in every run and process
    (Python seeds a Random from a string through SHA-512, not through the salted str hash)."""
    out = list(values)
    random.Random(f"qualeval|{seed}").shuffle(out)
    return out


def sandbox() -> ImmutableSandboxedEnvironment:
    # undefined names are errors: a misspelt field must not render as an empty prompt
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    # options shuffled per item (GPQA's four answers): data in, data out, nothing a template could abuse
    env.filters["seeded_shuffle"] = _seeded_shuffle
    return env


_ENV = sandbox()


@dataclass(frozen=True, slots=True)
class Value:
    """A task key that is either a document field (`answer`, `answer.value`) or a Jinja template.

    A template made of one `{{ expression }}` yields the expression's value (a list stays a list);
    any other template yields text.
    """

    source: str
    where: str
    """`file: field 'doc_to_target'`, for error messages."""
    field: str | None
    template: Any
    expression: Any
    names: frozenset[str] = frozenset()
    """The top-level names it reads (a field's first part; a template's undeclared variables)."""
    function: Callable[[dict[str, Any]], Any] | None = None
    """Python code given the document instead (an lm-eval task's own function, never a task file's)."""

    def __call__(self, context: dict[str, Any], item: str) -> Any:
        if self.function is not None:
            return self._run(context, item)
        try:
            if self.field is not None:
                return _lookup(context, self.field)
            if self.expression is not None:
                return self.expression(**context)
            return self.template.render(**context)
        except (UndefinedError, KeyError) as exc:
            missing = exc.args[0] if exc.args else "a name"
            raise InputError(f"{self.where}: {item}: {missing}") from None
        except SecurityError as exc:
            raise InputError(f"{self.where}: the template tried something unsafe: {exc}") from None
        except (TemplateError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise InputError(f"{self.where}: {item}: {type(exc).__name__}: {exc}") from None

    def _run(self, context: dict[str, Any], item: str) -> Any:
        assert self.function is not None
        try:
            return self.function(context["doc"])
        except Exception as exc:  # the library's code on one document: its failure names the item, in one line
            text = str(exc).strip().splitlines()
            raise InputError(
                f"{self.where}: {item}: {self.source} failed: {type(exc).__name__}{': ' + text[0] if text else ''}"
            ) from None


def function_value(function: Callable[[dict[str, Any]], Any], label: str, where: str) -> Value:
    """A key computed by Python code from the document; `label` names the code in messages."""
    return Value(label, where, None, None, None, frozenset(), function)


def _lookup(context: dict[str, Any], dotted: str) -> Any:
    value: Any = context
    for part in dotted.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(f"the document has no field '{dotted}'")
    return value


def compile_value(source: str, where: str, *, text: bool = False) -> Value:
    """Compile a key once. `text=True` always treats it as a template (prompts), never as a field name."""
    try:
        # without Jinja syntax a value names a field (NeuBAROCO's `content-type` included)
        if not text and "{{" not in source and "{%" not in source:
            return Value(source, where, source.strip(), None, None, frozenset({source.strip().split(".")[0]}))
        names, template, expression = _compiled(source, text)
        return Value(source, where, None, template, expression, names)
    except TemplateError as exc:
        lineno = getattr(exc, "lineno", None)  # a syntax error has one, other template errors do not
        line = f" (template line {lineno})" if lineno else ""
        raise InputError(f"{where}: template syntax error{line}: {exc.message or exc}") from None


@lru_cache(maxsize=4096)
def _compiled(source: str, text: bool) -> tuple[frozenset[str], Any, Any]:
    """Jinja's compile of a source, shared: imported lm-eval families repeat one template across hundreds of tasks."""
    names = frozenset(meta.find_undeclared_variables(_ENV.parse(source)))
    match = _EXPRESSION.fullmatch(source)
    if not text and match and "}}" not in match.group(1) and "{{" not in match.group(1):
        return names, None, _ENV.compile_expression(match.group(1))
    return names, _ENV.from_string(source), None
