"""Faults from the reference server and what the client makes of them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from qualeval.records import ClientConfig
from qualeval.sim import Latency
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatResponse
from tests.conftest import ask, chat, fast_sim, sim_url

RETRYABLE = ["429", "500", "503", "drop", "malformed", "empty-choices", "html"]


@pytest.fixture(scope="module")
def url() -> str:
    with sim_url(fast_sim("vllm", retry_after=0.05)) as base:
        yield base


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("fault", RETRYABLE)
def test_retried_fault_then_success(url: str, fault: str, stream: bool) -> None:
    resp = chat(url, ask(f"q {fault} {stream}", stream=stream), {"x-qualeval-sim": f"fault={fault},fault_times=2"})
    assert resp.error is None, resp.error
    assert resp.attempts == 3
    assert resp.completion.status == "ok"
    assert resp.completion.content


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("429", "HTTP 429"),
        ("500", "HTTP 500"),
        ("503", "HTTP 503"),
        ("drop", "peer closed"),
        ("malformed", "malformed"),
        ("empty-choices", "no"),
        ("html", "text/html"),
    ],
)
def test_persistent_fault_is_a_transport_error_never_an_answer(url: str, fault: str, words: str, stream: bool) -> None:
    resp = chat(url, ask(f"p {fault} {stream}", stream=stream), {"x-qualeval-sim": f"fault={fault}"}, max_retries=2)
    assert resp.completion.status == "transport_error"
    assert resp.attempts == 3
    assert resp.completion.content == "" and resp.completion.reasoning == ""
    assert resp.error and "\n" not in resp.error
    if not (fault == "drop" and not stream):
        assert words.lower() in resp.error.lower(), resp.error


def test_empty_choices_message_names_the_problem(url: str) -> None:
    whole = chat(url, ask("e", stream=False), {"x-qualeval-sim": "fault=empty-choices"}, max_retries=0)
    streamed = chat(url, ask("e", stream=True), {"x-qualeval-sim": "fault=empty-choices"}, max_retries=0)
    assert whole.error == "chat completion has no choices"
    assert streamed.error == "stream carried no choices"


@pytest.mark.parametrize("stream", [True, False])
def test_client_errors_are_not_retried(url: str, stream: bool) -> None:
    resp = chat(url, ask("ctx", stream=stream), {"x-qualeval-sim": "fault=context"})
    assert resp.attempts == 1 and resp.http_status == 400
    assert "maximum context length" in (resp.error or "")


def _timed(send: Callable[[], ChatResponse]) -> tuple[ChatResponse, float]:
    started = time.perf_counter()
    resp = send()
    return resp, time.perf_counter() - started


def test_retry_after_is_honoured() -> None:
    with sim_url(fast_sim("vllm", retry_after=0.4)) as base:
        # what two plain attempts cost on this machine now: a busy one stretches them, never the wait itself
        _, plain = _timed(lambda: chat(base, ask("plain"), backoff_max=5))
        resp, elapsed = _timed(
            lambda: chat(base, ask("wait"), {"x-qualeval-sim": "fault=429,fault_times=1"}, backoff_max=60)
        )
    assert resp.attempts == 2 and resp.completion.status == "ok"
    # the hinted 0.4 s, not the 60 s backoff ceiling: the margin is far wider than any machine's slowness
    assert 0.4 <= elapsed < 0.4 + 2 * plain + 30


def test_stalled_stream_hits_the_timeout_and_is_retried(url: str) -> None:
    _, plain = _timed(lambda: chat(url, ask("plain"), timeout=0.5))
    resp, elapsed = _timed(
        lambda: chat(url, ask("stall"), {"x-qualeval-sim": "fault=stall,fault_times=1"}, timeout=0.5)
    )
    assert resp.attempts == 2 and resp.completion.status == "ok"
    assert elapsed < 0.5 + 2 * plain + 60  # one 0.5 s deadline and a retry, not the server's hour-long stall


def test_slow_headers_time_out(url: str) -> None:
    resp = chat(url, ask("slow"), {"x-qualeval-sim": "fault=slow-headers,delay=2"}, timeout=0.3, max_retries=1)
    assert resp.completion.status == "transport_error" and resp.attempts == 2
    assert "timed out" in (resp.error or "") or "within" in (resp.error or "")


def test_unreachable_endpoint() -> None:
    resp = chat("http://127.0.0.1:9/v1", ask("x"), max_retries=1, connect_timeout=0.5)
    assert resp.completion.status == "transport_error"
    assert "127.0.0.1:9" in (resp.error or "")


def test_wrong_key_is_a_401_without_the_key_in_the_message() -> None:
    secret = "sk-canary-7f3a9e"
    with sim_url(fast_sim("vllm", api_key="right-key")) as base:
        config = ClientConfig(base_url=base, api_key=secret, max_retries=3)

        async def go():  # type: ignore[no-untyped-def]
            async with ChatClient(config) as client:
                return await client.chat(ask("x"))

        resp = asyncio.run(go())
    assert resp.http_status == 401 and resp.attempts == 1
    assert secret not in resp.model_dump_json()


def test_random_faults_are_deterministic_and_survivable() -> None:
    faults = {"429": 0.2, "500": 0.1, "drop": 0.1, "malformed": 0.1}
    with sim_url(fast_sim("vllm", faults=faults, retry_after=0.0)) as base:
        config = ClientConfig(base_url=base, api_key=None, max_retries=8, backoff_base=0.001, concurrency=8)

        async def go():  # type: ignore[no-untyped-def]
            async with ChatClient(config) as client:
                return await asyncio.gather(*(client.chat(ask(f"item {i}")) for i in range(80)))

        responses = asyncio.run(go())
    assert all(r.completion.status == "ok" for r in responses)
    retried = sum(r.attempts > 1 for r in responses)
    assert 15 <= retried <= 55  # about half of the first attempts fail


def test_latency_queue_limits_concurrency() -> None:
    lat = Latency(ttft_ms=20, decode_ms=1, jitter=0, prefill_ms_per_token=0, batch_slowdown=0)
    with sim_url(fast_sim("vllm", latency=lat, max_running=2)) as base:
        config = ClientConfig(base_url=base, api_key=None, concurrency=8)

        async def go():  # type: ignore[no-untyped-def]
            async with ChatClient(config) as client:
                return await asyncio.gather(*(client.chat(ask(f"item {i}", max_tokens=5)) for i in range(6)))

        responses = asyncio.run(go())
    ttfts = sorted(r.timing.ttft for r in responses)
    # two run at once: the last pair waits for two earlier pairs of 20 ms + 5 tokens each (a busy machine only
    # stretches the wait, so the gap, not an absolute time, is what is checked)
    assert ttfts[-1] - ttfts[0] > 40
