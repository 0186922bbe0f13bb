"""CPU cost of the timed streaming path, per SSE chunk, against the reference server in burst mode.

    python benchmarks/stream_cpu.py [--requests 40] [--reasoning-tokens 2000] [--concurrency 4] [--decode-ms 0]

The server runs in its own process with no delays, so the client is the only thing that can be slow. The
client's process CPU time (not wall time) is divided by the number of chunks it parsed. The same stream is
then read through the openai SDK's chunk objects for comparison, on the same event loop (uvloop where it is
installed, as qualeval's CLI). Target: qualeval <= 15 µs per chunk. benchmarks/paced.py compares the client
with a minimal aiohttp loop instead, paced and in burst.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import openai

from qualeval.records import ClientConfig
from qualeval.sim import server_process
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatRequest, Message
from qualeval.wire.transport import run_async

TARGET_US = 15.0


def server_args(reasoning_tokens: int, decode_ms: float) -> list[str]:
    pace = ["--decode-ms", str(decode_ms), "--ttft-ms", "1", "--jitter", "0"] if decode_ms else ["--burst"]
    return [*pace, "--reasoning-tokens", str(reasoning_tokens)]


def request(i: int) -> ChatRequest:
    # the same question each time, so both clients parse identical streams
    return ChatRequest(model="sim", messages=(Message(role="user", content="benchmark question"),), seed=i % 4)


async def run_qualeval(url: str, n: int, concurrency: int) -> tuple[float, int, float]:
    config = ClientConfig(base_url=url, api_key=None, concurrency=concurrency)
    async with ChatClient(config) as client:
        await client.chat(request(0))  # warm-up
        cpu, wall = time.process_time(), time.perf_counter()
        responses = await asyncio.gather(*(client.chat(request(i)) for i in range(n)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    bad = [r.error for r in responses if r.error]
    if bad:
        raise SystemExit(f"requests failed: {bad[0]}")
    chunks = sum((r.timing.itl.count + 1) if r.timing.itl else 1 for r in responses)
    return cpu, chunks, wall


async def run_sdk(url: str, n: int, concurrency: int) -> tuple[float, int, float]:
    client = openai.AsyncOpenAI(base_url=url, api_key="unused", max_retries=0)
    slots = asyncio.Semaphore(concurrency)

    async def one(i: int) -> int:
        async with slots:
            stream = await client.chat.completions.create(
                model="sim",
                messages=[{"role": "user", "content": "benchmark question"}],
                stream=True,
                seed=i % 4,
                stream_options={"include_usage": True},
            )
            count = 0
            async for chunk in stream:
                if chunk.choices:
                    delta = chunk.choices[0].delta
                    if delta.content or getattr(delta, "reasoning", None):
                        count += 1
            return count

    await one(0)
    cpu, wall = time.process_time(), time.perf_counter()
    counts = await asyncio.gather(*(one(i) for i in range(n)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await client.close()
    return cpu, sum(counts), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--reasoning-tokens", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--decode-ms",
        type=float,
        default=0.0,
        help="pace the server (one chunk per read, as in production) instead of burst mode",
    )
    args = parser.parse_args()
    with server_process(*server_args(args.reasoning_tokens, args.decode_ms)) as url:
        ours = run_async(run_qualeval(url, args.requests, args.concurrency))
        sdk = run_async(run_sdk(url, args.requests, args.concurrency))
    rows = [("qualeval (Protocol + orjson)", *ours), ("openai SDK chunk objects", *sdk)]
    print(f"{'client':30} {'chunks':>8} {'µs CPU/chunk':>13} {'chunks/s (1 core)':>18} {'wall s':>7}")
    for name, cpu, chunks, wall in rows:
        print(f"{name:30} {chunks:8d} {1e6 * cpu / chunks:13.2f} {chunks / cpu:18,.0f} {wall:7.2f}")
    ours_us = 1e6 * ours[0] / ours[1]
    sdk_us = 1e6 * sdk[0] / sdk[1]
    print(f"SDK / qualeval CPU per chunk: {sdk_us / ours_us:.1f}x")
    if args.decode_ms:
        return  # the target is for burst mode; paced, the event loop's cost per read dominates
    verdict = "within" if ours_us <= TARGET_US else "OVER"
    print(
        f"qualeval: {ours_us:.2f} µs per chunk, {verdict} the {TARGET_US:g} µs target ({ours_us / TARGET_US:.2f} of it)"
    )


if __name__ == "__main__":
    main()
