"""Expected calls and a tool_choice that contradict the item's own tool schema, so that no call counts right (or the
scorer counts right a call the schema refuses): one `error:` line naming the file, the item's id and the value, exit
2, nothing sent; BFCL's published data keeps its few such items, with one warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.errors import QualevalWarning
from qualeval.tasks import build_samples, load_task
from tests.tasks.test_tool_inputs import _run_error, _task, _tool, endpoint

__all__ = ["endpoint"]  # the fixture, imported for these tests

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "temp": {"type": "number"},
    },
    "required": ["city"],
}


def _one(calls: Any, **changes: Any) -> dict[str, Any]:
    sample = {"id": "paris", "question": "Weather in Paris?", "calls": calls}
    return {"tools": [_tool(WEATHER)], "samples": [sample], **changes}


WHERE = "field 'doc_to_calls': document 0 of split 'test', id 'paris': expected call get_weather: "
BAD_GOLD: list[tuple[dict[str, Any], str]] = [
    (
        _one([{"get_weather": {"city": ["Paris"], "town": ["Paris"]}}]),
        "parameter 'town' is not in the tool's schema (its parameters: city, days, unit, temp)",
    ),
    (_one([{"get_weather": {"days": [3]}}]), "required parameter 'city' is not in the expected call"),
    (_one([{"get_weather": {"city": [""]}}]), "required parameter 'city' may only be left out"),
    (_one([{"get_weather": {"city": ["Paris"], "days": ["3"]}}]), "parameter 'days' = '3' is not of type integer"),
    (_one([{"get_weather": {"city": ["Paris"], "days": [True]}}]), "parameter 'days' = True is not of type integer"),
    (
        _one([{"get_weather": {"city": ["Paris"], "unit": ["celsius", "kelvin"]}}]),
        "parameter 'unit' = 'kelvin' is not one of ['celsius', 'fahrenheit']",
    ),
    (_one([{"get_weather": {"city": ["Paris"], "days": []}}]), "parameter 'days' has no acceptable value"),
]


@pytest.mark.parametrize(("changes", "words"), BAD_GOLD, ids=[f"gold{i}" for i in range(len(BAD_GOLD))])
def test_an_expected_call_against_its_schema_is_one_line(
    endpoint: tuple[str, list[str]], tmp_path: Path, changes: dict[str, Any], words: str
) -> None:
    task = _task(tmp_path, **changes)
    message = _run_error(endpoint, tmp_path, task)
    assert message.startswith(f"error: {task}: {WHERE}{words}"), message
    shown = CliRunner().invoke(app, ["tasks", "show", task])
    assert shown.exit_code == 2 and f"{WHERE}{words}" in " ".join(shown.stderr.split()), shown.stderr


def test_expected_calls_the_schema_takes_load(tmp_path: Path) -> None:
    """An int for a number, "" marking an optional parameter, values within the enum: all the scorer can count right."""
    calls = [{"get_weather": {"city": ["Paris", "paris"], "temp": [20, 20.5], "unit": ["", "celsius"], "days": [""]}}]
    shown = CliRunner().invoke(app, ["tasks", "show", _task(tmp_path, **_one(calls))])
    assert shown.exit_code == 0, shown.stderr


SOME_CALL = [{"get_weather": {"city": ["Paris"]}}]
OTHER = _tool({"type": "object", "properties": {"q": {"type": "string"}}}, name="search")
NAMED_OTHER = {"type": "function", "function": {"name": "search"}}
BAD_CHOICE: list[tuple[dict[str, Any], str]] = [
    (_one(SOME_CALL, tool_choice="none"), "tool_choice 'none', but the item expects a call of get_weather"),
    (_one(None, trigger="any", tool_choice="none"), "tool_choice 'none', but the item expects a call"),
    (_one(None, trigger="none", tool_choice="required"), "tool_choice 'required', but the item expects no call"),
    (
        _one(SOME_CALL, tools=[_tool(WEATHER), OTHER], tool_choice=NAMED_OTHER),
        "tool_choice names search, but the item expects a call of get_weather",
    ),
    (
        _one(None, trigger="none", tools=[_tool(WEATHER), OTHER], tool_choice=NAMED_OTHER),
        "tool_choice names search, but the item expects no call",
    ),
]


@pytest.mark.parametrize(("changes", "words"), BAD_CHOICE, ids=[f"choice{i}" for i in range(len(BAD_CHOICE))])
def test_a_tool_choice_against_the_expected_calls_is_one_line(
    endpoint: tuple[str, list[str]], tmp_path: Path, changes: dict[str, Any], words: str
) -> None:
    task = _task(tmp_path, **changes)
    message = _run_error(endpoint, tmp_path, task)
    assert message.startswith(f"error: {task}: field 'tool_choice': document 0 of split 'test', id 'paris': {words}")


def test_bfcl_keeps_its_unwinnable_items_with_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """BFCL's live_multiple has two items expecting a parameter outside the tool's schema: the category loads, and
    says so once (over all 11 categories, BFCL's data have 4 such items)."""
    monkeypatch.setattr("qualeval.tasks.prompts._warned", set())  # another test of this process may have warned
    with pytest.warns(QualevalWarning) as caught:
        samples = build_samples(load_task("bfcl:live_multiple"))
    said = [str(w.message) for w in caught if "their own tool schema rules out" in str(w.message)]
    assert len(samples) > 1000 and len(said) == 1, said
    assert "2 item(s) expect a call" in said[0] and "id 'live_multiple_862-181-3'" in said[0], said
