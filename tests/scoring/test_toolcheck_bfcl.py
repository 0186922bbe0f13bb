"""check_calls over every item of BFCL's single-turn categories: the possible answer, sent back as calls, scores
right; one perturbation per rule scores wrong; irrelevance and relevance by whether a call came back."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from qualeval.records import ToolAnswer, ToolCall
from qualeval.scoring import check_calls
from qualeval.tasks import openai_name
from tests.scoring import bfcl_wheel

UNSATISFIABLE = {
    # `acc_routing_start`, `auto_loan_payment_start` ...: required, and their acceptable values are an empty list
    "live_simple_106-63-0",
    "live_simple_112-68-0",
    # `journey_start_time` must be given (no "" among its values) and is not in Trains_1_FindTrains's schema
    "live_multiple_862-181-3",
    # the tool requires `statement`; the possible answer gives `question` and no `statement`
    "live_multiple_964-207-0",
}
"""The items whose possible answer no call can meet under BFCL's rules (under BFCL's own checker too)."""

Tools = tuple[dict[str, Any], ...]


def _items(categories: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    for name in categories:
        yield from bfcl_wheel.category(name)


@pytest.mark.parametrize("category", bfcl_wheel.CALL_CATEGORIES)
def test_the_possible_answer_sent_back_scores_right(category: str) -> None:
    wrong, unsatisfiable = [], set()
    for entry in bfcl_wheel.category(category):
        answer, tools = bfcl_wheel.answer(entry), bfcl_wheel.tools(entry)
        calls = bfcl_wheel.answer_calls(answer, tools)
        if not bfcl_wheel.satisfiable(answer, tools):
            unsatisfiable.add(entry["id"])
            assert not check_calls(calls, answer, tools).correct, entry["id"]
            continue
        check = check_calls(calls, answer, tools)
        if not check.correct:
            wrong.append(f"{entry['id']}: {check.detail}")
        reordered = check_calls(calls[::-1], answer, tools)
        assert reordered.correct == check.correct, entry["id"]
    assert wrong == []
    assert unsatisfiable == {i for i in UNSATISFIABLE if i.rsplit("_", 1)[0] == category}


@pytest.mark.parametrize("category", bfcl_wheel.NONE_CATEGORIES)
def test_irrelevance_right_without_a_call_wrong_with_one(category: str) -> None:
    for entry in bfcl_wheel.category(category):
        answer, tools = bfcl_wheel.answer(entry), bfcl_wheel.tools(entry)
        assert answer.trigger == "none"
        assert check_calls((), answer, tools).correct, entry["id"]
        # a few live_irrelevance items offer no tool at all: any call is still a call
        name = tools[0]["function"]["name"] if tools else "some_function"
        some = ToolCall(name=name, arguments="{}")
        assert not check_calls((some,), answer, tools).correct, entry["id"]


def test_relevance_right_with_a_call_wrong_without() -> None:
    for entry in bfcl_wheel.category("live_relevance"):
        answer, tools = bfcl_wheel.answer(entry), bfcl_wheel.tools(entry)
        assert answer.trigger == "any"
        some = ToolCall(name=tools[0]["function"]["name"], arguments="{}")
        assert check_calls((some,), answer, tools).correct, entry["id"]
        assert not check_calls((), answer, tools).correct, entry["id"]


# Perturbations: each breaks one rule in the first call (or the count), or returns None where the item gives the
# rule nothing to break.


def _function(tools: Tools, name: str) -> dict[str, Any]:
    return next(t["function"] for t in tools if t["function"]["name"] == name)


def _with_args(calls: tuple[ToolCall, ...], args: dict[str, Any]) -> tuple[ToolCall, ...]:
    first = calls[0].model_copy(update={"arguments": json.dumps(args)})
    return (first, *calls[1:])


def _wrong_name(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    return (calls[0].model_copy(update={"name": calls[0].name + "_v2"}), *calls[1:])


def _missing_required(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    args = json.loads(calls[0].arguments)
    required = _function(tools, calls[0].name)["parameters"].get("required") or []
    if not required:
        return None
    return _with_args(calls, {k: v for k, v in args.items() if k != required[0]})


def _outside_schema(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    return _with_args(calls, {**json.loads(calls[0].arguments), "not_a_parameter_xyz": 1})


def _outside_answer(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    properties = _function(tools, calls[0].name)["parameters"]["properties"]
    expected = [c for c in answer.calls if openai_name(c.name) == calls[0].name]
    spare = [p for p in properties if all(p not in c.params for c in expected)]
    if not spare:
        return None
    return _with_args(calls, {**json.loads(calls[0].arguments), spare[0]: "x"})


_OTHER_TYPES: tuple[Any, ...] = ({"perturbed": 1}, [True], 1.5)


def _wrong_type(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    args = json.loads(calls[0].arguments)
    if not args:
        return None
    param, value = next(iter(args.items()))
    kinds = {type(value), *(type(v) for c in answer.calls for v in c.params.get(param, ()) if v != "")}
    other = next(v for v in _OTHER_TYPES if type(v) not in kinds)
    return _with_args(calls, {**args, param: other})


def _unacceptable_value(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    args = json.loads(calls[0].arguments)
    param = next((k for k, v in args.items() if isinstance(v, str | int) and not isinstance(v, bool)), None)
    if param is None:
        return None
    value = args[param]
    return _with_args(calls, {**args, param: value + "zqxj" if isinstance(value, str) else value + 1000003})


def _left_out(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    """An optional parameter left out where the possible answer has no "" for it (in every call that names it)."""
    args = json.loads(calls[0].arguments)
    required = set(_function(tools, calls[0].name)["parameters"].get("required") or ())
    must = [p for p in args if p not in required and all("" not in c.params[p] for c in answer.calls if p in c.params)]
    if not must:
        return None
    return _with_args(calls, {k: v for k, v in args.items() if k != must[0]})


def _one_more(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    return (*calls, calls[0])


def _one_fewer(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    return calls[1:]


def _not_json(calls: tuple[ToolCall, ...], answer: ToolAnswer, tools: Tools) -> tuple[ToolCall, ...] | None:
    return (calls[0].model_copy(update={"arguments": calls[0].arguments[:-1]}), *calls[1:])


Perturbation = Callable[[tuple[ToolCall, ...], ToolAnswer, Tools], tuple[ToolCall, ...] | None]
PERTURBATIONS: dict[str, Perturbation] = {
    "function name": _wrong_name,
    "required parameter missing": _missing_required,
    "parameter outside the schema": _outside_schema,
    "parameter outside the possible answer": _outside_answer,
    "type": _wrong_type,
    "value": _unacceptable_value,
    "optional parameter left out without an empty value": _left_out,
    "one call more": _one_more,
    "one call fewer": _one_fewer,
    "arguments not JSON": _not_json,
}


@pytest.mark.parametrize("rule", PERTURBATIONS)
def test_one_perturbation_per_rule_scores_wrong(rule: str) -> None:
    perturb, tried, right = PERTURBATIONS[rule], 0, []
    for entry in _items(bfcl_wheel.CALL_CATEGORIES):
        answer, tools = bfcl_wheel.answer(entry), bfcl_wheel.tools(entry)
        if not bfcl_wheel.satisfiable(answer, tools):
            continue
        calls = perturb(bfcl_wheel.answer_calls(answer, tools), answer, tools)
        if calls is None:
            continue
        tried += 1
        if check_calls(calls, answer, tools).correct:
            right.append(entry["id"])
    assert right == []
    assert tried >= 10, f"only {tried} items exercise the rule"
