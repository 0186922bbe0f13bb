"""One question asked with other tools is another item: the reference server keys tool items by the question and
the functions offered, and says when entries nothing tells apart answer differently."""

from __future__ import annotations

import warnings
from typing import Any

import httpx
import pytest

from qualeval.errors import QualevalWarning
from qualeval.records import ExpectedCall, ToolAnswer
from qualeval.sim import AnswerKey, Behaviour
from qualeval.sim.answerkey import KeyEntry
from qualeval.tasks.sample import Sample
from qualeval.wire import Message
from tests.conftest import fast_sim, sim_url

QUESTION = "Find the sum of 4 and 5."


def _tool(name: str) -> dict[str, Any]:
    params = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    return {"type": "function", "function": {"name": name, "parameters": params}}


ADD, WEATHER = [_tool("add")], [_tool("get_weather")]


def _sample(i: str, tools: list[dict[str, Any]], answer: ToolAnswer) -> Sample:
    return Sample(
        id=f"t/test/{i}",
        task="t",
        messages=(Message(role="user", content=QUESTION),),
        question=QUESTION,
        gold="",
        tools=tuple(tools),
        tool_answer=answer,
    )


CALLED = _sample("call", ADD, ToolAnswer(calls=(ExpectedCall(name="add", params={"x": (4,)}),)))
NONE = _sample("none", WEATHER, ToolAnswer(trigger="none"))


@pytest.mark.parametrize("order", [(CALLED, NONE), (NONE, CALLED)])
def test_the_same_question_with_other_tools_finds_its_own_entry(order: tuple[Sample, Sample]) -> None:
    key = AnswerKey.from_samples(order)
    called = key.find(QUESTION, ADD)
    assert called is not None and called.calls is not None and [c.name for c in called.calls] == ["add"]
    held = key.find(QUESTION, WEATHER)
    assert held is not None and held.calls == ()


def test_functions_of_one_name_with_other_parameters_are_other_tools() -> None:
    other = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {}}}}]
    key = AnswerKey.from_samples([CALLED, _sample("same-name", other, ToolAnswer(trigger="none"))])
    called, held = key.find(QUESTION, ADD), key.find(QUESTION, other)
    assert called is not None and called.calls and held is not None and held.calls == ()


def test_entries_nothing_tells_apart_are_said_once_and_the_last_is_served() -> None:
    entries = [KeyEntry(QUESTION, "9"), KeyEntry(QUESTION, "10"), KeyEntry("Another question?", "x")]
    with pytest.warns(QualevalWarning, match=r"1 question.*Find the sum"):
        key = AnswerKey(entries)
    found = key.find(QUESTION)
    assert found is not None and found.answer == "10"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AnswerKey([KeyEntry(QUESTION, "9"), KeyEntry(QUESTION, "9")])  # the same answer twice: nothing to say


def test_the_server_answers_each_item_by_the_tools_its_request_offers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("qualeval.sim.state.answer_keys", lambda config: (AnswerKey.from_samples([CALLED, NONE]), None))
    with sim_url(fast_sim(behaviour=Behaviour(accuracy=1.0, reasoning_tokens=8))) as url:
        for tools, names in ((ADD, ["add"]), (WEATHER, [])):
            body = {"model": "sim", "messages": [{"role": "user", "content": QUESTION}], "tools": tools}
            message = httpx.post(f"{url}/chat/completions", json=body).json()["choices"][0]["message"]
            assert [c["function"]["name"] for c in message.get("tool_calls") or ()] == names
