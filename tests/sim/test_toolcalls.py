"""The reference server answers keyed tool-call items with calls, and breaks them as servers' tool parsers do.

Seen through the plain openai client and raw HTTP, never through qualeval's wire readers: the server is checked
against the OpenAI wire itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from qualeval.errors import InputError
from qualeval.records import ExpectedCall, ToolAnswer
from qualeval.sim import AnswerKey, Behaviour, SimConfig
from qualeval.tasks.sample import Sample
from qualeval.wire import Message
from tests.conftest import fast_sim, sim_url

WEATHER = "What is the weather in San Francisco right now?"
JOKE = "Tell me a joke about cats, please."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
ARGS = {"city": "San Francisco", "unit": "celsius"}
BOTH = "What is the weather in Paris and in Rome today?"


def _key(tmp: Path, items: int = 0) -> Path:
    rows = [
        {"question": WEATHER, "tool_calls": [{"name": "get_weather", "arguments": ARGS}]},
        {"question": JOKE, "answer": "no call", "tool_calls": []},
        {
            "question": BOTH,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": c}} for c in ("Paris", "Rome")],
        },
    ]
    rows += [
        {
            "question": f"Weather question number {n} for city {n}?",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": f"C {n}"}}],
        }
        for n in range(items)
    ]
    path = tmp / "key.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _server(tmp: Path, flavour: str = "vllm", accuracy: float = 1.0, **kw: Any) -> Iterator[str]:
    behaviour = Behaviour(accuracy=accuracy, reasoning_tokens=20)
    with sim_url(fast_sim(flavour, answers=_key(tmp, 40), behaviour=behaviour, **kw)) as url:
        yield url


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _server(tmp_path_factory.mktemp("key"))


def _body(question: str, stream: bool, tools: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "sim", "messages": [{"role": "user", "content": question}], "stream": stream}
    return {**body, "tools": TOOLS} if tools else body


def whole(
    url: str, question: str = WEATHER, fault: str | None = None, tools: bool = True, **extra: Any
) -> dict[str, Any]:
    headers = {"x-qualeval-sim": f"fault={fault}"} if fault else {}
    body = {**_body(question, False, tools), **extra}
    resp = httpx.post(f"{url}/chat/completions", json=body, headers=headers, timeout=30)
    resp.raise_for_status()
    return resp.json()


def chunks(url: str, question: str = WEATHER, fault: str | None = None, **extra: Any) -> list[dict[str, Any]]:
    headers = {"x-qualeval-sim": f"fault={fault}"} if fault else {}
    out = []
    body = {**_body(question, True), **extra}
    with httpx.stream("POST", f"{url}/chat/completions", json=body, headers=headers, timeout=30) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
    return [c for c in out if c.get("choices")]


def streamed_calls(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [tc for c in parts for tc in (c["choices"][0]["delta"].get("tool_calls") or [])]


def merged(parts: list[dict[str, Any]]) -> dict[int, dict[str, str]]:
    calls: dict[int, dict[str, str]] = {}
    for tc in streamed_calls(parts):
        call = calls.setdefault(tc["index"], {"name": "", "arguments": ""})
        call["name"] += tc.get("function", {}).get("name") or ""
        call["arguments"] += tc.get("function", {}).get("arguments") or ""
    return calls


def text_of(parts: list[dict[str, Any]], field: str) -> str:
    return "".join(c["choices"][0]["delta"].get(field) or "" for c in parts)


def test_keyed_call_non_streamed_through_openai_client(url: str) -> None:
    client = openai.OpenAI(base_url=url, api_key="x")
    resp = client.chat.completions.create(
        model="sim",
        messages=[{"role": "user", "content": WEATHER}],
        tools=TOOLS,  # type: ignore[list-item]
    )
    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert not choice.message.content
    (call,) = choice.message.tool_calls or []
    assert call.type == "function" and call.id.startswith("chatcmpl-tool-")  # vLLM's ids
    assert call.function.name == "get_weather"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == ARGS  # type: ignore[union-attr]
    assert (choice.message.model_extra or {}).get("reasoning")  # the thinking came with the call


def test_keyed_call_streamed_in_indexed_fragments_after_the_reasoning(url: str) -> None:
    client = openai.OpenAI(base_url=url, api_key="x")
    stream = client.chat.completions.create(
        model="sim",
        messages=[{"role": "user", "content": WEATHER}],
        tools=TOOLS,
        stream=True,  # type: ignore[list-item]
    )
    seen = [c.model_dump() for c in stream if c.choices]
    kinds = ["call" if c["choices"][0]["delta"].get("tool_calls") else "reasoning" for c in seen[:-1]]
    assert "call" in kinds and "reasoning" not in kinds[kinds.index("call") :]
    deltas = streamed_calls(seen)
    assert all(d["index"] == 0 for d in deltas)
    assert deltas[0]["id"].startswith("chatcmpl-tool-") and deltas[0]["function"]["name"] == "get_weather"
    assert all(d["id"] is None and d["function"]["name"] is None for d in deltas[1:])
    assert len(deltas) >= 3  # the header and the arguments in several fragments
    assert json.loads(merged(seen)[0]["arguments"]) == ARGS
    assert seen[-1]["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("stream", [True, False])
def test_no_call_item_and_a_request_without_tools_get_text(url: str, stream: bool) -> None:
    if stream:
        parts = chunks(url, JOKE)
        assert not streamed_calls(parts) and "no call" in text_of(parts, "content")
        assert parts[-1]["choices"][0]["finish_reason"] == "stop"
    else:
        assert "no call" in whole(url, JOKE)["choices"][0]["message"]["content"]
    plain = whole(url, WEATHER, tools=False)["choices"][0]
    assert plain["finish_reason"] == "stop" and not plain["message"].get("tool_calls")


def test_accuracy_makes_calls_wrong_alike_streamed_and_not(tmp_path: Path) -> None:
    for url in _server(tmp_path, accuracy=0.0):
        call = whole(url)["choices"][0]["message"]["tool_calls"][0]["function"]
        args = json.loads(call["arguments"])
        assert (call["name"], args) != ("get_weather", ARGS)
        assert json.loads(merged(chunks(url))[0]["arguments"]) == args


@pytest.mark.parametrize("stream", [True, False])
def test_call_in_reasoning(url: str, stream: bool) -> None:
    if stream:
        parts = chunks(url, fault="call_in_reasoning")
        reasoning, finish, calls = text_of(parts, "reasoning"), parts[-1]["choices"][0]["finish_reason"], None
        calls = streamed_calls(parts)
    else:
        choice = whole(url, fault="call_in_reasoning")["choices"][0]
        reasoning, finish, calls = (
            choice["message"]["reasoning"],
            choice["finish_reason"],
            choice["message"].get("tool_calls"),
        )
    assert "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco\n</parameter>" in reasoning
    assert not calls and finish == "stop"


def test_markup_in_content_only_when_streamed(url: str) -> None:
    parts = chunks(url, fault="markup_in_content_stream")
    content = text_of(parts, "content")
    assert not streamed_calls(parts) and parts[-1]["choices"][0]["finish_reason"] == "stop"
    inner = content.split("<tool_call>", 1)[1].split("</tool_call>", 1)[0]
    assert json.loads(inner) == {"name": "get_weather", "arguments": ARGS}
    choice = whole(url, fault="markup_in_content_stream")["choices"][0]
    assert (
        choice["finish_reason"] == "tool_calls"
        and json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"]) == ARGS
    )


@pytest.mark.parametrize("stream", [True, False])
def test_empty_tool_calls_and_stop_with_calls(url: str, stream: bool) -> None:
    required = {"tool_choice": "required"}
    if stream:
        empty, stop = chunks(url, fault="empty_tool_calls", **required), chunks(url, fault="stop_with_calls")
        assert not streamed_calls(empty) and empty[-1]["choices"][0]["finish_reason"] == "tool_calls"
        assert json.loads(merged(stop)[0]["arguments"]) == ARGS and stop[-1]["choices"][0]["finish_reason"] == "stop"
    else:
        e = whole(url, fault="empty_tool_calls", **required)["choices"][0]
        s = whole(url, fault="stop_with_calls")["choices"][0]
        assert e["message"]["tool_calls"] == [] and e["finish_reason"] == "tool_calls"
        assert len(s["message"]["tool_calls"]) == 1 and s["finish_reason"] == "stop"


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("choice", [None, "auto", {"type": "function", "function": {"name": "get_weather"}}])
def test_empty_tool_calls_only_under_required(url: str, stream: bool, choice: Any) -> None:
    """The empty list is what a server that enforces `required` sends (vLLM #53363): `auto`, a named function or no
    tool_choice get the call."""
    extra = {} if choice is None else {"tool_choice": choice}
    if stream:
        parts = chunks(url, fault="empty_tool_calls", **extra)
        args, finish = merged(parts)[0]["arguments"], parts[-1]["choices"][0]["finish_reason"]
    else:
        got = whole(url, fault="empty_tool_calls", **extra)["choices"][0]
        args, finish = got["message"]["tool_calls"][0]["function"]["arguments"], got["finish_reason"]
    assert json.loads(args) == ARGS and finish == "tool_calls"


def _args(url: str, stream: bool, fault: str) -> tuple[str, str]:
    if stream:
        parts = chunks(url, fault=fault)
        return merged(parts)[0]["arguments"], parts[-1]["choices"][0]["finish_reason"]
    choice = whole(url, fault=fault)["choices"][0]
    return choice["message"]["tool_calls"][0]["function"]["arguments"], choice["finish_reason"]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(("fault", "finish"), [("args_invalid_json", "tool_calls"), ("truncated_call", "length")])
def test_arguments_that_are_not_json(url: str, stream: bool, fault: str, finish: str) -> None:
    args, got = _args(url, stream, fault)
    assert got == finish and args.startswith("{")
    with pytest.raises(json.JSONDecodeError):
        json.loads(args)


@pytest.mark.parametrize("stream", [True, False])
def test_whitespace_stripped_from_string_values(url: str, stream: bool) -> None:
    args, finish = _args(url, stream, "whitespace_stripped")
    assert json.loads(args) == {"city": "SanFrancisco", "unit": "celsius"} and finish == "tool_calls"


def test_delta_without_index_streamed_only(url: str) -> None:
    deltas = streamed_calls(chunks(url, fault="delta_without_index"))
    assert deltas and all("index" not in d for d in deltas)
    assert deltas[0]["function"]["name"] == "get_weather"
    choice = whole(url, fault="delta_without_index")["choices"][0]
    assert json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"]) == ARGS


def test_max_tokens_inside_the_call_ends_length(url: str) -> None:
    body = {**_body(WEATHER, False), "max_tokens": 30}
    choice = httpx.post(f"{url}/chat/completions", json=body, timeout=30).json()["choices"][0]
    calls = choice["message"].get("tool_calls") or []
    assert choice["finish_reason"] == "length"
    assert not calls or not calls[0]["function"]["arguments"].endswith("}")


def test_drawn_faults_strike_a_share_of_items_alike_streamed_and_not(tmp_path: Path) -> None:
    for url in _server(tmp_path, faults={"empty_tool_calls": 0.5}):
        questions = [f"Weather question number {n} for city {n}?" for n in range(40)]
        required = {"tool_choice": "required"}
        hit = [not whole(url, q, **required)["choices"][0]["message"]["tool_calls"] for q in questions]
        assert 8 <= sum(hit) <= 32
        again = [not streamed_calls(chunks(url, q, **required)) for q in questions]
        assert again == hit  # by item: the same items break streamed, and on every retry
        assert hit == [not whole(url, q, **required)["choices"][0]["message"]["tool_calls"] for q in questions]


@pytest.mark.parametrize("flavour", ["sglang", "deepseek", "openrouter", "inline-think", "openai", "llamacpp"])
def test_other_flavours_carry_calls_the_same_way(tmp_path: Path, flavour: str) -> None:
    for url in _server(tmp_path, flavour):
        choice = whole(url)["choices"][0]
        assert choice["finish_reason"] == "tool_calls"
        assert json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"]) == ARGS
        parts = chunks(url)
        assert json.loads(merged(parts)[0]["arguments"]) == ARGS
        assert {c["choices"][0]["finish_reason"] for c in parts} - {None} == {"tool_calls"}


def test_tool_fault_rates_add_up_per_group() -> None:
    SimConfig(faults={"429": 0.6, "empty_tool_calls": 0.6})  # one draw per request, another per item
    with pytest.raises(InputError, match="an item meets one fault at most"):
        SimConfig(faults={"empty_tool_calls": 0.6, "truncated_call": 0.6})


def _sample(n: int, answer: ToolAnswer) -> Sample:
    question = f"tool question {n}"
    return Sample(
        id=f"t/{n}",
        task="t",
        messages=(Message(role="user", content=question),),
        question=question,
        gold="",
        tools=tuple(TOOLS),
        tool_answer=answer,
    )


def test_key_from_samples_serves_their_tool_answers() -> None:
    key = AnswerKey.from_samples(
        [
            _sample(
                0, ToolAnswer(calls=(ExpectedCall(name="f", params={"a": ("x", "y"), "b": ("", 3), "c": (True,)}),))
            ),
            _sample(1, ToolAnswer(trigger="none")),
            _sample(2, ToolAnswer(trigger="any")),
        ]
    )
    calls = [key.find(f"tool question {n}").calls for n in range(3)]  # type: ignore[union-attr]
    assert [(c.name, c.arguments) for c in calls[0] or ()] == [("f", {"a": "x", "c": True})]
    assert calls[1] == ()
    assert [(c.name, c.arguments) for c in calls[2] or ()] == [("get_weather", {"city": "a"})]


def test_parallel_calls_each_with_its_own_index(url: str) -> None:
    parts = chunks(url, BOTH)
    calls = merged(parts)
    assert sorted(calls) == [0, 1]
    assert [json.loads(calls[i]["arguments"])["city"] for i in (0, 1)] == ["Paris", "Rome"]
    heads = [d for d in streamed_calls(parts) if d.get("id")]
    assert [d["index"] for d in heads] == [0, 1] and len({d["id"] for d in heads}) == 2
    message = whole(url, BOTH)["choices"][0]["message"]
    assert [json.loads(c["function"]["arguments"])["city"] for c in message["tool_calls"]] == ["Paris", "Rome"]


@pytest.mark.parametrize("stream", [True, False])
def test_llamacpp_call_in_reasoning_and_budget(tmp_path: Path, stream: bool) -> None:
    for url in _server(tmp_path, "llamacpp"):
        if stream:
            parts = chunks(url, fault="call_in_reasoning")
            reasoning, calls = text_of(parts, "reasoning_content"), streamed_calls(parts)
        else:
            message = whole(url, fault="call_in_reasoning")["choices"][0]["message"]
            reasoning, calls = message.get("reasoning_content") or "", message.get("tool_calls")
        assert "<function=get_weather>" in reasoning and not calls
        body = {**_body(WEATHER, stream=False), "max_tokens": 2}
        choice = httpx.post(f"{url}/chat/completions", json=body, timeout=30).json()["choices"][0]
        assert choice["finish_reason"] == "length" and not choice["message"].get("tool_calls")


def test_outcome_empty_leaves_only_the_reasoning(url: str) -> None:
    headers = {"x-qualeval-sim": "outcome=empty"}
    body = httpx.post(f"{url}/chat/completions", json=_body(WEATHER, False), headers=headers, timeout=30).json()
    message = body["choices"][0]["message"]
    assert message["reasoning"] and not message.get("content") and not message.get("tool_calls")
