"""qualeval's figures for a random workload beside the reference server's own log of what it sent.

Starts `qualeval serve-sim --log FILE` in its own process, runs `vllm-random-4000-500-rate0.3` against it (smaller
by default, same shape: range ratio 0.9, burstiness 0.7, seed 42), and prints, per figure, qualeval's value, the
server's and their difference: prompt and output tokens (counted by each side), mean and p99 TTFT and E2E (the
client's clock from sending, the server's from receiving), and request throughput.

    python benchmarks/workload_vs_server.py [--prompts 60] [--rate 4] [--input-len 1000] [--output-len 100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from qualeval.sim import server_process
from qualeval.wire.histogram import interpolated


def _p(values: list[float], q: float) -> float:
    return interpolated(sorted(values), q)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--rate", type=float, default=4.0)
    parser.add_argument("--input-len", type=int, default=1000)
    parser.add_argument("--output-len", type=int, default=100)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="qualeval-bench-"))
    log = folder / "server.jsonl"
    sim = ("--log", str(log), "--decode-ms", "4", "--ttft-ms", "30", "--prefill-ms-per-token", "0.02")
    with server_process(*sim) as url:
        sets = [f"num_prompts={args.prompts}", f"input_len={args.input_len}", f"output_len={args.output_len}"]
        command = [sys.executable, "-m", "qualeval", "run", "--workload", "vllm-random-4000-500-rate0.3",
                   "--base-url", url, "--model", "sim", "--out", str(folder / "run"), "--request-rate", str(args.rate),
                   "--no-probe", *(x for s in sets for x in ("--workload-set", s))]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(done.stderr)
    summary = json.loads((folder / "run" / "summary.json").read_text())
    ours = next(iter(summary["serving"]["workload"]["levels"].values()))["vllm"]
    rows = [json.loads(line) for line in (folder / "run" / "records.jsonl").read_text().splitlines()]
    measured = [r for r in rows if not r["warmup"]]
    # before the measured requests the server saw the output-forcing check and the warm-up: the log's last lines
    sent = [json.loads(line) for line in log.read_text().splitlines()][-len(measured) :]
    span = max(x["received"] + x["end_ms"] / 1000 for x in sent) - min(x["received"] for x in sent)
    pairs = [
        ("prompt tokens (usage, template included)", sum(r["usage"]["prompt_tokens"] for r in measured),
         sum(x["prompt_tokens"] for x in sent)),
        ("output tokens", ours["total_output_tokens"], sum(x["completion_tokens"] for x in sent)),
        ("mean TTFT (ms)", ours["ttft"]["mean"], sum(x["first_token_ms"] for x in sent) / len(sent)),
        ("p99 TTFT (ms)", ours["ttft"]["p99"], _p([x["first_token_ms"] for x in sent], 0.99)),
        ("mean E2E (ms)", ours["e2el"]["mean"], sum(x["end_ms"] for x in sent) / len(sent)),
        ("p99 E2E (ms)", ours["e2el"]["p99"], _p([x["end_ms"] for x in sent], 0.99)),
        ("request throughput (req/s)", ours["request_throughput"], len(sent) / span),
    ]  # fmt: skip
    print(f"{len(measured)} requests, {args.rate:g} req/s offered, burstiness 0.7; run in {folder}")
    print(f"{'figure':<42} {'qualeval':>12} {'server log':>12} {'difference':>12} {'ratio':>8}")
    for name, a, b in pairs:
        print(f"{name:<42} {a:>12,.2f} {b:>12,.2f} {a - b:>+12,.2f} {a / b if b else float('nan'):>8.4f}")


if __name__ == "__main__":
    main()
