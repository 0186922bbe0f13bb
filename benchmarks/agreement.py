"""How qualeval's scoring agrees with published figures on answers real models wrote.

    python benchmarks/agreement.py [--outputs ../shared/data/model_outputs] [--show-disagreements N]

Corpora (see SOURCES.md beside them):
  zeroeval_gsm      GSM8K, JSON answers; published accuracy and no-answer rate per model (ZeroEval's parser)
  zeroeval_math_l5  MATH level 5, JSON answers with LaTeX; published accuracy per model
  mmlu_pro_cot      MMLU-Pro 5-shot chain of thought; MMLU-Pro's own regex prediction per item

Every response goes through `qualeval score`'s own code path (offline.score_file) with the per-line target,
so the figures are what a user gets. Prints, per corpus and model: qualeval's accuracy, the published figure and
the difference; for GSM8K, per-item agreement with a reimplementation of ZeroEval's parser and how many of the
items where the two differ qualeval gets right; for MMLU-Pro, per-item agreement with MMLU-Pro's prediction where
it found a letter, and what qualeval extracts where it found none.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from qualeval.records import OfflineItem
from qualeval.run.offline import score_file
from qualeval.tasks import load_task

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "data" / "model_outputs"

MATH_TASK = """\
name: math_l5
samples: [{problem: x, answer: "1"}]
doc_to_text: "{{ problem }}"
doc_to_target: answer
answer: {type: text}
scorer: math
"""


def _rows(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _score(task_ref: str, lines: list[dict], tmp: Path) -> list[OfflineItem]:
    path = tmp / "responses.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    items, _ = score_file(load_task(task_ref), path)
    return items


def _published(summary: Path) -> dict[str, tuple[float, float]]:
    table = json.loads(summary.read_text())
    return {row["Model"].split("/")[-1]: (float(row["Acc"]), float(row["No answer"])) for row in table}


def _first_object(text: str) -> dict | None:
    """The first balanced {...} that strict JSON accepts, as ZeroEval's parser tries first."""
    start = text.find("{")
    while start != -1:
        depth = 0
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                try:
                    found = json.loads(text[start : end + 1])
                    return found if isinstance(found, dict) else None
                except ValueError:
                    break
        start = text.find("{", start + 1)
    return None


_KEY_VALUE = re.compile(r'(?P<key>"?\w+"?)\s*:\s*(?P<value>{[^}]*}|".*?"|[^,}]+)', re.DOTALL)


def _zeroeval_gsm(output: str, gold: str) -> tuple[bool, bool]:
    """(correct, answered) as ZeroEval's GSM parser decides, reimplemented from its published description: the
    first strict JSON object, else key-value pairs read by a regex; the first number of `answer`, after dropping
    `$` and `,`, equal to the gold's. It reproduces the published accuracy and no-answer rate (see the README)."""
    found = _first_object(output)
    if found is None or "answer" not in found:
        found = {m.group("key").strip('"'): m.group("value").strip().strip('"') for m in _KEY_VALUE.finditer(output)}
    if "answer" not in found:
        return False, False
    number = re.search(r"-?\d+(\.\d+)?", str(found["answer"]).replace("$", "").replace(",", ""))
    return bool(number) and float(number.group()) == float(gold.replace(",", "")), True


def zeroeval(corpus: Path, task_ref: str, gold_of, tmp: Path, show: int, reference=None) -> None:
    published = _published(next(corpus.glob("*.summary.json")))
    print(f"\n{corpus.name}: qualeval vs published (ZeroEval's own parser)")
    head = f"{'model':32} {'n':>5} {'qualeval':>9} {'published':>9} {'diff':>6} {'no-ans q':>9} {'no-ans p':>9}"
    print(head + ("  reimpl   agree  q right" if reference else ""))
    for path in sorted(corpus.glob("*.jsonl")):
        rows = list(_rows(path))
        lines = [{"id": str(i), "content": r["output"], "target": gold_of(r)} for i, r in enumerate(rows)]
        started = time.perf_counter()
        items = _score(task_ref, lines, tmp)
        elapsed = time.perf_counter() - started
        acc = 100 * sum(i.correct for i in items) / len(items)
        none = 100 * sum(i.method == "none" for i in items) / len(items)  # no answer at all, as ZeroEval counts it
        pub_acc, pub_none = published.get(path.stem, (float("nan"), float("nan")))
        line = (
            f"{path.stem:32} {len(items):5} {acc:9.2f} {pub_acc:9.2f} {acc - pub_acc:+6.2f} {none:9.2f} {pub_none:9.2f}"
        )
        if reference:  # per item, against the reimplementation of the benchmark's own parser
            theirs = [reference(r["output"], gold_of(r))[0] for r in rows]
            differ = [i for i, t in zip(items, theirs, strict=True) if i.correct != t]
            line += f"  {100 * sum(theirs) / len(rows):6.2f} {100 - 100 * len(differ) / len(rows):6.2f}%"
            line += f" {sum(i.correct for i in differ):4}/{len(differ)}"
        print(f"{line}   ({len(items) / elapsed:,.0f} records/s)")
        for item, row in [(i, r) for i, r in zip(items, rows, strict=True) if not i.correct][:show]:
            print(f"    [{item.id}] gold={item.gold!r} got={item.extracted!r} via {item.method}")
            print("      " + row["output"][-300:].replace("\n", "\\n"))


