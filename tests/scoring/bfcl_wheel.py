"""The bfcl-eval wheel's single-turn data, read from the wheel as a zip (never installed: its dependency set is
huge), for the tool-call scoring tests. Absent: the test skips, naming the file (CI turns the skip into a failure)."""

from __future__ import annotations

import functools
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest

from qualeval.records import ExpectedCall, ToolAnswer, ToolCall
from qualeval.tasks.bfcl_schema import openai_name, openai_tools

WHEEL_NAME = "bfcl_eval-2026.3.23-py3-none-any.whl"

CALL_CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
NONE_CATEGORIES = ("irrelevance", "live_irrelevance")
ANY_CATEGORIES = ("live_relevance",)


def wheel_path() -> Path:
    return Path(os.environ.get("QUALEVAL_BFCL_WHEEL") or Path.home() / ".cache" / "qualeval" / WHEEL_NAME)


def _lines(zf: zipfile.ZipFile, member: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in zf.read(member).decode().splitlines() if line.strip()]


@functools.cache
def _category(path: Path, category: str) -> tuple[dict[str, Any], ...]:
    """The category's items, each with its `ground_truth` joined in where the category has one."""
    with zipfile.ZipFile(path) as zf:
        items = _lines(zf, f"bfcl_eval/data/BFCL_v4_{category}.json")
        answer_file = f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json"
        if answer_file in zf.namelist():
            truths = {row["id"]: row["ground_truth"] for row in _lines(zf, answer_file)}
            items = [{**item, "ground_truth": truths[item["id"]]} for item in items]
    return tuple(items)


def category(name: str) -> tuple[dict[str, Any], ...]:
    path = wheel_path()
    if not path.is_file():
        pytest.skip(f"the bfcl-eval wheel is not at {path} (fetch it, or set QUALEVAL_BFCL_WHEEL)")
    return _category(path, name)


def item(item_id: str) -> dict[str, Any]:
    """One item by its BFCL id (its category is the id without the number)."""
    name = item_id.rsplit("_", 1)[0]
    return next(entry for entry in category(name) if entry["id"] == item_id)


def tools(entry: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    return openai_tools(entry["function"])


def answer(entry: dict[str, Any]) -> ToolAnswer:
    """The item's possible answer as a ToolAnswer (each expected call's acceptable values per parameter)."""
    if "ground_truth" not in entry:
        return ToolAnswer(trigger="any" if "relevance" in entry["id"] and "irr" not in entry["id"] else "none")
    calls = []
    for truth in entry["ground_truth"]:
        ((name, params),) = truth.items()
        calls.append(ExpectedCall(name=name, params={k: tuple(v) for k, v in params.items()}))
    return ToolAnswer(trigger="call", calls=tuple(calls))


def _first_keys(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: vals[0] for key, vals in answer.items() if vals and vals[0] != ""}


def _first(values: Any) -> Any:
    """The first acceptable value: a dict's (its keys hold acceptable values too, one level deep, as BFCL's possible
    answers write a dict or a list of dicts) with each key's first value, "" first meaning the key left out."""
    first = values[0]
    if isinstance(first, dict):
        return _first_keys(first)
    if isinstance(first, list) and first and all(isinstance(entry, dict) for entry in first):
        return [_first_keys(entry) for entry in first]
    return first


def _schema(tools: tuple[dict[str, Any], ...], name: str) -> tuple[set[str], set[str]]:
    """(the parameters the named tool's schema has, those it requires)."""
    function = next(t["function"] for t in tools if t["function"]["name"] == openai_name(name))
    params = function.get("parameters") or {}
    return set(params.get("properties") or {}), set(params.get("required") or ())


def first_values(call: ExpectedCall, tools: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """The call's first acceptable value of each parameter, "" meaning the parameter left out; except where the
    possible answer itself rules that out under BFCL's rules: a required parameter takes its first value that is
    not "" ("" itself as the value when it has no other), and a parameter outside the tool's schema is left out
    where "" allows it."""
    known, required = _schema(tools, call.name)
    values: dict[str, Any] = {}
    for param, acceptable in call.params.items():
        if not acceptable:
            continue
        if param in required:
            values[param] = _first([v for v in acceptable if v != ""] or [""])
        elif acceptable[0] != "" and (param in known or "" not in acceptable):
            values[param] = _first(acceptable)
    return values


def answer_calls(answer: ToolAnswer, tools: tuple[dict[str, Any], ...]) -> tuple[ToolCall, ...]:
    """The possible answer sent back as calls: names as the tools carry them, arguments as JSON text."""
    return tuple(
        ToolCall(name=openai_name(call.name), arguments=json.dumps(first_values(call, tools)), id=f"call_{i}", index=i)
        for i, call in enumerate(answer.calls)
    )


def satisfiable(answer: ToolAnswer, tools: tuple[dict[str, Any], ...]) -> bool:
    """Whether any call can meet the possible answer under BFCL's rules: each required parameter has an acceptable
    value, and each parameter the answer cannot do without is in the tool's schema. (A few BFCL items fail this:
    their answer can be met by no call, under BFCL's own checker as under ours.)"""
    for call in answer.calls:
        known, required = _schema(tools, call.name)
        if any(not call.params.get(param) for param in required):
            return False
        if any(param not in known and "" not in values for param, values in call.params.items()):
            return False
    return True
