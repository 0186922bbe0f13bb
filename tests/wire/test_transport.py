"""The direct HTTP/1.1 transport: framing cut anywhere, keep-alive, queue time, and llama.cpp captures replayed
over a real socket (first answer token with thinking off, `timings` kept and used for token counts)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qualeval.errors import InputError, ProtocolFailure
from qualeval.records import ClientConfig
from qualeval.sim import Latency
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatResponse
from qualeval.wire.proxied import proxy_for
from qualeval.wire.stream import StreamState
from qualeval.wire.transport import Endpoint, _Connection
from tests.conftest import SHARED, ask, fast_sim, sim_url
from tests.wire.test_stream import wire

CAPTURES = SHARED / "captures" / "llamacpp-b11434"


class _Pipe(asyncio.Transport):
    """A transport that only records what the connection wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:  # type: ignore[override]
        self.written.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True


def chunked(body: bytes, sizes: list[int]) -> bytes:
    """`body` in HTTP chunks of the given sizes (cycled), with an extension on some, and the last chunk."""
    out, pos, sizes = [], 0, sizes or [len(body)]
    for i, size in enumerate(itertools.cycle(sizes)):
        if pos >= len(body):
            break
        piece = body[pos : pos + max(1, size)]
        pos += len(piece)
        ext = b";x=1" if i % 3 == 2 else b""
        out.append(b"%x%s\r\n%s\r\n" % (len(piece), ext, piece))
    return b"".join(out) + b"0\r\n\r\n"


HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def feed(response: bytes, cuts: list[int]) -> tuple[Any, StreamState]:
    """Hand `response` to a connection in reads cut at `cuts`; return the reply and what the sink parsed."""

    async def go() -> tuple[Any, StreamState]:
        conn, sink = _Connection("test"), StreamState()
        conn.connection_made(_Pipe())
        waiter = conn.start(b"POST / HTTP/1.1\r\n\r\n", sink)
        edges = sorted({c % (len(response) + 1) for c in cuts} | {0, len(response)})
        for a, b in itertools.pairwise(edges):
            if b > a:
                conn.data_received(response[a:b])
                if waiter.done():
                    assert b == len(response), "the reply ended before its last byte"
        assert waiter.done()
        return waiter.result(), sink

    return asyncio.run(go())


def parsed(sink: StreamState) -> tuple[object, ...]:
    return ("".join(sink.content), {k: "".join(v) for k, v in sink.reasoning.items()}, sink.finish, sink.usage)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=30),
)
def test_chunked_framing_cut_anywhere_gives_the_same_stream(sizes: list[int], cuts: list[int]) -> None:
    body = wire("vllm")
    reply, sink = feed(HEAD + chunked(body, sizes), cuts)
    _, whole = feed(HEAD + chunked(body, [len(body)]), [])
    assert reply.status == 200 and reply.streamed
    assert parsed(sink) == parsed(whole)
    assert sink.done and "".join(sink.content)


@pytest.mark.parametrize("event", [b'{"choices": [1]}', b'{"choices": [{"delta": "x"}]}', b"[1, 2]", b"{oops"])
def test_an_event_that_is_not_a_chunk_fails_the_attempt_as_a_protocol_error(event: bytes) -> None:
    with pytest.raises(ProtocolFailure):
        feed(HEAD + chunked(b"data: " + event + b"\n\n", [100]), [])


@pytest.mark.parametrize("cut", range(1, 40, 3))
def test_every_early_cut_of_a_head_and_body(cut: int) -> None:
    body = b'{"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}'
    response = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    reply, _ = feed(response, [cut, cut * 2, len(response) - 1])
    assert (reply.status, reply.body, reply.streamed) == (200, body, False)


