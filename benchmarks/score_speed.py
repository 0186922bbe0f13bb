"""How long `qualeval score` takes on all 1,319 GSM8K responses, against the 2-second target, and how many
records per second the judge gets through in process (target: 5,000).

    python benchmarks/score_speed.py [--data ../shared/data/gsm8k]

Responses are shaped like a reasoning model's: a trace full of numbers, then an answer in one of several
forms. The whole command is timed (interpreter start, imports, reading, splitting, extraction, scoring,
writing), best of three runs.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 2.0
TARGET_RATE = 5000
FORMS = [
    "Step by step, so {a}.\n#### {a}",
    "The answer is ${a}.00. That took 3 steps.",
    "\\boxed{{{a}}}",
    "Answer: {a}",
    '```json\n{{"answer": {a}}}\n```',
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/gsm8k")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.data / "test.jsonl").read_text().splitlines()]
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "responses.jsonl"
        with path.open("w") as handle:
            for i, row in enumerate(rows):
                gold = row["answer"].rsplit("####", 1)[1].strip().replace(",", "")
                trace = " ".join(
                    f"{rng.randint(2, 99)} + {rng.randint(2, 99)} = {rng.randint(2, 200)}." for _ in range(40)
                )
                handle.write(
                    json.dumps(
                        {
                            "id": f"gsm8k/test/{i}",
                            "reasoning": trace,
                            "finish_reason": "stop",
                            "content": FORMS[i % len(FORMS)].format(a=gold),
                        }
                    )
                    + "\n"
                )
        command = [
            sys.executable,
            "-m",
            "qualeval",
            "score",
            "--task",
            "gsm8k",
            "--responses",
            str(path),
            "--data",
            str(args.data),
            "--out",
            str(Path(tmp) / "out"),
        ]
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        summary = json.loads((Path(tmp) / "out" / "summary.json").read_text())["tasks"]["gsm8k"]["summary"]
        rate = _in_process_rate(path, args.data)
    best = min(times)
    print(
        f"responses scored: {summary['n']}  accuracy {summary['accuracy']:.1%}  "
        f"naive extractor {summary['naive_accuracy']:.1%}"
    )
    print(f"qualeval score, whole command: {best:.2f} s (best of 3; runs {', '.join(f'{t:.2f}' for t in times)})")
    print(f"ratio to the {TARGET_S:g} s target: {best / TARGET_S:.2f} ({'within' if best <= TARGET_S else 'OVER'})")
    verdict = "within" if rate >= TARGET_RATE else "UNDER"
    print(f"judging in process: {rate:,.0f} records/s (best of 3; target {TARGET_RATE:,}: {verdict})")


def _in_process_rate(path: Path, data: Path) -> float:
    """Records judged per second by score_file itself (reading, splitting, extraction, scoring), no start-up."""
    from qualeval.run.offline import score_file
    from qualeval.tasks import load_task

    task = load_task("gsm8k")
    score_file(task, path, data=data)  # warm: imports, the dataset index
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        items, _ = score_file(task, path, data=data)
        best = min(best, time.perf_counter() - start)
    return len(items) / best


if __name__ == "__main__":
    main()
