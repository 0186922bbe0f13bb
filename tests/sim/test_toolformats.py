"""The reference server writes leaked calls in each engine's markup, streams calls in each engine's chunking, and
drops calls at high effort when asked.

The markup is written by the server's own writer (qualeval.sim.toolwrite, from the chat templates), and read back
here by qualeval's reader (reasoning.find_markup): each checks the other, and neither is graded by itself."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualeval.errors import InputError
from qualeval.reasoning import find_markup
from qualeval.sim import Behaviour, SimConfig
from qualeval.sim.behaviour import tokenize
from qualeval.sim.toolwrite import MARKUP_FORMATS, write_calls
from tests.conftest import fast_sim, sim_url
from tests.sim.test_toolcalls import ARGS, BOTH, _key, chunks, merged, streamed_calls, text_of, whole

CALLS = [
    ("get_weather", {"city": "San Francisco", "unit": "celsius"}),
    ("set_alarm", {"hour": 7, "days": ["mon", "tue"], "loud": True, "extra": {"snooze": 1.5}, "note": "über\nzwei"}),
]


def _read(text: str) -> tuple[str, list[tuple[str, Any]]] | None:
    found = find_markup(text)
    if found is None or not found.whole:
        return None
    return found.format, [(c.name, json.loads(c.arguments)) for c in found.calls]


@pytest.mark.parametrize("fmt", MARKUP_FORMATS)
@pytest.mark.parametrize("n", [1, 2])
def test_every_format_the_server_writes_reads_back_as_the_same_calls(fmt: str, n: int) -> None:
    written = write_calls(fmt, CALLS[:n])
    # the Llama 3 JSON form is the whole reply; the others may follow a sentence
    text = written if fmt == "llama3_json" else "I will look that up.\n" + written
    assert _read(text) == (fmt, [(name, args) for name, args in CALLS[:n]])


def _server(tmp: Path, flavour: str = "vllm", **kw: Any) -> Iterator[str]:
    behaviour = Behaviour(accuracy=1.0, reasoning_tokens=20)
    with sim_url(fast_sim(flavour, answers=_key(tmp, 40), behaviour=behaviour, **kw)) as url:
        yield url


@pytest.fixture(scope="module")
def glm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _server(tmp_path_factory.mktemp("key"), tool_format="glm")


@pytest.mark.parametrize("fmt", MARKUP_FORMATS)
def test_a_leaky_server_writes_the_call_in_its_tool_format(tmp_path: Path, fmt: str) -> None:
    for url in _server(tmp_path, tool_format=fmt):
        for stream in (True, False):
            if stream:
                parts = chunks(url, BOTH, fault="markup_in_content")
                content, calls = text_of(parts, "content"), streamed_calls(parts)
                finish = parts[-1]["choices"][0]["finish_reason"]
            else:
                choice = whole(url, BOTH, fault="markup_in_content")["choices"][0]
                content, calls, finish = (
                    choice["message"]["content"],
                    choice["message"].get("tool_calls"),
                    choice["finish_reason"],
                )
            assert not calls and finish == "stop"
            assert _read(content) == (fmt, [("get_weather", {"city": c}) for c in ("Paris", "Rome")])


@pytest.mark.parametrize("stream", [True, False])
def test_call_in_reasoning_in_the_tool_format(glm: str, stream: bool) -> None:
    if stream:
        parts = chunks(glm, fault="call_in_reasoning")
        reasoning, content = text_of(parts, "reasoning"), text_of(parts, "content")
    else:
        message = whole(glm, fault="call_in_reasoning")["choices"][0]["message"]
        reasoning, content = message["reasoning"], message.get("content")
    assert not content and "<arg_key>city</arg_key>" in reasoning
    assert _read(reasoning) == ("glm", [("get_weather", ARGS)])


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("effort", ["high", "xhigh"])
def test_calls_dropped_at_high_effort(glm: str, stream: bool, effort: str) -> None:
    fault = "calls_dropped_at_high_effort"
    for asked, dropped in ((effort, True), ("low", False), (None, False)):
        extra = {} if asked is None else {"reasoning_effort": asked}
        if stream:
            parts = chunks(glm, fault=fault, **extra)
            content, calls = text_of(parts, "content"), [json.loads(c["arguments"]) for c in merged(parts).values()]
            finish = parts[-1]["choices"][0]["finish_reason"]
        else:
            choice = whole(glm, fault=fault, **extra)["choices"][0]
            content, finish = choice["message"].get("content"), choice["finish_reason"]
            calls = [json.loads(c["function"]["arguments"]) for c in choice["message"].get("tool_calls") or []]
        if dropped:
            assert not calls and finish == "stop" and _read(content) == ("glm", [("get_weather", ARGS)])
        else:
            assert calls == [ARGS] and finish == "tool_calls" and not content


def test_calls_dropped_at_high_effort_drawn_per_item(tmp_path: Path) -> None:
    for url in _server(tmp_path, faults={"calls_dropped_at_high_effort": 0.3}):
        questions = [f"Weather question number {n} for city {n}?" for n in range(40)]
        high = [not streamed_calls(chunks(url, q, reasoning_effort="high")) for q in questions]
        assert 4 <= sum(high) <= 24  # about 3 in 10
        assert high == [not streamed_calls(chunks(url, q, reasoning_effort="high")) for q in questions]
        assert not any(not streamed_calls(chunks(url, q, reasoning_effort="medium")) for q in questions)


def test_markup_in_content_stream_stays_right_when_not_streamed(glm: str) -> None:
    parts = chunks(glm, fault="markup_in_content_stream")
    assert not streamed_calls(parts) and _read(text_of(parts, "content")) == ("glm", [("get_weather", ARGS)])
    choice = whole(glm, fault="markup_in_content_stream")["choices"][0]
    assert json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"]) == ARGS


def test_vllm_chunking(tmp_path: Path) -> None:
    """vLLM: the first delta carries id, type, index and name (no arguments key), in its model's key order; the
    arguments follow in deltas of several tokens; `chatcmpl-tool-` ids and json.dumps's spacing."""
    for url in _server(tmp_path):
        deltas = streamed_calls(chunks(url))
        assert list(deltas[0]) == ["id", "type", "index", "function"] and deltas[0]["function"] == {
            "name": "get_weather"
        }
        assert re.fullmatch(r"chatcmpl-tool-[0-9a-f]{32}", deltas[0]["id"])
        args = [d["function"]["arguments"] for d in deltas[1:]]
        assert all(list(d) == ["index", "function"] for d in deltas[1:])
        assert max(len(tokenize(a)) for a in args) > 1  # several tokens a delta
        assert "".join(args) == json.dumps(ARGS)
        call = whole(url)["choices"][0]["message"]["tool_calls"][0]
        assert list(call) == ["id", "type", "function"] and call["function"]["arguments"] == json.dumps(ARGS)


