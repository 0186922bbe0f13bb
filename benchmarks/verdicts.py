"""How qualeval's verdicts agree with hand-decided ones, beside the baselines it should at least match.

    python benchmarks/verdicts.py [--show-disagreements]

tests/data/math_verdicts.json   answer/gold pairs a careful grader decided (scorer `math`): qualeval's verdict
                                against math-verify called on the raw content (`verify(parse("$gold$"),
                                parse(content))`, its default extraction)
tests/data/freeform_verdicts*.json  free-form answers a person judged (scorer `alias_match`): qualeval's verdict
                                against plain containment (an alias inside the answer, or the answer inside an
                                alias, as whole normalised words), with how many right answers each accepts and
                                how many wrong ones; _smollm2 holds a real model's answers
Every verdict goes through qualeval.scoring.verdict, as a run or `qualeval score` reaches it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import math_verify

from qualeval.reasoning.completion import Completion
from qualeval.scoring.extract import normalize, words_to_digits
from qualeval.scoring.verdict import decide
from qualeval.tasks import Sample, load_task
from qualeval.wire.models import Message

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


def _pairs(name: str) -> list[dict[str, Any]]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _raw_math_verify(gold: str, content: str) -> bool:
    return bool(math_verify.verify(math_verify.parse(f"${gold}$"), math_verify.parse(content)))


def _contained(value: str | None, accepted: list[str]) -> bool:
    if value is None:
        return False
    got = words_to_digits(normalize(value))
    forms = [words_to_digits(normalize(a)) for a in accepted]
    return any(form and (f" {form} " in f" {got} " or (got and f" {got} " in f" {form} ")) for form in forms)


def _line(name: str, verdicts: list[bool], wanted: list[bool]) -> str:
    agree = sum(v is w for v, w in zip(verdicts, wanted, strict=True))
    accepted = sum(v and w for v, w in zip(verdicts, wanted, strict=True))
    false = sum(v and not w for v, w in zip(verdicts, wanted, strict=True))
    return (
        f"  {name:28} agrees {100 * agree / len(wanted):6.2f}%   accepts {accepted:3} of {sum(wanted)} right"
        f"   accepts {false:3} of {len(wanted) - sum(wanted)} wrong"
    )


def maths(show: bool) -> None:
    task = load_task(str(DATA / "math_task.yaml"))
    pairs = _pairs("math_verdicts.json")
    ours, raw = [], []
    for p in pairs:
        sample = Sample(id="m/0", task="math", messages=(), gold=p["gold"])
        verdict = decide(task, sample, Completion(content=p["content"], status="ok"))
        ours.append(verdict.score.correct)
        raw.append(_raw_math_verify(p["gold"], p["content"]))
        if show and ours[-1] is not p["verdict"]:
            print(f"    want {p['verdict']}: gold {p['gold']!r}, read {verdict.extraction.value!r} ({p['shape']})")
    wanted = [p["verdict"] for p in pairs]
    print(f"\nmath_verdicts.json: {len(pairs)} pairs")
    print(_line("qualeval", ours, wanted))
    print(_line("math-verify on the raw text", raw, wanted))


FREEFORM = ("freeform_verdicts.json", "freeform_verdicts_heldout.json", "freeform_verdicts_smollm2.json")


def freeform(name: str, show: bool) -> None:
    task = load_task("knowledge_qa")
    pairs = _pairs(name)
    ours, plain = [], []
    for p in pairs:
        question = (Message(role="user", content=p["question"]),)
        sample = Sample(id="q/0", task="q", messages=question, gold=p["gold"], aliases=tuple(p["aliases"]))
        verdict = decide(task, sample, Completion(content=p["answer"], status="ok"))
        ours.append(verdict.score.correct)
        plain.append(_contained(verdict.extraction.value, [p["gold"], *p["aliases"]]))
        if show and ours[-1] is not p["verdict"]:
            print(f"    want {p['verdict']}: gold {p['gold']!r}, answer {p['answer'][:80]!r} ({p['shape']})")
    wanted = [p["verdict"] for p in pairs]
    print(f"\n{name}: {len(pairs)} pairs")
    print(_line("qualeval", ours, wanted))
    print(_line("containment", plain, wanted))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show-disagreements", action="store_true")
    args = parser.parse_args()
    maths(args.show_disagreements)
    for name in FREEFORM:
        freeform(name, args.show_disagreements)


if __name__ == "__main__":
    main()
