"""How qualeval's scoring agrees with published figures on answers real models wrote.

    python benchmarks/agreement.py [--only gsm|math|mmlu_pro|bbh] [--show-disagreements N]

Corpora (see SOURCES.md beside them in ../shared/data/model_outputs):
  zeroeval_gsm      GSM8K, JSON answers; published accuracy and no-answer rate per model (ZeroEval's parser)
  zeroeval_math_l5  MATH level 5, JSON answers with LaTeX; published accuracy per model (the same parser)
  mmlu_pro_cot      MMLU-Pro 5-shot chain of thought; MMLU-Pro's own regex prediction per item
  bbh_davinci_cot   BIG-Bench-Hard CoT by code-davinci-002; the authors' accuracy per task

Every response goes through `qualeval score`'s own code path with the task a user would write (the gate's:
tests/real_outputs/corpora.py), so the figures are what a user gets. Beside each, the authors' own extraction
reimplemented (tests/real_outputs/references.py), which reproduces every published figure: per item, how often
qualeval agrees with it and, where they differ, how often qualeval is the one right by the gold.
tests/real_outputs/ holds the same comparisons as floors, in the default test run.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the gate's corpora and references, from tests/

from tests.real_outputs.corpora import CORPORA, FAMILIES, OUTPUTS, Corpus, Verdict, rows, scored
from tests.real_outputs.references import (
    bbh_answer,
    bbh_published,
    mmlu_pro_letter,
    zeroeval_published,
    zeroeval_verdict,
)

SUMMARIES = {"gsm": "gsm.summary.json", "math": "math-l5.summary.json"}


def _members(family: str) -> list[Corpus]:
    return [c for c in CORPORA.values() if c.family.name == family]


def _timed(corpus: Corpus) -> tuple[tuple[Verdict, ...], float]:
    started = time.perf_counter()
    verdicts = scored(corpus.key)
    return verdicts, len(verdicts) / (time.perf_counter() - started)


def _show(lines: list[str], show: int) -> None:
    for line in lines[:show]:
        print("    " + line)


def zeroeval(family: str, show: int) -> None:
    print(f"\n{FAMILIES[family].folder}: qualeval vs ZeroEval's published figures and its parser, item by item")
    head = f"{'model':32} {'n':>5} {'qualeval':>9} {'published':>9} {'diff':>6} {'no-ans q':>9} {'no-ans p':>9}"
    print(head + "   agree  differ: q right / ZeroEval right")
    for corpus in _members(family):
        published = zeroeval_published(corpus.source.parent / SUMMARIES[family])[corpus.member]
        verdicts, speed = _timed(corpus)
        theirs = [zeroeval_verdict(r["output"], r["answer"], corpus.member)[0] for r in rows(corpus)]
        n = len(verdicts)
        acc = 100 * sum(v.correct for v in verdicts) / n
        none = 100 * sum(v.extracted is None for v in verdicts) / n  # no answer at all, as ZeroEval counts it
        differ = [(v, t) for v, t in zip(verdicts, theirs, strict=True) if v.correct != t]
        mine = sum(v.correct for v, _ in differ)
        print(
            f"{corpus.member:32} {n:5} {acc:9.2f} {published[0]:9.2f} {acc - published[0]:+6.2f} {none:9.2f} "
            f"{published[1]:9.2f}  {100 - 100 * len(differ) / n:6.2f}%  {mine:4} / {len(differ) - mine:<4}"
            f"   ({speed:,.0f} records/s)"
        )
        said = [f"[{v.id}] q {v.extracted!r} {'right' if v.correct else 'wrong'}: {v.text[-200:]!r}" for v, _ in differ]
        _show(said, show)


def mmlu_pro(show: int) -> None:
    print("\nmmlu_pro_cot: qualeval vs MMLU-Pro's own regex prediction (pred)")
    print("  found: pred read by an answer statement (MMLU-Pro's rules 1-2); rule3: by its last-capital fallback;")
    print("  filled: pred set where its regexes read nothing; beyond: pred past the item's options")
    head = ("model", "n", "acc q", "acc p", "found", "agree", "rule3", "r3 agree", "filled", "beyond", "none")
    widths = (32, 5, 7, 7, 6, 8, 5, 8, 6, 6, 5)
    print(" ".join(f"{h:{w}}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(zip(head, widths, strict=True))))
    for corpus in _members("mmlu_pro"):
        verdicts, _ = _timed(corpus)
        kinds: Counter[str] = Counter()
        agree: Counter[str] = Counter()
        odd = []
        for verdict, row in zip(verdicts, rows(corpus), strict=True):
            letter, rule = mmlu_pro_letter(row["generated_text"])
            pred = row["pred"]
            kind = "none" if pred is None else "filled" if letter is None else "rule3" if rule == 3 else "found"
            kind = "beyond" if kind == "found" and ord(pred) - ord("A") >= len(row["options"]) else kind
            kind = "other" if kind in ("found", "rule3") and letter != pred else kind
            kinds[kind] += 1
            agree[kind] += verdict.extracted == pred
            if kind == "found" and verdict.extracted != pred:
                odd.append(f"[{verdict.id}] pred {pred}, q {verdict.extracted!r}: {row['generated_text'][-200:]!r}")
        n = len(verdicts)
        acc_q = 100 * sum(v.correct for v in verdicts) / n
        acc_p = 100 * sum(r["pred"] == r["answer"] for r in rows(corpus)) / n
        print(
            f"{corpus.member:32} {n:5} {acc_q:7.2f} {acc_p:7.2f} {kinds['found']:6} "
            f"{100 * agree['found'] / max(kinds['found'], 1):7.2f}% {kinds['rule3']:5} {agree['rule3']:8} "
            f"{kinds['filled']:6} {kinds['beyond']:6} {kinds['none']:5}"
        )
        _show(odd, show)


def bbh(show: int) -> None:
    print("\nbbh_davinci_cot: qualeval vs the authors' extraction ('So the answer is X.') and their accuracy")
    print(f"{'task':32} {'n':>5} {'qualeval':>9} {'published':>9} {'authors':>8} {'agree':>8}  statuses")
    for corpus in _members("bbh"):
        verdicts, _ = _timed(corpus)
        outputs = rows(corpus)
        theirs = [bbh_answer(o["prediction"]) == o["target"] for o in outputs]
        n = len(verdicts)
        published = bbh_published(corpus.source.with_name(f"{corpus.member}_eval_metrics.jsonl"))
        agree = sum(v.correct == t for v, t in zip(verdicts, theirs, strict=True))
        statuses = ", ".join(f"{s} {k}" for s, k in Counter(v.status for v in verdicts).most_common())
        print(
            f"{corpus.member:32} {n:5} {100 * sum(v.correct for v in verdicts) / n:9.2f} {published:9.2f} "
            f"{100 * sum(theirs) / n:8.2f} {100 * agree / n:7.2f}%  {statuses}"
        )
        differ = [(v, t) for v, t in zip(verdicts, theirs, strict=True) if v.correct != t]
        _show([f"[{v.id}] authors {t}, q {v.extracted!r} {v.status}: {v.text[-160:]!r}" for v, t in differ], show)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show-disagreements", type=int, default=0, metavar="N")
    parser.add_argument("--only", choices=list(FAMILIES), default=None)
    args = parser.parse_args()
    if not OUTPUTS.exists():
        parser.error(f"{OUTPUTS} missing: the real model outputs are read from ../shared/data/model_outputs")
    show = args.show_disagreements
    for family in ("gsm", "math"):
        if args.only in (None, family):
            zeroeval(family, show)
    if args.only in (None, "mmlu_pro"):
        mmlu_pro(show)
    if args.only in (None, "bbh"):
        bbh(show)


if __name__ == "__main__":
    main()
