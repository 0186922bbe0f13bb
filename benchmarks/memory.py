"""Peak memory of a long run and its rescore: records stream to and from disk, so memory stays flat.

    python benchmarks/memory.py [--records 100000]

Runs the syllogisms task (1,024 items) against the reference server in burst mode, with as many samples per
item as it takes to reach --records, then rescores the run directory. Each command runs in its own process,
whose peak resident memory is read back from the kernel. Target: at most 300 MB each.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qualeval.sim import server_process

TARGET_MB = 300.0
ITEMS = 1000
# a child's peak RSS (KiB on Linux), measured by a small wrapper so each command is measured alone
WRAP = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def peak_mb(*command: str) -> tuple[float, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAP, *command], check=True, capture_output=True, text=True)
    return int(done.stdout.strip()) / 1024, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    per_item = max(1, math.ceil(args.records / ITEMS))
    sim = ["--burst", "--task", "syllogisms", "--reasoning-tokens", "12"]
    with server_process(*sim) as url, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        run_mb, run_s = peak_mb(
            sys.executable,
            "-m",
            "qualeval",
            "run",
            "--base-url",
            url,
            "--model",
            "sim",
            "--task",
            "syllogisms",
            "--limit",
            str(ITEMS),
            "--samples-per-item",
            str(per_item),
            "--temperature",
            "0.7",
            "--concurrency",
            "64",
            "--no-stream",
            "--no-probe",
            "--warmup",
            "0",
            "--out",
            str(out),
        )
        records = sum(1 for _ in (out / "records.jsonl").open("rb"))
        size_mb = (out / "records.jsonl").stat().st_size / 2**20
        rescore_mb, rescore_s = peak_mb(sys.executable, "-m", "qualeval", "rescore", str(out))
    print(f"records: {records:,} ({size_mb:,.0f} MB of records.jsonl)")
    for name, mb, seconds in (("run", run_mb, run_s), ("rescore", rescore_mb, rescore_s)):
        verdict = "within" if mb <= TARGET_MB else "OVER"
        print(
            f"{name:8} peak RSS {mb:6.0f} MB in {seconds:6.1f} s: {mb / TARGET_MB:.2f} of the {TARGET_MB:.0f} MB "
            f"target ({verdict})"
        )


if __name__ == "__main__":
    main()