def test_a_body_delimited_by_the_close() -> None:
    async def go() -> Any:
        conn = _Connection("test")
        conn.connection_made(_Pipe())
        waiter = conn.start(b"GET / HTTP/1.1\r\n\r\n", None)
        conn.data_received(b'HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{"a": ')
        conn.data_received(b"1}")
        assert not waiter.done()
        conn.connection_lost(None)
        return await waiter

    reply = asyncio.run(go())
    assert reply.body == b'{"a": 1}' and reply.status == 200


def test_line_breaks_in_a_header_are_refused_without_echoing_it() -> None:
    with pytest.raises(InputError) as info:
        Endpoint("http://127.0.0.1:1/v1", {"Authorization": "Bearer sk-secret\r\nX-Evil: 1"}, 1.0)
    assert "sk-secret" not in str(info.value)


def test_proxy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("http://10.1.2.3:8000/v1") is None
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert proxy_for("http://10.1.2.3:8000/v1") == "http://proxy.invalid:3128"
    monkeypatch.setenv("NO_PROXY", "10.1.2.3")
    assert proxy_for("http://10.1.2.3:8000/v1") is None


# --- a real socket: captures replayed by a server on 127.0.0.1 -------------------------------------------


def capture(name: str) -> tuple[dict[str, Any], list[tuple[str, str]], bytes]:
    """A capture's request body, response headers and body bytes."""
    path = CAPTURES / f"{name}.txt"
    if not path.exists():
        pytest.skip(f"{path} not present")
    raw = path.read_bytes()
    request = raw.split(b"### REQUEST\n", 1)[1].split(b"\n\n", 1)[1].split(b"\n\n### RESPONSE", 1)[0]
    head, rest = raw.split(b"### RESPONSE", 1)[1].split(b"\n", 1)[1].split(b"\n\n### BODY", 1)
    body = rest.split(b"\n", 1)[1]
    body = body[: body.rindex(b"\n### END")]
    headers = [tuple(h.decode().split(": ", 1)) for h in head.split(b"\n")[1:] if b": " in h]
    return json.loads(request), headers, body  # type: ignore[return-value]


