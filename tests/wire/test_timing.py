"""Timing: a server-side TTFT and decode interval measured back by the client on one clock."""

from __future__ import annotations

import asyncio
import gc
import statistics
from collections.abc import Iterator

import pytest

from qualeval.records import ClientConfig
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatResponse
from tests.conftest import ask, sim_process

pytestmark = pytest.mark.timing


@pytest.fixture(autouse=True)
def quiet_heap() -> Iterator[None]:
    """Collect and freeze what earlier tests left in this process: a 4 ms GC pass over it, landing on the
    first chunk, would be measured as server latency."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def run(url: str, n: int, **kw: object) -> list[ChatResponse]:
    """n timed requests, after one warm-up request that opens the connection they reuse."""

    async def go() -> list[ChatResponse]:
        async with ChatClient(ClientConfig(base_url=url, api_key=None, concurrency=1)) as client:
            await client.chat(ask("warm-up", max_tokens=2))
            return [await client.chat(ask(f"timing {i}", **kw)) for i in range(n)]  # type: ignore[arg-type]

    return asyncio.run(go())


def test_ttft_of_200ms_is_measured_within_2ms() -> None:
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
    ttfts = [resp.timing.ttft for resp in responses]
    # the estimate is the median: one sample can catch the machine busy with something else
    assert abs(statistics.median(ttfts) - 200.0) < 2.0, ttfts
    for resp in responses:
        assert resp.error is None
        assert abs(resp.timing.ttft - 200.0) < 15.0, resp.timing
        assert resp.timing.first_byte < 50  # headers go out before the first token
        assert resp.timing.first_reasoning == pytest.approx(resp.timing.ttft, abs=0.5)


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
    assert t.itl.p50 == pytest.approx(10.0, abs=1.5)
    reasoning_tokens = resp.usage.reasoning_tokens
    # the answer starts after every reasoning token and the dropped </think> token were decoded
    expected = t.ttft + 10.0 * reasoning_tokens
    assert t.first_content == pytest.approx(expected, rel=0.1)
    assert t.decode_rate == pytest.approx(100.0, rel=0.15)
    assert t.first_reasoning < t.first_content < t.end


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
    assert resp.timing.ttft == pytest.approx(20 + 5 * resp.usage.reasoning_tokens, rel=0.15)
    assert resp.timing.ttft > 100
