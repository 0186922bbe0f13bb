"""qualeval's client beside a minimal aiohttp + orjson loop (the floor), against a paced server, in one run.

    python benchmarks/paced.py [--levels 1,16,64,burst] [--rounds 4] [--quick] [--loop uvloop|asyncio]

The server (benchmarks/paced_server.py) runs in its own process, pinned to the last core when the machine has
more than one; this process, both clients included, is pinned to the first. Each request is a vLLM-style
reasoning stream: TTFT 100 ms, then 64 reasoning and 64 answer chunks 5 ms apart, each its own write; `burst`
sends the same chunks with no delay. For each level and client it prints req/s, client CPU µs per text chunk
(process time over chunks), and the error of TTFT and of time to first answer against the server's log
(client-measured minus server-true, where server-true is the first reasoning / answer write minus the
request's arrival), median and p99, then each target's verdict. The clients take turns, `--rounds` times each
per level, so a noisy minute on a shared machine hits both; the figures pool the rounds. `--loop` runs both
clients on uvloop (the default where it is installed, as qualeval's CLI) or asyncio's own loop.

Targets (issue #13): CPU/chunk ≤ 1.5x floor at every level and ≤ 15 µs in burst; TTFT and first-answer error
p99 within 1 ms of the floor at c=1 and 16, 2 ms at c=64; burst c=64 req/s ≥ 80% of the floor's.

The tool levels (`--levels tools-64,tools-burst`, paced at c=64 and in burst) stream 128 answer chunks and no
reasoning, as text and as one tool call's deltas (vLLM's shape), and run four clients in turn: each client on
each stream. Targets (issue #33): qualeval's CPU per tool-call chunk ≤ its CPU per text chunk (x of text), and
≤ the floor's on the same tool-call stream (x of floor); the text run's own ratio to its floor is shown beside.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import orjson

from qualeval.records import ClientConfig
from qualeval.wire.client import ChatClient
from qualeval.wire.histogram import interpolated
from qualeval.wire.models import ChatRequest, Message

PACED = {"ttft_ms": 100, "pace_ms": 5, "reasoning": 64, "answer": 64}
BURST = {"ttft_ms": 0, "pace_ms": 0, "reasoning": 64, "answer": 64}
# the tool levels: 128 answer chunks and no reasoning, as text or as one tool call's deltas, so that each chunk
# of a run is of the kind it measures
ANSWER = {"reasoning": 0, "answer": 128}
TOOLS = {"calls": 1}
Timed = tuple[int, float | None, float | None]
"""One request as a client measured it: id, TTFT ms, first-answer ms."""


@dataclass
class Result:
    cpu: float = 0.0
    wall: float = 0.0
    requests: int = 0
    ttft_err: list[float] = field(default_factory=list)
    answer_err: list[float] = field(default_factory=list)


@contextlib.contextmanager
def paced_server(cpu: int | None) -> Iterator[str]:
    script = Path(__file__).with_name("paced_server.py")
    pin = [] if cpu is None else ["--cpu", str(cpu)]
    proc = subprocess.Popen([sys.executable, str(script), *pin], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit("the paced server did not start")
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.communicate(timeout=5)


def server_log(url: str) -> dict[int, list[float]]:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/log", timeout=30) as resp:
        rows = orjson.loads(resp.read())
    return {int(r[0]): r for r in rows}


def body(i: int, pacing: dict[str, int]) -> dict[str, object]:
    return {"model": "bench", "messages": [{"role": "user", "content": "benchmark question"}], "seed": i, **pacing}


class Clock:
    """CPU and wall time of the measured part only (after the warm-up requests)."""

    def __init__(self) -> None:
        self.cpu = self.wall = 0.0

    def __enter__(self) -> Clock:
        gc.collect()
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu, self.wall = time.process_time() - self.cpu, time.perf_counter() - self.wall


async def floor_client(url: str, c: int, ids: range, pacing: dict[str, int], clock: Clock) -> list[Timed]:
    """The floor: aiohttp, one orjson.loads per event, a stamp per read; nothing else."""
    headers = {"Content-Type": "application/json"}
    slots = asyncio.Semaphore(c)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=c)) as session:

        async def one(i: int) -> Timed:
            async with slots:
                first = answer = None
                buf = b""
                data = orjson.dumps(body(i, pacing))
                t0 = time.perf_counter()
                async with session.post(f"{url}/chat/completions", data=data, headers=headers) as resp:
                    async for got in resp.content.iter_any():
                        now = time.perf_counter()
                        events = (buf + got).split(b"\n\n")
                        buf = events.pop()
                        for event in events:
                            if event == b"data: [DONE]":
                                continue
                            choices = orjson.loads(event[6:])["choices"]
                            delta = choices[0]["delta"] if choices else {}
                            said = delta.get("content") or delta.get("tool_calls") if answer is None else None
                            if first is None and (delta.get("reasoning") or said):
                                first = (now - t0) * 1000
                            if answer is None and said:
                                answer = (now - t0) * 1000
                return i, first, answer

        await asyncio.gather(*(one(-1 - k) for k in range(c)))  # open the connections
        server_log(url)
        with clock:
            return await asyncio.gather(*(one(i) for i in ids))


async def qualeval_client(url: str, c: int, ids: range, pacing: dict[str, int], clock: Clock) -> list[Timed]:
    config = ClientConfig(base_url=url, api_key=None, concurrency=c, max_retries=0, timeout=120)
    message = (Message(role="user", content="benchmark question"),)

    def request(i: int) -> ChatRequest:
        return ChatRequest(model="bench", messages=message, seed=i, extra_body=pacing)

    async with ChatClient(config) as client:
        await asyncio.gather(*(client.chat(request(-1 - k)) for k in range(c)))
        server_log(url)
        with clock:
            responses = await asyncio.gather(*(client.chat(request(i)) for i in ids))
    bad = [r.error for r in responses if r.error]
    if bad:
        raise SystemExit(f"qualeval requests failed: {bad[0]}")
    first_answer = [r.timing.first_content if r.call_timing is None else r.timing.ttft for r in responses]
    return [(i, r.timing.ttft, answer) for i, r, answer in zip(ids, responses, first_answer, strict=True)]


Client = Callable[[str, int, range, dict[str, int], Clock], Awaitable[list[Timed]]]
CLIENTS: dict[str, Client] = {"floor": floor_client, "qualeval": qualeval_client}


def run_loop(loop: str) -> Callable[[Awaitable[list[Timed]]], list[Timed]]:
    if loop == "uvloop":
        import uvloop

        return uvloop.run  # type: ignore[return-value]
    return asyncio.run  # type: ignore[return-value]


def measure(client: Client, url: str, level: tuple[int, range, dict[str, int]], into: Result, loop: str) -> None:
    c, ids, pacing = level
    clock = Clock()
    got = run_loop(loop)(client(url, c, ids, pacing, clock))
    log = server_log(url)
    for i, ttft, answer in got:
        sent = log[i]
        if ttft is not None:
            into.ttft_err.append(ttft - (sent[2] - sent[1]) * 1000)
        if answer is not None:
            into.answer_err.append(answer - (sent[3] - sent[1]) * 1000)
    into.cpu += clock.cpu
    into.wall += clock.wall
    into.requests += len(got)


try:
    import uvloop  # noqa: F401

    DEFAULT_LOOP = "uvloop"  # what qualeval's CLI runs on where it is installed (qualeval.wire.transport.run_async)
except ImportError:
    DEFAULT_LOOP = "asyncio"

# requests per round; rounds alternate the clients, so a noisy minute on a shared machine hits both
LEVELS = {
    "1": (1, 32, PACED),
    "16": (16, 64, PACED),
    "64": (64, 256, PACED),
    "burst": (64, 1024, BURST),
    "tools-64": (64, 256, {**PACED, **ANSWER}),
    "tools-burst": (64, 1024, {**BURST, **ANSWER}),
}
HEADS = ("req/s", "µs/chunk", "TTFT err", "p99", "1st ans", "p99")


def pct(values: list[float], q: float) -> float:
    return interpolated(sorted(values), q) if values else float("nan")


def figures(got: Result, chunks: int) -> tuple[float, float, float, float, float, float]:
    us = 1e6 * got.cpu / (got.requests * chunks)
    ttft, answer = got.ttft_err, got.answer_err
    return got.requests / got.wall, us, pct(ttft, 0.5), pct(ttft, 0.99), pct(answer, 0.5), pct(answer, 0.99)


def verdict(level: str, results: dict[str, Result], chunks: int) -> str:
    """The issue's targets for this level, each with its measured value."""
    rate, us, _, ttft99, _, answer99 = figures(results["qualeval"], chunks)
    floor_rate, floor_us, _, floor_ttft99, _, floor_answer99 = figures(results["floor"], chunks)
    if level.startswith("tools"):
        return tool_verdict(results, chunks, us, floor_us)
    checks = [(f"cpu x{us / floor_us:.2f} of floor", us <= 1.5 * floor_us)]
    if level == "burst":
        checks += [
            (f"{us:.1f} µs/chunk", us <= 15),
            (f"req/s {rate / floor_rate:.0%} of floor", rate >= 0.8 * floor_rate),
        ]
    else:
        bound = 2.0 if level == "64" else 1.0
        for name, ours, theirs in (("TTFT", ttft99, floor_ttft99), ("1st answer", answer99, floor_answer99)):
            checks.append((f"{name} p99 {ours - theirs:+.2f} ms vs floor", ours - theirs <= bound))
    return "; ".join(f"{text} {'ok' if ok else 'MISSED'}" for text, ok in checks)


