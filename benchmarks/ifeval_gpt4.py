"""IFEval's scoring against the paper: qualeval's four figures on the GPT-4 responses the IFEval authors published,
beside the figures of the paper (arXiv:2311.07911).

    python benchmarks/ifeval_gpt4.py [../shared/data/ifeval]

The responses are joined to the prompts on their text. One prompt (key 2785) was edited upstream after the
responses were made ("at least one placeholder" became "at least 3"); it is scored against the current prompt,
as the paper's strict figures were.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from qualeval.figures.accuracy import summarize
from qualeval.reasoning.completion import Completion
from qualeval.records import Outcome
from qualeval.scoring.verdict import decide
from qualeval.tasks import build_samples, load_task

PAPER = {"prompt_strict": 76.89, "instruction_strict": 83.57, "prompt_loose": 79.30, "instruction_loose": 85.37}
RESPONSES = "input_response_data_gpt4_20231107_145030.jsonl"


def figures(folder: Path) -> tuple[dict[str, float], int]:
    """qualeval's four IFEval figures (percent) on the GPT-4 responses, and how many prompts they cover."""
    task = load_task("ifeval")
    samples = build_samples(task, data=folder / "input_data.jsonl")
    by_prompt = {s.meta["prompt"]: s for s in samples}
    changed = next(s for s in samples if s.id.endswith("/2785"))
    outcomes = []
    for line in (folder / RESPONSES).read_bytes().splitlines():
        row = orjson.loads(line)
        sample = by_prompt.get(row["prompt"], changed if row["prompt"].startswith("What is inside Shinto") else None)
        if sample is None:
            raise SystemExit(f"no IFEval prompt for response: {row['prompt'][:60]}")
        verdict = decide(task, sample, Completion(content=row["response"]))
        outcomes.append(
            Outcome(status="ok", correct=verdict.score.correct, rung="content", measures=verdict.score.measures)
        )
    summary = summarize("ifeval", outcomes)
    return {name: round(100 * cell.accuracy, 2) for name, cell in summary.measures.items()}, len(outcomes)


def main() -> None:
    folder = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "data" / "ifeval"
    )
    ours, n = figures(folder)
    print(f"IFEval, GPT-4 responses ({n} prompts): qualeval vs the paper")
    for name, paper in PAPER.items():
        print(f"  {name:<20} {ours[name]:6.2f}  {paper:6.2f}  ({ours[name] - paper:+.2f})")


if __name__ == "__main__":
    main()
