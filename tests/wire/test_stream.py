"""Streaming: the same result whether a response arrives whole or cut at any byte."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qualeval.records import ClientConfig
from qualeval.sim.answerkey import AnswerKey, KeyEntry
from qualeval.sim.behaviour import Behaviour, generate
from qualeval.sim.flavours import FLAVOURS
from qualeval.sim.frames import Ctx
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatResponse
from qualeval.wire.sse import SSEDecoder
from tests.conftest import ask

KEY = AnswerKey([KeyEntry("How many eggs are left if 16 are laid and 3 eaten?", "13")])
QUESTION = KEY.entries[0].question
CTX = Ctx(id="chatcmpl-test", created=1760000000, model="sim", prompt_tokens=20, include_usage=True)


def wire(flavour: str, *, max_tokens: int | None = None, stream: bool = True) -> bytes:
    f = FLAVOURS[flavour]
    gen = generate(
        QUESTION,
        behaviour=Behaviour(reasoning_tokens=30, trap_rate=1.0),
        key=KEY,
        max_tokens=max_tokens,
        thinking=f.reasoning,
        constraint=None,
        constraint_skips_thinking=False,
        directives={"outcome": "correct"},
    )
    if not stream:
        return f.whole(gen, CTX)
    return b"".join(data for _, data in f.stream(gen, CTX) if data)


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def replay(chunks: Sequence[bytes], *, stream: bool = True, **cfg: object) -> ChatResponse:
    kind = "text/event-stream" if stream else "application/json"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": kind}, stream=_Chunks(chunks))

    config = ClientConfig(base_url="http://sim.test/v1", api_key=None, **cfg)  # type: ignore[arg-type]

    async def go() -> ChatResponse:
        async with ChatClient(config, transport=httpx.MockTransport(handler)) as client:
            return await client.chat(ask(QUESTION, stream=stream))

    return asyncio.run(go())


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({p % (len(data) + 1) for p in points} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def essence(resp: ChatResponse) -> tuple[object, ...]:
    return (resp.completion, resp.raw_content, resp.raw_reasoning, resp.finish_reason, resp.usage, resp.error)


@given(st.lists(st.binary(max_size=40), max_size=20))
def test_sse_decoder_is_chunking_invariant(parts: list[bytes]) -> None:
    events = [b"data: " + p.replace(b"\n", b" ").replace(b"\r", b" ") for p in parts]
    data = b"\n\n".join(events) + b"\n\n: comment\n\ndata: [DONE]\n\n"
    whole = SSEDecoder().feed(data)
    for size in (1, 2, 7):
        decoder = SSEDecoder()
        got = [e for i in range(0, len(data), size) for e in decoder.feed(data[i : i + size])]
        assert got + decoder.close() == whole


def test_sse_decoder_joins_multiline_data_and_handles_crlf() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"event: x\r\ndata: a\r\ndata: b\r\n\r\n: keepalive\n\ndata: c") == [b"a\nb"]
    assert decoder.close() == [b"c"]


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(points=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=40))
def test_stream_result_does_not_depend_on_chunking(flavour: str, points: list[int]) -> None:
    data = wire(flavour)
    reference = replay([data])
    assert reference.error is None
    assert essence(replay(cut(data, points))) == essence(reference)


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_every_byte_split_gives_the_same_result(flavour: str) -> None:
    """One byte per read: tags, multi-byte characters and JSON split everywhere."""
    data = wire(flavour, max_tokens=25)
    assert essence(replay([data[i : i + 1] for i in range(len(data))])) == essence(replay([data]))


@pytest.mark.parametrize(
    "flavour", ["vllm", "vllm-0.13", "vllm-0.10", "deepseek", "openrouter", "inline-think", "harmony", "plain"]
)
def test_stream_and_whole_agree(flavour: str) -> None:
    streamed = replay([wire(flavour)])
    whole = replay([wire(flavour, stream=False)], stream=False)
    assert streamed.completion == whole.completion
    assert streamed.usage == whole.usage


@pytest.mark.parametrize("flavour", ["sglang", "llamacpp", "ollama"])
def test_stream_and_whole_agree_up_to_whitespace_for_trimming_servers(flavour: str) -> None:
    streamed = replay([wire(flavour)]).completion
    whole = replay([wire(flavour, stream=False)], stream=False).completion
    assert streamed.content.strip() == whole.content.strip()
    assert streamed.reasoning.strip() == whole.reasoning.strip()
    assert (streamed.status, streamed.reasoning_source) == (whole.status, whole.reasoning_source)


def test_qwen3_leak_differs_between_stream_and_whole_as_documented() -> None:
    # non-stream: content = "A</think>\n\nB" (split by us); stream: the </think> chunk is dropped
    whole = replay([wire("vllm-qwen3-leak", stream=False)], stream=False).completion
    streamed = replay([wire("vllm-qwen3-leak")]).completion
    assert whole.reasoning_source == "inline:close-only"
    assert "13" in whole.content and "13" not in whole.reasoning.split(".")[-1]
    assert streamed.reasoning_source == "none"  # nothing left to split on: the documented leak


def test_split_inline_tag_across_chunks_keeps_timing_order() -> None:
    data = wire("inline-think")
    resp = replay([data[i : i + 5] for i in range(0, len(data), 5)])
    t = resp.timing
    assert resp.completion.reasoning_source == "inline:paired"
    assert t.ttft is not None and t.first_reasoning is not None and t.first_content is not None
    assert t.ttft <= t.first_reasoning <= t.first_content <= t.end
