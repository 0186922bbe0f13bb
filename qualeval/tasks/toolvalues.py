"""One tool call against one acceptable call, by BFCL's AST rules for Python functions (the rules of the
possible-answer form a tool task is read in; scoring.toolcheck applies them to a response).

A call is right when it names the expected function, gives every required parameter, gives no parameter that
the tool's schema or the possible answer lacks, gives each value in a type BFCL accepts and among the acceptable
values, and leaves out only parameters whose acceptable values include "". BFCL's rules, as its checker applies
them (they are narrower or wider than JSON Schema in places, and BFCL's reading decides correctness):
- types are exact Python types of the parsed JSON (`true` is no integer); an integer passes for a float, but only
  at the top level, never inside a list;
- a value of another type passes when it has the type of the possible answer's first value (a "variable" in BFCL's
  words): it is then compared as it is, without string normalisation;
- a list's element types are checked one level deep against each acceptable list;
- strings, and the strings directly inside a list or a dict, compare after BFCL's normalisation: case, spaces and
  `,./-_*^` ignored, `'` read as `"`;
- a dict matches when each key it gives is an acceptable key with an acceptable value and each key it leaves out
  may be left out; a list of dicts matches an acceptable list of the same length, dict by dict, in order;
- a list compares with an acceptable "" as the empty list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from qualeval.records import ExpectedCall

__all__ = ["call_problem", "gold_problem", "normal_string"]

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}
"""JSON Schema's type names, as openai_tools writes BFCL's (float -> number, tuple -> array, dict -> object,
any -> string), -> the Python type BFCL's checker wants of the parsed value."""

_IGNORED = re.compile(r"[ ,./\-_*^]")


def normal_string(text: str) -> str:
    """BFCL's string normalisation: "April 1, 2024" and "april 1 2024" read alike."""
    return _IGNORED.sub("", text).lower().replace("'", '"')


def _python_type(prop: Any) -> type | None:
    """The Python type BFCL wants of a parameter (None: a schema type it has no rule for: no type check)."""
    kind = prop.get("type") if isinstance(prop, Mapping) else None
    return _PYTHON_TYPES.get(kind) if isinstance(kind, str) else None


def _answer_type(acceptable: Sequence[Any]) -> type | None:
    """The type of the first acceptable value that is not "" (BFCL reads a variable's type from it)."""
    return next((type(value) for value in acceptable if value != ""), None)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _items_pass(value: list[Any], acceptable: Sequence[Any], inner: type) -> bool:
    """The element types of a list, one level deep: right for at least one acceptable list (an acceptable value that
    is no list, "" among them, lets any elements pass, as in BFCL)."""
    for answer in acceptable:
        if not isinstance(answer, list):
            return True
        variable = _answer_type(answer)
        if all(type(item) is inner or type(item) is variable for item in value):
            return True
    return False


def _type_problem(param: str, value: Any, acceptable: Sequence[Any], prop: Any) -> tuple[str | None, bool]:
    """(what is wrong with the value's type or None, whether the value is a variable: compared as it is)."""
    wanted = _python_type(prop)
    if wanted is None:
        return None, False
    answer_type = _answer_type(acceptable)
    variable = answer_type is not None and answer_type is not wanted
    if type(value) is wanted:
        items = prop.get("items")
        inner = _python_type(items) if isinstance(value, list) else None
        if inner is not None and isinstance(value, list) and not _items_pass(value, acceptable, inner):
            kind = items.get("type")
            return f"parameter '{param}' = {_show(value)} has an element that is not of type {kind}", variable
        return None, variable
    if answer_type is not None and type(value) is answer_type:
        return None, True
    kind = prop.get("type")
    return f"parameter '{param}' = {_show(value)} is not of type {kind}", variable


def _normal(value: Any) -> Any:
    return normal_string(value) if isinstance(value, str) else value


def _dict_matches(value: dict[str, Any], answer: Any) -> bool:
    if not isinstance(answer, Mapping):
        return False
    for key, given in value.items():
        if key not in answer:
            return False
        choices = answer[key] if isinstance(answer[key], list) else [answer[key]]
        if _normal(given) not in [_normal(choice) for choice in choices]:
            return False
    return all(key in value or (isinstance(vals, list) and "" in vals) for key, vals in answer.items())


def _list_matches(value: list[Any], answer: Any) -> bool:
    if answer == "":
        return value == []
    return isinstance(answer, list) and [_normal(v) for v in value] == [_normal(a) for a in answer]


def _dicts_match(value: list[Any], answer: Any) -> bool:
    if answer == "":
        return value == []
    if not isinstance(answer, list) or len(answer) != len(value):
        return False
    return all(isinstance(got, dict) and _dict_matches(got, want) for got, want in zip(value, answer, strict=True))


