"""qualeval's client against llama.cpp's real llama-server: each request shapes the output with a GBNF grammar,
and the server's own reasoning parser splits it, as it does for a real Qwen3."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from qualeval.wire.models import ChatRequest, ChatResponse, Message
from tests.conftest import chat
from tests.real_server.conftest import ANSWER, OPENED, THINK, LlamaServer, Servers

pytestmark = pytest.mark.real_server

QUESTION = (
    Message(role="system", content="You are a calculator."),
    Message(role="user", content="What is 2+3? Think, then answer as 'Answer: N'."),
)
SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])


def ask(server: LlamaServer, grammar: str | None = None, **kw: Any) -> ChatResponse:
    extra = kw.pop("extra_body", {})
    if grammar is not None:
        extra["grammar"] = grammar
    cfg = {k: kw.pop(k) for k in ("thinking_opened", "thinking_switch") if k in kw}
    request = ChatRequest(model="tiny", messages=QUESTION, max_tokens=kw.pop("max_tokens", 200), extra_body=extra, **kw)
    return chat(server.url, request, timeout=300, **cfg)


@STREAMS
def test_thinking_is_split_by_the_server(llama_server: LlamaServer, stream: bool) -> None:
    resp = ask(llama_server, THINK, stream=stream)
    got = resp.completion
    assert resp.error is None and got.status == "ok"
    assert got.reasoning_source == "field:reasoning_content" and set(resp.raw_reasoning) == {"reasoning_content"}
    assert re.fullmatch(r"Answer: \d{1,3}", got.content), got.content
    assert re.fullmatch(r"[a-z]{2,7}( [a-z]{2,7}){2,7}\n", got.reasoning), got.reasoning  # newline kept before </think>
    assert got.reasoning_closed
    if stream:
        t = resp.timing
        assert t.ttft is not None and t.first_reasoning is not None and t.first_content is not None
        assert t.ttft <= t.first_reasoning <= t.first_content <= t.end  # type: ignore[operator]


@STREAMS
def test_thinking_off(llama_server: LlamaServer, stream: bool) -> None:
    resp = ask(llama_server, ANSWER, stream=stream, thinking=False)
    got = resp.completion
    assert got.status == "ok" and got.reasoning == "" and resp.raw_reasoning == {}
    assert re.fullmatch(r"Answer: \d{1,3}", got.content)
    if stream:
        assert resp.timing.first_content is not None  # issue 11 item 2: time to first answer when not thinking


def test_thinking_off_through_reasoning_effort(llama_server: LlamaServer) -> None:
    resp = ask(llama_server, ANSWER, stream=False, thinking=False, thinking_switch="reasoning_effort")
    assert resp.completion.status == "ok" and resp.completion.reasoning == ""
    assert resp.usage.prompt_tokens == ask(llama_server, ANSWER, stream=False, thinking=False).usage.prompt_tokens


def test_thinking_off_but_the_model_still_writes_tags(llama_server: LlamaServer) -> None:
    # the template pre-filled an empty think block, so the server parses nothing: the tags stay in content
    resp = ask(llama_server, THINK, stream=False, thinking=False)
    assert resp.raw_reasoning == {} and (resp.raw_content or "").startswith("<think>")
    assert resp.completion.status == "ok" and "Answer: " in resp.completion.content


@STREAMS
def test_template_that_opens_the_block(servers: Servers, stream: bool) -> None:
    opened = servers.get("opened")
    same = {"cache_prompt": False}  # with a fixed seed, the same generation twice
    resp = ask(opened, OPENED, stream=stream, seed=7, extra_body=dict(same))
    assert resp.completion.status == "ok"
    assert resp.completion.reasoning_source == "field:reasoning_content"
    assert re.fullmatch(r"Answer: \d{1,3}", resp.completion.content)
    # unparsed, the server puts the prompt's <think>\n back in front: both tags reach the client, and
    # qualeval's own splitter finds what the server's parser found
    raw = ask(opened, OPENED, stream=stream, seed=7, extra_body={**same, "reasoning_format": "none"})
    assert (raw.raw_content or "").startswith("<think>\n") and raw.raw_reasoning == {}
    assert raw.completion.reasoning_source == "inline:paired"
    assert raw.completion.content.strip() == resp.completion.content
    assert raw.completion.reasoning.strip() == resp.completion.reasoning.strip()


@STREAMS
def test_truncated_inside_the_thinking(llama_server: LlamaServer, stream: bool) -> None:
    resp = ask(llama_server, THINK, stream=stream, max_tokens=5)
    got = resp.completion
    assert resp.finish_reason == "length"
    assert got.status == "reasoning_truncated" and got.content == "" and got.reasoning
    assert not got.reasoning_closed


@STREAMS
@pytest.mark.parametrize("budget", [1, 2])
def test_truncated_right_after_the_open_tag(llama_server: LlamaServer, stream: bool, budget: int) -> None:
    # llama.cpp's quirk: non-stream content is the raw "<think>", the stream carries no text at all
    resp = ask(llama_server, THINK, stream=stream, max_tokens=budget)
    assert resp.finish_reason == "length" and resp.usage.completion_tokens == budget
    if not stream:
        assert (resp.raw_content or "").startswith("<think>")
    assert resp.completion.content == ""
    assert resp.completion.status == "reasoning_truncated", resp.completion


@STREAMS
def test_json_schema_after_the_optional_think_block(llama_server: LlamaServer, stream: bool) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}
    finished = []
    for seed in range(4):
        resp = ask(llama_server, stream=stream, seed=seed, max_tokens=1500, response_format=fmt)
        assert resp.error is None
        if resp.completion.status == "ok":
            assert type(orjson.loads(resp.completion.content)["answer"]) is int
            finished.append(seed)
        else:  # the think block is not constrained: a random model may think past the budget
            assert resp.completion.status == "reasoning_truncated"
    assert finished, "no seed ended its thinking within 1500 tokens"
    off = ask(llama_server, stream=stream, thinking=False, response_format=fmt)
    assert off.completion.reasoning == "" and type(orjson.loads(off.completion.content)["answer"]) is int


@STREAMS
def test_token_counts_and_timing_agree_with_the_server(llama_server: LlamaServer, stream: bool) -> None:
    resp = ask(llama_server, THINK, stream=stream)
    timings = resp.server_timings
    assert timings is not None and resp.error is None
    assert resp.usage.completion_tokens == timings["predicted_n"]
    assert resp.usage.prompt_tokens == timings["prompt_n"] + timings["cache_n"]
    assert not resp.usage.completion_estimated
    # the server's intervals lie inside the client's: a bound that holds at any speed (1 ms for rounding)
    assert timings["prompt_ms"] + timings["predicted_ms"] <= resp.timing.end + 1.0  # type: ignore[operator]
    if stream:
        assert timings["prompt_ms"] <= resp.timing.ttft + 1.0  # type: ignore[operator]


def test_token_counts_come_from_timings_when_usage_is_missing(llama_server: LlamaServer) -> None:
    # without include_usage llama-server sends no usage, only `timings` on the finish chunk (issue 11 item 8)
    resp = ask(llama_server, THINK, stream=True, extra_body={"stream_options": {"include_usage": False}})
    timings = resp.server_timings
    assert timings is not None
    assert resp.usage.completion_tokens == timings["predicted_n"]
    assert resp.usage.prompt_tokens == timings["prompt_n"] + timings["cache_n"]
    assert not resp.usage.completion_estimated


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_errors_are_final_and_named(llama_server: LlamaServer, stream: bool) -> None:
    bad = ask(llama_server, 'root ::= "a" undefined', stream=stream)
    assert bad.completion.status == "transport_error" and bad.http_status == 400 and bad.attempts == 1
    assert "grammar" in (bad.error or "")
    words = (Message(role="user", content="zq " * 5000),)
    long = ChatRequest(model="tiny", messages=words, max_tokens=4, stream=stream)
    over = chat(llama_server.url, long, timeout=300)
    assert over.http_status == 400 and over.attempts == 1 and "context" in (over.error or "")