def tool_verdict(results: dict[str, Result], chunks: int, text_us: float, floor_text_us: float) -> str:
    """Issue #33: a tool-call delta costs the client no more CPU than a text chunk, and no more than the floor's
    reading of the same tool-call stream."""
    us = figures(results["qualeval tools"], chunks)[1]
    floor_us = figures(results["floor tools"], chunks)[1]
    checks = [
        (f"tools x{us / text_us:.2f} of text", us <= text_us),
        (f"tools x{us / floor_us:.2f} of floor", us <= floor_us),
    ]
    shown = "; ".join(f"{text} {'ok' if ok else 'MISSED'}" for text, ok in checks)
    return f"{shown} (text x{text_us / floor_text_us:.2f} of floor)"


def runs(level: str) -> dict[str, tuple[Client, dict[str, int]]]:
    """The clients a level runs, each with the stream it reads; a tool level reads text and tool-call streams."""
    pacing = LEVELS[level][2]
    out = {name: (client, pacing) for name, client in CLIENTS.items()}
    if level.startswith("tools"):
        out |= {f"{name} tools": (client, {**pacing, **TOOLS}) for name, client in CLIENTS.items()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="1,16,64,burst", help=f"any of {','.join(LEVELS)}")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="a quarter of the requests")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default=DEFAULT_LOOP, help="both clients' loop")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    server_cpu = cores[-1] if len(cores) > 1 else None
    if server_cpu is not None:
        os.sched_setaffinity(0, {cores[0]})
    print(f"event loop {args.loop}; server on core {server_cpu}, clients on core {cores[0] if cores else '?'}")
    print(f"{'level':>11} {'client':14} " + " ".join(f"{h:>8}" for h in HEADS))
    with paced_server(server_cpu) as url:
        for level in args.levels.split(","):
            c, n, pacing = LEVELS[level]
            chunks = pacing["reasoning"] + pacing["answer"]
            ids = range(max(c, n // 4) if args.quick else n)
            clients = runs(level)
            results = {name: Result() for name in clients}
            for r in range(args.rounds):
                for name in list(clients) if r % 2 == 0 else list(clients)[::-1]:
                    client, stream = clients[name]
                    measure(client, url, (c, ids, stream), results[name], args.loop)
            label = level if "burst" in level else f"c={level}"
            for name, got in results.items():
                print(
                    f"{label:>11} {name:14} "
                    + " ".join(f"{v:8.1f}" if i < 2 else f"{v:8.2f}" for i, v in enumerate(figures(got, chunks)))
                )
            print(f"{'':>11} targets: {verdict(level, results, chunks)}")


if __name__ == "__main__":
    main()