def test_llamacpp_chunking_as_captured(tmp_path: Path) -> None:
    """llama-server (tests/data/tool_captures/qwen35__required_*): the first delta carries index, id, type, name and
    the first token of the arguments; then one token an event; 32-letter ids; compact arguments; a whole call's
    keys come type, function, id."""
    capture = Path(__file__).parents[1] / "data" / "tool_captures" / "qwen35__required_stream.sse"
    real = [json.loads(line[6:]) for line in capture.read_text().splitlines() if line.startswith("data: {")]
    real_head = next(c for c in real if c["choices"] and c["choices"][0]["delta"].get("tool_calls"))
    real_head = real_head["choices"][0]["delta"]["tool_calls"][0]
    for url in _server(tmp_path, "llamacpp"):
        deltas = streamed_calls(chunks(url))
        assert list(deltas[0]) == list(real_head) and list(deltas[0]["function"]) == ["name", "arguments"]
        assert deltas[0]["function"]["arguments"] == "{" == real_head["function"]["arguments"]
        assert re.fullmatch(r"[A-Za-z0-9]{32}", deltas[0]["id"])
        assert all(len(tokenize(d["function"]["arguments"])) == 1 for d in deltas[1:])  # a token an event
        text = deltas[0]["function"]["arguments"] + "".join(d["function"]["arguments"] for d in deltas[1:])
        assert text == json.dumps(ARGS, separators=(",", ":"))
        call = whole(url)["choices"][0]["message"]["tool_calls"][0]
        assert list(call) == ["type", "function", "id"]


def test_an_unknown_tool_format_is_refused() -> None:
    with pytest.raises(InputError, match="unknown tool format 'qwen4'"):
        SimConfig(tool_format="qwen4")


def test_the_tool_format_flag_reaches_the_server_config() -> None:
    from qualeval.cli.serve_sim import sim_config, sim_parameters

    values = {p.name: p.default for p in sim_parameters()}
    assert sim_config(values).tool_format is None
    assert sim_config({**values, "tool_format": "kimi_k2"}).tool_format == "kimi_k2"
