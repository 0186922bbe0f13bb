"""Which sampled seconds are the run's own, and why a server metric has none.

A short run's busiest second is often the one its warm-up ended in: it held the level's measured requests too,
so it counts for the level. Its counters' rates are read against a scrape taken before the run. The last sample,
taken as the run ends, covers part of a second: a rate's mean weighs each sample by the time it covers. A "–"
always carries the reason that held, read from the run's own timeseries.jsonl."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx

from qualeval.records import SeriesPoint, ServerSample
from qualeval.serving.gaps import server_gaps
from qualeval.serving.timeseries import Sampler, server_summary

URL = "http://127.0.0.1:1/v1"
VLLM = "vllm:num_requests_running 3\nvllm:generation_tokens_total 500\nvllm:prompt_tokens_total 100\n"


def _row(warmup: bool, level: str = "c=16") -> Any:
    return SimpleNamespace(
        usage=SimpleNamespace(completion_tokens=10), status="ok", scored=True,
        score=SimpleNamespace(correct=True), warmup=warmup, level=level,
    )  # fmt: skip


def _ticks(sampler: Sampler, steps: list[tuple[list[bool], int]]) -> list[dict[str, Any]]:
    """Each step: the requests that finished (warm-up or not), then the requests in flight at the tick."""
    handle, router = io.BytesIO(), SimpleNamespace(running=0, queued=0)
    sampler.router = router

    async def run() -> None:
        async with httpx.AsyncClient() as http:
            since = 0.0
            for finished, flight in steps:
                for warm in finished:
                    sampler.record(_row(warm))
                router.running = flight
                since = await sampler._tick(http, handle, since)

    asyncio.run(run())
    return [json.loads(line) for line in handle.getvalue().splitlines()]


def test_a_warm_up_second_that_held_the_levels_work_counts_for_it() -> None:
    # the warm-up alone in flight; then it ends and 14 of 20 measured requests end in the same second, 6 still
    # running; then the last 6 end as the run does
    lines = _ticks(Sampler(Path("unused"), [], {}, warmup=1), [([], 1), ([True, *[False] * 14], 6), ([False] * 6, 0)])
    assert [x["timed"] for x in lines] == [False, True, True]
    assert [x["warmup"] for x in lines] == [True, True, False]


def test_one_request_in_flight_after_the_warm_ups_is_measured() -> None:
    # --warmup 2, c=1: the first warm-up ends, the second runs; then the second ends and a measured one runs
    lines = _ticks(Sampler(Path("unused"), [], {}, warmup=2), [([True], 1), ([True], 1), ([], 1)])
    assert [x["timed"] for x in lines] == [False, True, True]


def _point(t: float, span: float, flight: int, done: int, warm: bool, timed: bool | None, **figs: float) -> str:
    return SeriesPoint(
        t=t, wall=t, output_tokens_per_s=0.0, in_flight=flight, queued=0, completed=done, warmup=warm,
        timed=timed, span=span, server={URL: ServerSample(server="vllm", **figs)},
    ).model_dump_json()  # fmt: skip


def test_the_busiest_second_counts_and_a_rate_is_weighed_by_the_time_it_covers(tmp_path: Path) -> None:
    """A 1.7-second run: the first second held the warm-up and 14 measured requests (6 running at its end), the
    last 0.5 s the other 6, ending with the run: nothing in flight when it was read."""
    lines = [
        _point(1.0, 1.0, 6, 14, True, True, running=6.0, waiting=2.0, prompt_throughput=900.0),
        _point(1.5, 0.5, 0, 6, False, True, running=0.0, waiting=0.0, prompt_throughput=0.0),
    ]
    (tmp_path / "timeseries.jsonl").write_text("".join(line + "\n" for line in lines))
    figures = server_summary(tmp_path)[URL]
    assert figures["running"].mean == 6.0 and figures["waiting"].max == 2.0  # the gauges read while it ran
    assert abs(figures["prompt_throughput"].mean - 600.0) < 1e-9  # 900 tokens over the run's 1.5 s
    assert figures["prompt_throughput"].n == 2


def test_the_first_seconds_rates_are_read_against_a_scrape_before_the_run(tmp_path: Path) -> None:
    scraped = iter([VLLM, VLLM.replace("500", "1500").replace("100", "400")])

    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=next(scraped))

    sampler = Sampler(tmp_path / "timeseries.jsonl", [URL], {})
    sampler.router = SimpleNamespace(running=3, queued=0)
    handle = io.BytesIO()

    async def run() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(serve)) as http:
            await sampler._before(http)
            await sampler._tick(http, handle, time.perf_counter() - 1.0)

    asyncio.run(run())
    first = json.loads(handle.getvalue().splitlines()[0])
    assert first["server"][URL]["prompt_throughput"] > 0 and first["server"][URL]["generation_throughput"] > 0


def test_a_scrape_that_timed_out_is_tried_again_and_its_reason_kept(tmp_path: Path) -> None:
    answers = iter(["timeout", VLLM])

    def serve(request: httpx.Request) -> httpx.Response:
        if next(answers) == "timeout":
            raise httpx.ReadTimeout("slow", request=request)
        return httpx.Response(200, text=VLLM)

    sampler = Sampler(tmp_path / "timeseries.jsonl", [URL], {})

    async def run() -> tuple[Any, str, Any]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(serve), timeout=0.8) as http:
            first = await sampler._scrape(http, URL, "http://x")
            said = sampler.unread.get(URL, "")
            return first, said, await sampler._scrape(http, URL, "http://x")

    first, said, second = asyncio.run(run())
    assert first is None and said == "its /metrics did not answer within 0.8 s"
    assert second is not None and sampler.kinds[URL] == "vllm" and URL not in sampler.unread


def _series(root: Path, *lines: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "timeseries.jsonl").write_text("".join(line + "\n" for line in lines))
    return root


def test_each_dash_says_the_reason_that_held(tmp_path: Path) -> None:
    # every sample in a second of warm-up alone, or after the run: none is the run's; not "a short run"
    warm = _series(tmp_path / "warm", _point(1.0, 1.0, 1, 0, True, False, running=1.0),
                   _point(1.9, 0.9, 0, 0, False, False, running=0.0))  # fmt: skip
    why = server_gaps(warm, server_summary(warm))["running"]
    assert "none of its 2 samples came in a second of the run's measured work (1 in a warm-up" in why
    assert "shorter than" not in why
    # a server that never answered /metrics in time: said so, not "gave no /metrics"
    slow = SeriesPoint(t=1.0, wall=1.0, output_tokens_per_s=0.0, in_flight=3, queued=0, timed=True,
                       unread={URL: "its /metrics did not answer within 0.8 s"}).model_dump_json()  # fmt: skip
    root = _series(tmp_path / "slow", slow, slow)
    assert server_gaps(root, server_summary(root))["running"] == (
        "its /metrics did not answer within 0.8 s (at 2 of its 2 samples)"
    )
    # llama.cpp has no prefix-cache metric
    llama = SeriesPoint(t=1.0, wall=1.0, output_tokens_per_s=0.0, in_flight=3, queued=0, timed=True,
                        server={URL: ServerSample(server="llamacpp", running=3.0)}).model_dump_json()  # fmt: skip
    root = _series(tmp_path / "llama", llama)
    assert (
        "its server (llamacpp) exposes no prefix_cache_hit_rate"
        in server_gaps(root, server_summary(root))["prefix_cache_hit_rate"]
    )