@contextlib.asynccontextmanager
async def replaying(name: str, close_after: bool = False) -> AsyncIterator[str]:
    """A server that answers every request with the capture, one SSE event per write, like llama-server."""
    _, headers, body = capture(name)
    streamed = any(v.startswith("text/event-stream") for _, v in headers)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await answer_all(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed its side
        finally:
            writer.close()

    async def answer_all(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            size = next(
                (int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")), 0
            )
            await reader.readexactly(size)
            lines = [f"{k}: {v}" for k, v in headers if k.lower() not in ("content-length", "transfer-encoding")]
            if streamed:
                writer.write(("HTTP/1.1 200 OK\r\n" + "\r\n".join([*lines, "Transfer-Encoding: chunked"])).encode())
                writer.write(b"\r\n\r\n")
                for event in body.split(b"\n\n"):
                    if event:
                        writer.write(chunked(event + b"\n\n", [1 << 20])[:-5])
                        await writer.drain()
                        await asyncio.sleep(0.001)
                writer.write(b"0\r\n\r\n")
            else:
                lines.append(f"Content-Length: {len(body)}")
                writer.write(("HTTP/1.1 200 OK\r\n" + "\r\n".join(lines) + "\r\n\r\n").encode() + body)
            await writer.drain()
            if close_after:  # like a server whose keep-alive timeout ran out, without saying so
                return

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    finally:
        server.close()
        await server.wait_closed()


def replay(name: str, thinking: bool | None = None, times: int = 1, close_after: bool = False) -> list[ChatResponse]:
    request, _, _ = capture(name)

    async def go() -> list[ChatResponse]:
        async with replaying(name, close_after) as url:
            config = ClientConfig(base_url=url, api_key=None, max_retries=0)
            async with ChatClient(config) as client:
                sent = ask("What is 2+3?", stream=bool(request.get("stream")), thinking=thinking)
                return [await client.chat(sent) for _ in range(times)]

    return asyncio.run(go())


def test_first_answer_token_is_timed_with_thinking_off() -> None:
    """Issue #11 item 2: with thinking off no inline split runs; the answer's first chunk is still timed."""
    resp = replay("deepseek__nothink_answer_stream", thinking=False)[0]
    t = resp.timing
    assert resp.error is None and resp.completion.content == "Answer: 004"
    assert t.first_content is not None and t.ttft is not None
    assert t.ttft <= t.first_content <= t.end
    assert t.first_reasoning is None


def test_thinking_off_on_the_reference_server_times_the_first_answer_token() -> None:
    with sim_url(fast_sim("vllm")) as url:

        async def go() -> ChatResponse:
            async with ChatClient(ClientConfig(base_url=url, api_key=None)) as client:
                return await client.chat(ask("What is 2+3?", thinking=False))

        resp = asyncio.run(go())
    assert resp.completion.content and resp.completion.reasoning == ""
    assert resp.timing.first_content is not None and resp.timing.first_content >= resp.timing.ttft


def test_llamacpp_timings_give_the_token_counts_when_there_is_no_usage() -> None:
    """Issue #11 item 8: no usage chunk; `timings` rides on the finish chunk."""
    _, _, body = capture("deepseek__stream_no_include_usage")
    timings = json.loads(body.split(b"data: ")[-2].strip())["timings"]
    resp = replay("deepseek__stream_no_include_usage")[0]
    assert resp.server_timings == timings
    assert resp.usage.completion_tokens == timings["predicted_n"] == 41
    assert resp.usage.prompt_tokens == timings["prompt_n"] + timings["cache_n"] == 70
    assert not resp.usage.completion_estimated
    assert resp.usage.reasoning_estimated  # llama.cpp never counts reasoning tokens: still the text's share


@pytest.mark.parametrize("name", ["deepseek__think_stream", "deepseek__think_nonstream"])
def test_llamacpp_timings_are_kept_beside_the_usage(name: str) -> None:
    _, _, body = capture(name)
    resp = replay(name)[0]
    assert resp.server_timings is not None and resp.server_timings["predicted_n"] == resp.usage.completion_tokens
    assert resp.completion.reasoning_source == "field:reasoning_content" and resp.completion.status == "ok"
    assert b"timings" in body


def test_a_keep_alive_connection_closed_by_the_server_is_replaced_silently() -> None:
    responses = replay("deepseek__think_nonstream", times=3, close_after=True)
    assert [(r.error, r.attempts, r.retried) for r in responses] == [(None, 1, [])] * 3


def test_waiting_for_a_slot_is_queue_time_not_server_latency() -> None:
    lat = Latency(ttft_ms=20, decode_ms=2, jitter=0, prefill_ms_per_token=0, batch_slowdown=0)
    with sim_url(fast_sim("vllm", latency=lat)) as url:

        async def go() -> list[ChatResponse]:
            async with ChatClient(ClientConfig(base_url=url, api_key=None, concurrency=1)) as client:
                return await asyncio.gather(*(client.chat(ask(f"q{i}", max_tokens=30)) for i in range(3)))

        first, second, third = asyncio.run(go())
    assert all(r.error is None for r in (first, second, third))
    assert first.timing.queued < second.timing.queued < third.timing.queued
    # the third waited for two whole requests; its own TTFT counts from the moment it was written
    assert third.timing.queued > first.timing.end
    assert max(r.timing.ttft for r in (first, second, third)) < third.timing.queued


def test_the_record_keeps_the_server_timings(tmp_path: Path) -> None:
    from tests.cli.test_cli import qualeval

    with sim_url(fast_sim("llamacpp", tasks=("knowledge_qa",))) as url:
        done = qualeval(
            "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "2", "--no-probe",
            "--out", str(tmp_path / "run"),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert records and all(r["server_timings"] and "predicted_n" in r["server_timings"] for r in records)
