"""schema_problem: a call's arguments against its tool's JSON schema, apart from BFCL's verdict (the two readings
differ, and each is reported as what it is)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qualeval.records import ToolCall
from qualeval.scoring import check_calls, schema_problem
from tests.scoring import bfcl_wheel


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=json.dumps(arguments))


def test_a_call_that_validates_has_no_problem() -> None:
    # simple_python_0: calculate_triangle_area(base: integer, height: integer, unit: string), base and height required
    tools = bfcl_wheel.tools(bfcl_wheel.item("simple_python_0"))
    assert schema_problem(call("calculate_triangle_area", base=10, height=5, unit="cm"), tools) is None


@pytest.mark.parametrize(
    ("sent", "problem"),
    [
        (call("calculate_triangle_area", base="ten", height=5), "calculate_triangle_area: base: 'ten' is not of type"),
        (call("calculate_triangle_area", base=10), "calculate_triangle_area: 'height' is a required property"),
        (call("triangle_area", base=10, height=5), "triangle_area: no tool of that name is offered"),
        (ToolCall(name="calculate_triangle_area", arguments="{'base': 10}"), "the arguments are not a JSON object"),
    ],
)
def test_what_breaks_the_schema_is_named_in_one_line(sent: ToolCall, problem: str) -> None:
    tools = bfcl_wheel.tools(bfcl_wheel.item("simple_python_0"))
    found = schema_problem(sent, tools)
    assert found is not None and problem in found and "\n" not in found


def test_a_tool_whose_parameters_are_no_json_schema_is_named() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "objekt"}}}]
    found = schema_problem(call("f", a=1), tools)
    assert found is not None and found.startswith("f: the tool's parameters are not a valid JSON Schema")


def test_where_bfcl_and_json_schema_differ_each_says_its_own() -> None:
    # simple_python_0: 10.0 is an integer to JSON Schema, not to BFCL
    entry = bfcl_wheel.item("simple_python_0")
    tools, answer = bfcl_wheel.tools(entry), bfcl_wheel.answer(entry)
    floaty = call("calculate_triangle_area", base=10.0, height=5)
    assert schema_problem(floaty, tools) is None
    assert not check_calls([floaty], answer, tools).correct
    # parallel_multiple_21: BFCL takes the "variable" data['future_sales'] for an array; JSON Schema does not
    entry = bfcl_wheel.item("parallel_multiple_21")
    tools, answer = bfcl_wheel.tools(entry), bfcl_wheel.answer(entry)
    calls = bfcl_wheel.answer_calls(answer, tools)
    assert check_calls(calls, answer, tools).correct
    assert [schema_problem(c, tools) for c in calls] == [
        None,
        "linear_regression_fit: y: \"data['future_sales']\" is not of type 'array'",
    ]


def test_every_bfcl_tool_is_valid_json_schema_and_most_possible_answers_validate() -> None:
    """Every tool openai_tools makes of BFCL's functions can be validated against; the possible answers that break
    their schema (about twenty, mostly with a value outside an `enum`, which BFCL does not check) are few."""
    checked, broken = 0, 0
    for name in bfcl_wheel.CALL_CATEGORIES:
        for entry in bfcl_wheel.category(name):
            answer, tools = bfcl_wheel.answer(entry), bfcl_wheel.tools(entry)
            for sent in bfcl_wheel.answer_calls(answer, tools):
                problem = schema_problem(sent, tools)
                assert problem is None or "not a valid JSON Schema" not in problem, entry["id"]
                checked += 1
                broken += problem is not None
    assert checked > 3000
    assert broken < 30


def test_a_missing_wheel_skips_naming_its_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("QUALEVAL_BFCL_WHEEL", str(tmp_path / "absent.whl"))
    with pytest.raises(pytest.skip.Exception, match=r"absent\.whl"):
        bfcl_wheel.category("simple_python")
