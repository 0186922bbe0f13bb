"""Timing: a server-side TTFT and decode interval measured back by the client on one clock.

The server's schedule is a floor (it sends no token early; a busy machine only makes the client's figures later), so
these tests hold each figure to it and to its arithmetic. How close to the schedule the client measures, on a quiet
machine, is benchmarks/known_timing.py's and benchmarks/paced.py's to say."""

from __future__ import annotations

import asyncio

import pytest

from qualeval.records import ClientConfig
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatResponse
from tests.conftest import ask, sim_process

SLACK = 0.5  # ms: the event loop's timer resolution


def run(url: str, n: int, **kw: object) -> list[ChatResponse]:
    """n timed requests, after one warm-up request that opens the connection they reuse."""

    async def go() -> list[ChatResponse]:
        async with ChatClient(ClientConfig(base_url=url, api_key=None, concurrency=1)) as client:
            await client.chat(ask("warm-up", max_tokens=2))
            return [await client.chat(ask(f"timing {i}", **kw)) for i in range(n)]  # type: ignore[arg-type]

    return asyncio.run(go())


def test_ttft_of_200ms_is_measured_from_the_request() -> None:
    with sim_process(
        "--ttft-ms",
        "200",
        "--prefill-ms-per-token",
        "0",
        "--jitter",
        "0",
        "--decode-ms",
        "5",
        "--reasoning-tokens",
        "20",
    ) as url:
        responses = run(url, 7)
    for resp in responses:
        t = resp.timing
        assert resp.error is None
        assert t.ttft is not None and t.ttft >= 200.0 - SLACK, t
        assert t.first_byte is not None and t.first_byte < t.ttft  # headers go out before the first token
        assert t.first_reasoning == t.ttft  # the first token is a reasoning one


def test_decode_interval_and_answer_timing() -> None:
    with sim_process(
        "--ttft-ms",
        "30",
        "--prefill-ms-per-token",
        "0",
        "--jitter",
        "0",
        "--decode-ms",
        "10",
        "--reasoning-tokens",
        "30",
    ) as url:
        resp = run(url, 1, max_tokens=200)[0]
    t = resp.timing
    assert t.itl is not None and t.itl.count >= 20
    assert t.ttft is not None and t.end is not None and t.first_content is not None
    reasoning_tokens, tokens = resp.usage.reasoning_tokens, resp.usage.completion_tokens
    # the answer starts after every reasoning token and the dropped </think> token were decoded
    assert t.first_content >= 30 + 10.0 * (reasoning_tokens + 1) - SLACK
    assert t.end >= 30 + 10.0 * (tokens - 1) - SLACK
    # the decode rate is the tokens after the first over the time they took: at most the server's 100 a second
    assert t.decode_rate == pytest.approx((tokens - 1) / ((t.end - t.ttft) / 1000), rel=1e-9)
    assert t.first_reasoning is not None and t.first_reasoning < t.first_content < t.end


def test_hidden_reasoning_shows_as_a_late_first_token() -> None:
    with sim_process(
        "--flavor",
        "openai",
        "--ttft-ms",
        "20",
        "--prefill-ms-per-token",
        "0",
        "--jitter",
        "0",
        "--decode-ms",
        "5",
        "--reasoning-tokens",
        "40",
    ) as url:
        resp = run(url, 1)[0]
    assert resp.completion.reasoning == "" and resp.usage.reasoning_tokens > 0
    gaps = resp.timing.itl
    assert gaps is not None
    # nothing arrives while it thinks: the first token lands after the thinking time
    assert resp.timing.ttft is not None and resp.timing.ttft >= 20 + 5 * resp.usage.reasoning_tokens - SLACK


def test_a_retried_request_is_timed_from_its_first_attempt() -> None:
    """What the caller waited: a 429 with Retry-After 0.3 s, then the answer 50 ms after the second attempt."""
    with sim_process("--ttft-ms", "50", "--prefill-ms-per-token", "0", "--jitter", "0", "--retry-after", "0.3") as url:

        async def go() -> ChatResponse:
            once = {"x-qualeval-sim": "fault=429,fault_times=1"}
            config = ClientConfig(base_url=url, api_key=None, concurrency=1, headers=once, backoff_max=5.0)
            async with ChatClient(config) as client:
                return await client.chat(ask("retried once", max_tokens=20))

        resp = asyncio.run(go())
    t = resp.timing
    assert resp.error is None and resp.attempts == 2 and resp.retried == ["429"]
    assert t.retrying is not None and t.retrying >= 300.0 - SLACK, t
    assert t.ttft is not None and t.ttft >= t.retrying + 50.0 - SLACK, t
    assert t.first_byte is not None and t.first_byte >= t.retrying, t
