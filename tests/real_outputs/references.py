"""The authors' own extraction, reimplemented, and the figures they published: what the gate holds qualeval to.

Each reimplementation reproduces its authors' published figures exactly on every shared corpus: ZeroEval's
accuracy and no-answer rate for all 8 GSM8K and all 4 MATH level 5 models, MMLU-Pro's `pred` for every item where
it found a letter in the text, BIG-Bench-Hard's accuracy for all six tasks. The floor tests check that first, so
a broken reference fails as itself and not as a qualeval regression. benchmarks/agreement.py prints the same
comparisons as tables.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

# --- ZeroEval (WildEval/ZeroEval, src/evaluation/gsm_eval.py, math_eval.py, eval_utils.py) -------------------
# GSM8K and MATH level 5 are read the same way: the `answer` of the first JSON object, else of a regex over the
# text; then the first number of that answer against the first number of the gold.


def _first_object(text: str) -> Any:
    """ZeroEval's first try: the first top-level `{...}` (braces counted, strings not parsed), line breaks
    dropped, as strict JSON. There is no second try when that one object does not parse."""
    depth, start = 0, -1
    for at, char in enumerate(text):
        if char == "{":
            start = at if depth == 0 else start
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                try:
                    return json.loads(text[start : at + 1].replace("\n", ""))
                except ValueError:
                    return None
    return None


_ANSWER_PATTERNS = (  # tried in order; the last two when the value has no quotes, or the key none either
    re.compile(r'"answer"\s*:\s*"([^"]*?)"'),
    re.compile(r'"answer"\s*:\s*"(.*?)"', re.DOTALL),
    re.compile(r'"answer"\s*:\s*([^,\s]*)'),
    re.compile(r"answer\s*:\s*([^,\s]*)"),
)
_BOXED = re.compile(r"\\boxed{([\w\d]+)}")


def zeroeval_answer(output: str, model: str) -> str | None:
    """The answer ZeroEval reads from one output, or None where it counts "No answer". Llama-3.1 models alone
    also get their `\\boxed{...}` read, as ZeroEval special-cases them."""
    found = _first_object(output)
    if isinstance(found, dict) and "answer" in found:
        return str(found["answer"])
    for pattern in _ANSWER_PATTERNS:
        match = pattern.search(output)
        if match:
            return match.group(1)
    boxed = _BOXED.search(output) if "Llama-3.1" in model else None
    return boxed.group(1) if boxed else None


_ARITHMETIC: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _arithmetic(node: ast.AST) -> float:
    """What Python's eval gives for plain arithmetic, which is all ZeroEval's eval of an answer ever succeeds on
    here; anything else raises, as eval does on prose. Never eval itself: the text is a model's."""
    if isinstance(node, ast.Expression):
        return _arithmetic(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _ARITHMETIC:
        return float(_ARITHMETIC[type(node.op)](_arithmetic(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("exponent too large to evaluate here")
        return float(_ARITHMETIC[type(node.op)](left, right))
    raise ValueError("not arithmetic")


def _sanitized(answer: str) -> str:
    """ZeroEval's clean-up: no `$`, no thousands commas; a fraction (anything with `/` that evaluates) becomes
    its float."""
    answer = answer.replace("$", "").strip().replace(",", "")
    if "/" in answer:
        try:
            return str(float(_arithmetic(ast.parse(answer, mode="eval"))))
        except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError):
            pass
    return answer


_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def zeroeval_verdict(output: str, gold: str, model: str) -> tuple[bool, bool]:
    """(correct, answered), as ZeroEval decides one output: the answer's first number equals the gold's."""
    answer = zeroeval_answer(output, model)
    if answer is None:
        return False, False
    mine, theirs = _NUMBER.search(_sanitized(answer)), _NUMBER.search(_sanitized(gold.replace("#", "").strip()))
    return bool(mine and theirs and float(mine.group()) == float(theirs.group())), True


def zeroeval_published(summary: Path) -> dict[str, tuple[float, float]]:
    """A ZeroEval `*.summary.json`: (accuracy, no-answer rate), in percent, by model file name."""
    table = json.loads(summary.read_text(encoding="utf-8"))
    return {row["Model"].split("/")[-1]: (float(row["Acc"]), float(row["No answer"])) for row in table}


# --- MMLU-Pro (TIGER-AI-Lab/MMLU-Pro, its evaluate_from_* scripts) ------------------------------------------------


def mmlu_pro_letter(text: str) -> tuple[str | None, int]:
    """MMLU-Pro's own extraction chain and which of its three rules fired (0: none).

    Rules 1 and 2 read an answer statement; rule 3 takes the last standalone capital A-J anywhere, which
    qualeval does not do (a capital in prose is a word, an initial or a variable, not an answer). Where all three
    fail MMLU-Pro fills `pred` in by other means, so a `pred` with no rule behind it is no extraction to agree with.
    """
    for rule, pattern in ((1, r"answer is \(?([A-J])\)?"), (2, r".*[aA]nswer:\s*([A-J])")):
        match = re.search(pattern, text)
        if match:
            return match.group(1), rule
    match = re.search(r"\b[A-J]\b(?!.*\b[A-J]\b)", text, re.DOTALL)
    return (match.group(0), 3) if match else (None, 0)


# --- BIG-Bench-Hard (suzgunmirac/BIG-Bench-Hard, code-davinci-002 outputs) --------------------------------------


def bbh_answer(prediction: str) -> str:
    """The authors' extraction: what follows the last "So the answer is ", without its final full stop."""
    answer = prediction.split("So the answer is ")[-1].strip()
    return answer[:-1] if answer.endswith(".") else answer


def bbh_published(metrics: Path) -> float:
    """A `<task>_eval_metrics.jsonl`: the authors' accuracy, in percent."""
    return float(json.loads(metrics.read_text(encoding="utf-8").splitlines()[0])["accuracy"])
