"""Does the harness keep a server busy? One task against a reference server of fixed capacity.

    python benchmarks/harness_capacity.py [--streams 8] [--tokens-per-s 50] [--items 64]

The server decodes at most --streams requests at once, each at --tokens-per-s (no batch slowdown, no jitter),
so its busy time per request is known from the request's own timing. The ideal wall time is the total busy
time divided by the streams; the ratio printed is the harness's wall time over that ideal (1.00 = the server
never waited for the harness). Uneven requests cannot pack perfectly, so the fair ideal replays the same
requests in the order they were sent through the streams, greedily; the plain lower bound is printed too.
"""

from __future__ import annotations

import argparse
import heapq
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qualeval.sim import server_process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--tokens-per-s", type=float, default=50.0)
    parser.add_argument("--items", type=int, default=64)
    parser.add_argument("--reasoning-tokens", type=int, default=40)
    args = parser.parse_args()
    decode_ms = 1000.0 / args.tokens_per_s
    sim = [
        "--task",
        "knowledge_qa",
        "--max-running",
        str(args.streams),
        "--decode-ms",
        f"{decode_ms}",
        "--ttft-ms",
        "20",
        "--prefill-ms-per-token",
        "0",
        "--batch-slowdown",
        "0",
        "--jitter",
        "0",
        "--reasoning-tokens",
        str(args.reasoning_tokens),
    ]
    with server_process(*sim) as url, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "qualeval",
                "run",
                "--base-url",
                url,
                "--model",
                "sim",
                "--task",
                "knowledge_qa",
                "--limit",
                str(args.items),
                "--concurrency",
                str(args.streams),
                "--warmup",
                "0",
                "--no-probe",
                "--out",
                str(out),
            ],
            check=True,
            capture_output=True,
        )
        command_wall = time.perf_counter() - started
        rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    # with the cap equal to the streams nothing queues, so each request's latency is its server busy time
    busy = sum(r["timing"]["end"] for r in rows) / 1000.0
    first = min(r["sent_at"] for r in rows)
    last = max(r["sent_at"] + r["timing"]["end"] / 1000.0 for r in rows)
    wall = last - first
    ideal = busy / args.streams
    # uneven requests cannot pack perfectly: replay them, in the order sent, through the streams greedily
    slots = [0.0] * args.streams
    for r in sorted(rows, key=lambda r: r["sent_at"]):
        heapq.heappush(slots, heapq.heappop(slots) + r["timing"]["end"] / 1000.0)
    packed = max(slots)
    tokens = sum(r["usage"]["completion_tokens"] for r in rows)
    print(
        f"server capacity: {args.streams} streams x {args.tokens_per_s:g} tokens/s; {len(rows)} requests, "
        f"{tokens} output tokens"
    )
    print(f"requests' wall time: {wall:.2f} s")
    print(f"server-bound ideal, same requests packed greedily in order: {packed:.2f} s; ratio {wall / packed:.3f}")
    print(f"lower bound, busy time / streams: {ideal:.2f} s; ratio {wall / ideal:.3f}")
    print(f"whole command (start-up, probe-free run, reports): {command_wall:.2f} s")


if __name__ == "__main__":
    main()
