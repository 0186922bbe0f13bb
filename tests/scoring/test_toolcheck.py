"""check_calls, rule by rule, each on a real BFCL item (its id in the test) that exercises the rule: the call BFCL's
checker takes and the call it refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qualeval.errors import InputError
from qualeval.records import ToolAnswer, ToolCall
from qualeval.scoring import CallCheck, call_arguments, check_calls
from tests.scoring import bfcl_wheel


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=json.dumps(arguments))


def verdict(item_id: str, *calls: ToolCall) -> CallCheck:
    entry = bfcl_wheel.item(item_id)
    return check_calls(calls, bfcl_wheel.answer(entry), bfcl_wheel.tools(entry))


def test_the_function_name() -> None:
    # simple_python_0: calculate_triangle_area(base=10, height=5, unit="units" or left out)
    assert verdict("simple_python_0", call("calculate_triangle_area", base=10, height=5)) == CallCheck(True, "")
    wrong = verdict("simple_python_0", call("calculate_area", base=10, height=5))
    assert wrong == CallCheck(False, "calculate_area called where calculate_triangle_area is expected")


def test_a_dotted_name_is_compared_as_openai_style_tools_carry_it() -> None:
    # simple_python_37: BFCL's route.estimate_time is offered as route_estimate_time
    args = {"start_location": "San Francisco", "end_location": "Los Angeles", "stops": ["Santa Barbara", "Monterey"]}
    assert verdict("simple_python_37", call("route_estimate_time", **args)).correct
    assert not verdict("simple_python_37", call("route.estimate_time", **args)).correct


def test_required_parameters_are_present() -> None:
    # simple_python_0: base and height are required
    wrong = verdict("simple_python_0", call("calculate_triangle_area", base=10))
    assert wrong == CallCheck(False, "calculate_triangle_area: missing required parameter 'height'")


def test_no_parameter_outside_the_schema() -> None:
    wrong = verdict("simple_python_0", call("calculate_triangle_area", base=10, height=5, colour="red"))
    assert wrong == CallCheck(False, "calculate_triangle_area: parameter 'colour' is not in the tool's schema")


def test_no_parameter_absent_from_the_possible_answer() -> None:
    # parallel_multiple_12: calculate_magnetic_field has `permeability` in its schema, not in its possible answer
    voltage = call("calculate_voltage_difference", electric_field=5.0, distance=3.0)
    right = verdict("parallel_multiple_12", call("calculate_magnetic_field", current=4.0, distance=2.0), voltage)
    assert right.correct
    extra = call("calculate_magnetic_field", current=4.0, distance=2.0, permeability=0.1)
    wrong = verdict("parallel_multiple_12", extra, voltage)
    assert not wrong.correct
    assert "parameter 'permeability' is not in the possible answer" in wrong.detail


def test_an_integer_passes_for_a_float_at_the_top_level() -> None:
    # simple_python_14: x_value is a float, 0.0 acceptable
    assert verdict("simple_python_14", call("calculate_derivative", function="3x**2 + 2x - 1", x_value=0)).correct


def test_an_integer_does_not_pass_for_a_float_inside_a_list() -> None:
    # simple_python_13: interval is a list of floats; BFCL checks the elements' types and takes no int there
    args = {"function": "x**2"}
    assert verdict("simple_python_13", call("calculate_area_under_curve", **args, interval=[1.0, 3.0])).correct
    wrong = verdict("simple_python_13", call("calculate_area_under_curve", **args, interval=[1, 3]))
    assert not wrong.correct
    assert "has an element that is not of type number" in wrong.detail


@pytest.mark.parametrize("base", [True, 10.0, "10"])
def test_types_are_the_exact_python_types_of_the_parsed_json(base: Any) -> None:
    # simple_python_0: base is an integer: not a boolean, not 10.0 (which JSON Schema would take), not a string
    wrong = verdict("simple_python_0", call("calculate_triangle_area", base=base, height=5))
    assert not wrong.correct
    assert "parameter 'base'" in wrong.detail and "is not of type integer" in wrong.detail


def test_a_tuple_is_sent_as_a_list() -> None:
    # simple_python_83: coord1 and coord2 are tuples of floats
    args = {"coord1": [33.4484, -112.074], "coord2": [34.0522, -118.2437], "unit": "miles"}
    assert verdict("simple_python_83", call("calculate_distance", **args)).correct
    assert not verdict("simple_python_83", call("calculate_distance", **{**args, "coord1": "33.4484,-112.074"})).correct


def test_nested_list_elements_have_the_items_type() -> None:
    # simple_python_122: table is a list of lists of integers; simple_python_37: stops a list of strings
    assert verdict("simple_python_122", call("chi_squared_test", table=[[10, 20], [30, 40]])).correct
    assert not verdict("simple_python_122", call("chi_squared_test", table=[[10, 20], 30])).correct
    args = {"start_location": "San Francisco", "end_location": "Los Angeles"}
    assert not verdict("simple_python_37", call("route_estimate_time", **args, stops=["Santa Barbara", 5])).correct


def test_any_is_a_string() -> None:
    # simple_python_109: data is of type any, which BFCL checks as a string
    args = {"n_estimators": 100, "max_depth": 5}
    assert verdict("simple_python_109", call("random_forest_train", **args, data="my_data")).correct
    assert not verdict("simple_python_109", call("random_forest_train", **args, data=["my_data"])).correct


def test_a_value_of_the_possible_answers_type_is_a_variable_compared_as_it_is() -> None:
    # parallel_multiple_21: y is an array of floats, its acceptable value the string "data['future_sales']"
    loading = call("data_loading", file_path="dataset.csv")
    fit = {"x": "data['sales']", "return_residuals": True}
    assert verdict(
        "parallel_multiple_21", loading, call("linear_regression_fit", **fit, y="data['future_sales']")
    ).correct
    # a variable is not normalised as a string value is
    shouted = call("linear_regression_fit", **fit, y="DATA['future_sales']")
    assert not verdict("parallel_multiple_21", loading, shouted).correct


def test_strings_compare_after_bfcls_normalisation() -> None:
    # simple_python_13: case, spaces and ,./-_*^ are ignored
    for function in ("x**2", "X ** 2", "LAMBDA X: X**2", "Y = X**2"):
        right = verdict("simple_python_13", call("calculate_area_under_curve", function=function, interval=[1.0, 3.0]))
        assert right.correct, function
    wrong = verdict("simple_python_13", call("calculate_area_under_curve", function="x**3", interval=[1.0, 3.0]))
    assert not wrong.correct
    assert "parameter 'function' = 'x**3' is not among the acceptable values" in wrong.detail


def test_strings_inside_a_list_are_normalised_and_the_order_counts() -> None:
    # simple_python_37: stops ["Santa Barbara", "Monterey"] or the other order
    args = {"start_location": "san-francisco", "end_location": "Los Angeles"}
    assert verdict("simple_python_37", call("route_estimate_time", **args, stops=["santa barbara", "MONTEREY"])).correct
    assert not verdict("simple_python_37", call("route_estimate_time", **args, stops=["Monterey"])).correct


def test_a_dict_by_its_keys_and_their_acceptable_values() -> None:
    # simple_python_89: conditions {department: Science, school: Bluebird High School | Bluebird HS}
    args = {"database_name": "StudentDB", "table_name": "students"}
    right = {"department": "science", "school": "Bluebird HS"}
    assert verdict("simple_python_89", call("db_fetch_records", **args, conditions=right)).correct
    for conditions in ({"department": "Science"}, {**right, "grade": 10}, {**right, "school": "Bluebird"}):
        assert not verdict("simple_python_89", call("db_fetch_records", **args, conditions=conditions)).correct


def test_a_list_of_dicts_dict_by_dict_in_order() -> None:
    # simple_python_96: conditions [{age > 25}, {job = engineer}]
    age = {"field": "age", "operation": ">", "value": "25"}
    job = {"field": "job", "operation": "=", "value": "Engineer"}
    assert verdict("simple_python_96", call("database_query", table="user", conditions=[age, job])).correct
    assert not verdict("simple_python_96", call("database_query", table="user", conditions=[job, age])).correct
    assert not verdict("simple_python_96", call("database_query", table="user", conditions=[age])).correct


def test_an_optional_parameter_may_be_left_out_only_when_the_answer_allows_it() -> None:
    # simple_python_0: unit's acceptable values include ""; simple_python_5: root_type (not required) has only "all"
    assert verdict("simple_python_0", call("calculate_triangle_area", base=10, height=5)).correct
    assert verdict("simple_python_5", call("solve_quadratic", a=3, b=-11, c=-4, root_type="all")).correct
    wrong = verdict("simple_python_5", call("solve_quadratic", a=3, b=-11, c=-4))
    assert not wrong.correct
    assert "parameter 'root_type' left out" in wrong.detail


def test_parallel_calls_match_in_any_order_with_the_exact_count() -> None:
    # parallel_0: spotify.play for Taylor Swift (20 minutes) and Maroon 5 (15 minutes)
    swift = call("spotify_play", artist="Taylor Swift", duration=20)
    maroon = call("spotify_play", artist="Maroon 5", duration=15)
    assert verdict("parallel_0", maroon, swift).correct
    assert verdict("parallel_0", swift) == CallCheck(False, "1 call where 2 are expected")
    assert verdict("parallel_0", swift, maroon, maroon) == CallCheck(False, "3 calls where 2 are expected")
    assert not verdict("parallel_0", swift, swift).correct  # each expected call takes a call of its own


def test_parallel_calls_are_matched_by_trying_matchings_not_first_fit() -> None:
    # parallel_178: the first expected call takes Microsoft or Apple on 2022-01-01, the third only Apple on that
    # day. First-fit gives the Apple call to the first expected call and finds none left for the third.
    calls = [
        call("get_stock_price", company_name="Apple", date="2022-01-01"),
        call("get_stock_price", company_name="Microsoft", date="2022-02-01"),
        call("get_stock_price", company_name="Microsoft", date="2022-01-01"),
        call("get_stock_price", company_name="Apple", date="2022-02-01"),
    ]
    assert verdict("parallel_178", *calls).correct


def test_multiple_wants_exactly_one_call_of_the_right_function() -> None:
    # multiple_0: triangle_properties.get among two tools
    triangle = call("triangle_properties_get", side1=5, side2=4, side3=3)
    assert verdict("multiple_0", triangle).correct
    assert verdict("multiple_0", triangle, triangle) == CallCheck(False, "2 calls where 1 is expected")
    assert not verdict("multiple_0", call("circle_properties_get", radius=5.0)).correct


def test_irrelevance_is_right_only_without_a_call() -> None:
    # irrelevance_0: determine_body_mass_index offered for a question it does not answer
    assert verdict("irrelevance_0") == CallCheck(True, "")
    bmi = call("determine_body_mass_index", weight=70.0, height=1.75)
    assert verdict("irrelevance_0", bmi) == CallCheck(False, "1 call where none is expected")


def test_a_call_whose_arguments_are_not_an_object_is_no_call_as_bfcl_decodes_it() -> None:
    # irrelevance_0 and live_relevance_0-0-0: BFCL's decoder fails on such a call, and a failed decode is no call
    broken = ToolCall(name="determine_body_mass_index", arguments='{"weight": 70')
    assert verdict("irrelevance_0", broken).correct
    assert not verdict("live_relevance_0-0-0", ToolCall(name="generate_image", arguments="[]")).correct


def test_relevance_is_right_with_any_call() -> None:
    # live_relevance_0-0-0: any call, whatever its arguments
    assert verdict("live_relevance_0-0-0", call("generate_image", prompt="anything")) == CallCheck(True, "")
    assert verdict("live_relevance_0-0-0") == CallCheck(False, "no call where one is expected")


def test_arguments_that_are_not_a_json_object_make_an_expected_call_wrong() -> None:
    for arguments in ('{"base": 10, "height": 5', "[10, 5]", ""):
        wrong = verdict("simple_python_0", ToolCall(name="calculate_triangle_area", arguments=arguments))
        assert wrong == CallCheck(False, "calculate_triangle_area: the arguments are not a JSON object")


def test_call_arguments() -> None:
    assert call_arguments(ToolCall(name="f", arguments='{"a": [1, 2.5]}')) == {"a": [1, 2.5]}
    for text in ("", "{", "[1]", '"a"', "null"):
        assert call_arguments(ToolCall(name="f", arguments=text)) is None


def test_an_expected_call_naming_no_offered_tool_is_bad_input() -> None:
    entry = bfcl_wheel.item("simple_python_0")
    with pytest.raises(InputError, match="calculate_triangle_area"):
        check_calls([call("calculate_triangle_area", base=10, height=5)], bfcl_wheel.answer(entry), [])


def test_trigger_none_and_any_without_items() -> None:
    # the triggers need no expected calls and no tools
    assert check_calls([], ToolAnswer(trigger="none"), []).correct
    assert check_calls([call("f")], ToolAnswer(trigger="any"), []).correct