def _value_matches(value: Any, acceptable: Sequence[Any], prop: Any, variable: bool) -> bool:
    """Whether a value (its type already passed) is among the acceptable ones, as BFCL compares each type."""
    wanted = _python_type(prop)
    if variable or wanted not in (dict, list, str):
        return value in acceptable
    if wanted is dict:
        return any(_dict_matches(value, answer) for answer in acceptable if answer != "")
    if wanted is list:
        each = _dicts_match if _python_type(prop.get("items")) is dict else _list_matches
        return any(each(value, answer) for answer in acceptable)
    return normal_string(value) in [normal_string(a) for a in acceptable if isinstance(a, str)]


def _param_problem(param: str, value: Any, acceptable: Sequence[Any], prop: Any) -> str | None:
    if _python_type(prop) is float and type(value) is int:  # Python's own widening, which BFCL allows
        value = float(value)
    problem, variable = _type_problem(param, value, acceptable, prop)
    if problem is not None:
        return problem
    if not _value_matches(value, acceptable, prop, variable):
        return f"parameter '{param}' = {_show(value)} is not among the acceptable values {_show(list(acceptable))}"
    return None


def call_problem(
    name: str, arguments: Mapping[str, Any], expected: ExpectedCall, expected_name: str, function: Mapping[str, Any]
) -> str | None:
    """What makes a call (its name and parsed arguments) wrong against one acceptable call, whose tool's
    `function` entry is given; None when it is right. `expected_name` is the name as the tools carry it."""
    if name != expected_name:
        return f"{name} called where {expected_name} is expected"
    schema = function.get("parameters") or {}
    properties = schema.get("properties") or {}
    for param in schema.get("required") or ():
        if param not in arguments:
            return f"{name}: missing required parameter '{param}'"
    for param, value in arguments.items():
        if param not in properties:
            return f"{name}: parameter '{param}' is not in the tool's schema"
        if param not in expected.params:
            return f"{name}: parameter '{param}' is not in the possible answer"
        problem = _param_problem(param, value, expected.params[param], properties[param])
        if problem is not None:
            return f"{name}: {problem}"
    for param, acceptable in expected.params.items():
        if param not in arguments and "" not in acceptable:
            return f"{name}: parameter '{param}' left out, and the possible answer does not allow leaving it out"
    return None


def _refused(param: str, value: Any, acceptable: Sequence[Any], prop: Any, strict: bool) -> str | None:
    """Why the scorer would refuse an expected value as a call's argument. `strict` (a task's own items): of the
    schema's type and within its enum, as the schema says; else (published data, read by BFCL's rules) a value of
    the possible answer's own type passes as BFCL's variable."""
    if _python_type(prop) is float and type(value) is int:
        value = float(value)
    problem, _ = _type_problem(param, value, () if strict else acceptable, prop)
    enum = prop.get("enum") if strict and isinstance(prop, Mapping) else None
    if problem is None and isinstance(enum, list) and value not in enum:
        problem = f"parameter '{param}' = {_show(value)} is not one of {_show(enum)}"
    return problem


def gold_problem(expected: ExpectedCall, function: Mapping[str, Any], *, strict: bool) -> str | None:
    """What makes an expected call contradict its tool's schema, so that the scorer could never count a call right
    (or, `strict`, would count right a call the schema refuses); None when it agrees. Lenient (published data):
    only what leaves no call right: a parameter outside the schema that must be given, a required parameter the
    call cannot give, a parameter none of whose acceptable values the scorer's type rule accepts."""
    schema = function.get("parameters") or {}
    properties = schema.get("properties") or {}
    for param, acceptable in expected.params.items():
        if not acceptable:
            return f"parameter '{param}' has no acceptable value"
        if param not in properties and (strict or "" not in acceptable):
            return f"parameter '{param}' is not in the tool's schema (its parameters: {', '.join(properties)})"
    for param in schema.get("required") or ():
        if param not in expected.params:
            return f"required parameter '{param}' is not in the expected call"
        values = expected.params[param]
        blanks: tuple[Any, ...] = ("", [])
        blank = any(_param_problem(param, v, values, properties.get(param)) is None for v in blanks)
        if all(v == "" for v in values) and (strict or not blank):  # a call must give it, and only "" is right
            return f"required parameter '{param}' may only be left out"
    for param, acceptable in expected.params.items():
        given = [v for v in acceptable if v != ""]
        problems = [_refused(param, v, acceptable, properties.get(param), strict) for v in given]
        if strict and any(problems):
            return next(p for p in problems if p)
        if given and all(problems):
            return f"{problems[0]}, nor is any other acceptable value" if len(given) > 1 else problems[0]
    return None
