"""`scorer: math` scores as math-verify scores: the model's final content (or the extracted span with its
delimiters) parsed with LaTeX and expression extraction, the gold parsed as LaTeX."""

from __future__ import annotations

from pathlib import Path

import math_verify
import pytest

from qualeval.judge import judge
from qualeval.models import Completion, Sample
from qualeval.tasks import load_task

# (gold as MATH stores it, the model's final content, what a careful grader says)
FORMS = [
    ("\\frac{1}{2}", "So the probability is $\\frac{1}{2}$.", True),
    ("\\frac{1}{2}", "The answer is \\boxed{\\dfrac{1}{2}}.", True),
    ("\\frac{1}{2}", "The answer is $0.5$.", True),
    ("\\frac{1}{2}", "The answer is \\boxed{\\frac{1}{3}}.", False),
    ("3\\sqrt{13}", "Thus $AB = 3\\sqrt{13}$.", True),
    ("3\\sqrt{13}", "Thus $AB = \\sqrt{117}$.", True),
    ("3\\sqrt{13}", "Thus $AB = 3$.", False),
    ("\\sqrt{2}", "The length is \\(\\sqrt{2}\\).", True),
    ("(-\\infty, 3]", "The solution set is $(-\\infty, 3]$.", True),
    ("(-\\infty, 3]", "The solution set is $(-\\infty, 3)$.", False),
    ("[2,5)", "So $x \\in [2, 5)$.", True),
    ("\\{1,2,3,4\\}", "The set is $\\{1,3\\} \\cup \\{2,4\\}$.", True),
    ("{1,3} \\cup {2,4}", "That is ${1,2,3,4}$.", True),
    ("-15", "Adding them, the sum is $\\boxed{-15}$.", True),
    ("-15", "Adding them, the sum is $\\boxed{15}$.", False),
    ("2\\pi", "The period is $\\boxed{2\\pi}$.", True),
    ("x^2+2x+1", "Expanding, $(x+1)^2$.", True),
    ("\\frac{\\sqrt{3}}{2}", "$\\sin 60^\\circ = \\frac{\\sqrt3}{2}$", True),
    ("10", "The final answer is $\\boxed{10}$. I hope it is correct.", True),
    ("18", "The answer is 18.", True),
    ("\\text{(C)}", "The answer is $\\boxed{\\text{(C)}}$.", True),
]


def _verdict(gold: str, content: str) -> bool:
    task = load_task(str(_math_task()))
    sample = Sample(id="m/0", task="math", messages=(), gold=gold)
    return judge(task, sample, Completion(content=content, status="ok")).score.correct


def _math_task() -> Path:
    path = Path(__file__).parent / "data" / "math_task.yaml"
    return path


def _direct(gold: str, content: str) -> bool:
    """math-verify on its own, as its README shows: gold in a LaTeX environment, the whole content parsed."""
    return bool(math_verify.verify(math_verify.parse(f"${gold}$"), math_verify.parse(content)))


@pytest.mark.parametrize(("gold", "content", "right"), FORMS, ids=[f"{g} | {c[:30]}" for g, c, _ in FORMS])
def test_latex_forms_score_as_math_verify_scores_them(gold: str, content: str, right: bool) -> None:
    assert _verdict(gold, content) is right
    assert _direct(gold, content) is right  # the table itself is math-verify's verdict


@pytest.mark.parametrize(
    ("gold", "content", "right"),
    [
        ("3\\sqrt{13}", '```json\n{"reasoning": "...", "answer": "3\\\\sqrt{13}"}\n```', True),
        ("3\\sqrt{13}", '{"reasoning": "the side is \\sqrt{117}", "answer": "3\\sqrt{13}"}', True),
        ("\\frac{1}{2}", '{"reasoning": "half", "answer": "\\frac{1}{2}"}', True),  # "\f" would be a form feed
        ("\\frac{1}{2}", '{"answer": "1/2"}', True),
        ("\\frac{1}{2}", '{"answer": "1/3"}', False),
    ],
)
def test_a_json_answer_field_keeps_its_latex(gold: str, content: str, right: bool) -> None:
    assert _verdict(gold, content) is right


def test_math_verify_readme_example() -> None:
    # the README's own: gold "${1,3} \cup {2,4}$", answer "${1,2,3,4}$", verify(gold, answer) is True
    assert _verdict("{1,3} \\cup {2,4}", "${1,2,3,4}$")
    assert not _verdict("{1,3} \\cup {2,4}", "${1,2,3}$")


@pytest.mark.parametrize(
    ("gold", "content", "right"),
    [
        ("6\\sqrt{2}", '{"answer": "6√2"}', True),
        ("6", '{"answer": "6√2"}', False),  # the √ is not dropped: 6√2 is not 6
        ("2\\pi", "Answer: 2π", True),
        ("-3", "Answer: −3", True),
    ],
)
def test_unicode_math_is_read_as_the_latex_it_stands_for(gold: str, content: str, right: bool) -> None:
    assert _verdict(gold, content) is right