def _mmlu_pro_regex(text: str) -> tuple[str | None, int]:
    """MMLU-Pro's own extraction chain (its evaluate scripts) and which of its three rules fired (0: none).

    Rules 1 and 2 read an answer statement; rule 3 takes the last standalone capital A-J anywhere, which
    qualeval does not do (a capital in prose is a word, an initial or a variable, not an answer).
    """
    for rule, pattern in ((1, r"answer is \(?([A-J])\)?"), (2, r".*[aA]nswer:\s*([A-J])")):
        match = re.search(pattern, text)
        if match:
            return match.group(1), rule
    match = re.search(r"\b[A-J]\b(?!.*\b[A-J]\b)", text, re.DOTALL)
    return (match.group(0), 3) if match else (None, 0)


def mmlu_pro(corpus: Path, tmp: Path, show: int) -> None:
    print(f"\n{corpus.name}: qualeval vs MMLU-Pro's own regex prediction (pred)")
    print("  filled: pred set where MMLU-Pro's regexes read nothing in the text;")
    print("  found: by an answer statement (MMLU-Pro's rules 1-2); rule3: by its last-standalone-capital fallback;")
    print("  beyond: pred is a letter past the item's options (qualeval reads no answer there)")
    head = ("model", "n", "acc q", "acc p", "found", "agree", "rule3", "r3 agree", "filled", "beyond", "none")
    head += ("q reads",)
    print(" ".join(f"{h:32}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(zip(head, _WIDTHS, strict=True))))
    for path in sorted(corpus.glob("*.jsonl")):
        rows = list(_rows(path))
        lines = [
            {"id": str(i), "content": r["generated_text"], "target": r["answer"], "choices": r["options"]}
            for i, r in enumerate(rows)
        ]
        items = _score("mmlu_pro", lines, tmp)  # the built-in task, as a user would score with it
        pairs = list(zip(items, rows, strict=False))
        read = [(i, r, *_mmlu_pro_regex(r["generated_text"])) for i, r in pairs]
        found = [(i, r) for i, r, letter, rule in read if r["pred"] is not None and letter == r["pred"] and rule < 3]
        by_rule3 = [
            (i, r) for i, r, letter, rule in read if r["pred"] is not None and letter == r["pred"] and rule == 3
        ]
        filled = [(i, r) for i, r, letter, _ in read if r["pred"] is not None and letter is None]
        beyond = [(i, r) for i, r in found if ord(r["pred"]) - ord("A") >= len(r["options"])]
        found = [pair for pair in found if pair not in beyond]
        missing = [(i, r) for i, r in pairs if r["pred"] is None]
        agree = sum(i.extracted == r["pred"] for i, r in found)
        r3_agree = sum(i.extracted == r["pred"] for i, r in by_rule3)
        acc_q = 100 * sum(i.correct for i in items) / len(items)
        acc_p = 100 * sum(r["pred"] == r["answer"] for r in rows) / len(rows)
        reads = sum(i.extracted is not None for i, _ in missing)
        print(
            f"{path.stem:32} {len(items):5} {acc_q:7.2f} {acc_p:7.2f} {len(found):6} {100 * agree / len(found):7.2f}% "
            f"{len(by_rule3):5} {r3_agree:8} {len(filled):6} {len(beyond):6} {len(missing):5} {reads:7}"
        )
        for item, row in [(i, r) for i, r in found if i.extracted != r["pred"]][:show]:
            print(f"    [{item.id}] pred={row['pred']} got={item.extracted!r} via {item.method}")
            print("      " + row["generated_text"][-240:].replace("\n", "\\n"))


_WIDTHS = (32, 5, 7, 7, 6, 8, 5, 8, 6, 6, 5, 7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--outputs", type=Path, default=DEFAULT)
    parser.add_argument("--show-disagreements", type=int, default=0, metavar="N")
    parser.add_argument("--only", choices=["gsm", "math", "mmlu_pro"], default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "math_l5.yaml").write_text(MATH_TASK)
        show = args.show_disagreements
        if args.only in (None, "gsm"):
            gold = lambda r: r["answer"].lstrip("# ").strip()  # noqa: E731
            zeroeval(args.outputs / "zeroeval_gsm", "gsm8k", gold, tmp, show, _zeroeval_gsm)
        if args.only in (None, "math"):
            zeroeval(args.outputs / "zeroeval_math_l5", str(tmp / "math_l5.yaml"), lambda r: r["answer"], tmp, show)
        if args.only in (None, "mmlu_pro"):
            mmlu_pro(args.outputs / "mmlu_pro_cot", tmp, show)


if __name__ == "__main__":
    main()
