"""`scorer: math` scores as math-verify scores: the model's final content (or the extracted span with its
delimiters) parsed with LaTeX and expression extraction, the gold parsed as LaTeX."""

from __future__ import annotations

import json
from pathlib import Path

import math_verify
import pytest

from qualeval.reasoning.completion import Completion
from qualeval.scoring.verdict import decide
from qualeval.tasks import load_task
from qualeval.tasks.sample import Sample
from tests.conftest import DATA

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
    return decide(task, sample, Completion(content=content, status="ok")).score.correct


def _math_task() -> Path:
    path = DATA / "math_task.yaml"
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


VERDICTS = json.loads((DATA / "math_verdicts.json").read_text(encoding="utf-8"))


def test_verdicts_agree_with_a_careful_grader() -> None:
    # answer/gold pairs a careful grader decided: real ZeroEval MATH answers (with their last sentence of
    # reasoning), MATH-500 golds in the shapes models write them, and the shapes issue 19 quotes
    agree = sum(_verdict(p["gold"], p["content"]) is p["verdict"] for p in VERDICTS)
    assert len(VERDICTS) >= 150
    assert agree / len(VERDICTS) >= 0.95


QUADS = "(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3)"


@pytest.mark.parametrize(
    ("content", "right"),
    [
        ("All solutions: \\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3)}", True),
        ("All solutions: \\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3), \\ldots}", True),
        ("All solutions: \\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3), \\dots}", True),
        ("All solutions: \\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3), …}", True),
        ("All solutions: $\\boxed{(3, 3, 2, 3), (3, 17, 3, 7), (3, 37, 3, 13)}$.", True),  # a set: any order
        ('{"answer": "(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3)"}', True),
        ("All solutions: \\boxed{(3, 37, 3, 13), (3, 17, 3, 7), \\ldots}", False),  # the ellipsis stands for nothing
        ("All solutions: \\boxed{(3, 37, 3, 13), (3, 17, 3, 7)}", False),
    ],
)
def test_a_multi_part_boxed_answer_is_compared_whole(content: str, right: bool) -> None:
    assert _verdict(QUADS, content) is right


@pytest.mark.parametrize(
    ("gold", "content", "right"),
    [
        ("(5,8),(8,5)", "\\boxed{(5, 8) \\quad (8, 5)}", True),
        ("(5,8),(8,5)", "\\boxed{(5, 8) \\text{ and } (8, 5)}", True),
        ("(5,8),(8,5)", "\\boxed{(8, 5) or (5, 8)}", True),
        ("(0,9) \\cup (9,36)", "So $x \\in \\boxed{(0,9) \\cup (9,36)}$.", True),
        ("(0,9) \\cup (9,36)", "So $x \\in \\boxed{(0, 36)}$.", False),
    ],
)
def test_separators_and_a_closing_pair_stay_in_the_answer(gold: str, content: str, right: bool) -> None:
    assert _verdict(gold, content) is right


@pytest.mark.parametrize(
    ("gold", "content", "right"),
    [
        ("1, 2, 3", "The values are \\boxed{1} and \\boxed{2} and \\boxed{3}.", True),
        ("1, 2", "\\boxed{1}, \\boxed{2}", True),
        ("2", "\\boxed{1}, \\boxed{2}", False),  # the union is the answer, not its last box
        ("1, 2, 3", "$n = \\boxed{1}$ or $n = \\boxed{2}$ or $n = \\boxed{3}$.", True),
        ("1, 2, 3", "$\\boxed{1} \\quad \\boxed{2} \\quad \\boxed{3}$", True),
        ("1, 2, 3", "The values are \\boxed{1} and \\boxed{2}.", False),
        # a box, then prose or a new line, then another box: the model moved on or corrected itself
        ("7", "So the sum is $\\boxed{5}$.\n\nWait, I dropped a term: the sum is $\\boxed{7}$.", True),
        ("5", "So the sum is $\\boxed{5}$.\n\nWait, I dropped a term: the sum is $\\boxed{7}$.", False),
        ("35", "The sum is $\\boxed{12}$ and the product is $\\boxed{35}$.", True),
    ],
)
def test_boxes_joined_on_one_line_are_one_answer(gold: str, content: str, right: bool) -> None:
    assert _verdict(gold, content) is right


@pytest.mark.parametrize(
    ("gold", "content", "right"),
    [
        ("5", "Therefore $\\boxed{x = 5}$.", True),
        ("5", "Therefore $\\boxed{x = -5}$.", False),
        ("\\frac{1}{2}", "Hence $\\boxed{k = \\frac{1}{2}}$.", True),
        ("(5,8),(8,5)", "\\boxed{(x, y) = (5, 8) \\quad \\text{and} \\quad (8, 5)}", True),
        ("(5,8),(8,5)", "\\boxed{(x,y) = (5,8) \\text{ or } (x,y) = (8,5)}", True),
        ("(5,8),(8,5)", "\\boxed{(x, y) = (5, 8)}", False),
        ("(1,-16,-4,43)", "$\\boxed{(a, b, c, d) = (1, -16, -4, 43)}$", True),
        ("y = 2x + 3", "The line is $\\boxed{y = 2x + 3}$.", True),  # an equation gold keeps its name
        ("y = 2x + 3", "The line is $\\boxed{y = 3x + 2}$.", False),
    ],
)
def test_a_named_value_is_its_value(gold: str, content: str, right: bool) -> None:
    assert _verdict(gold, content) is right


@pytest.mark.parametrize(
    ("gold", "content", "right"),
    [
        ("\\frac{2}{3}", "So the probability is 2/3.", True),
        ("\\frac{2}{3}", '{"answer": "2/3."}', True),
        ("\\frac{2}{3}", "The answer is $2/3.$", True),
        ("\\frac{2}{3}", "Therefore the answer is $\\frac{2}{3}.$", True),
        ("\\frac{2}{3}", "The final answer is $\\frac{2}{3}.$ I hope it is correct.", True),
        ("\\frac{2}{3}", "The answer is $\\frac{3}{2}.$", False),
        ("\\frac{7}{2}", "The answer is 3.5.", True),  # a decimal point is not a full stop
        ("3", "The answer is 3.5.", False),
    ],
)
def test_a_sentence_full_stop_is_punctuation(gold: str, content: str, right: bool) -> None:
    assert _verdict(gold, content) is right


@pytest.mark.parametrize(
    ("gold", "content", "right"),
    [
        ("x \\in [-2,7]", "Therefore the solution is $\\boxed{-2 \\le x \\le 7}$.", True),
        ("x \\in [-2,7]", "Therefore the solution is $\\boxed{-2 < x < 7}$.", False),
        ("(2,\\infty)", "$\\boxed{x > 2}$", True),
        ("\\$18.90", "She pays $\\boxed{\\$18.90}$.", True),  # the gold's \$ is a dollar sign, not a delimiter
    ],
)
def test_intervals_written_as_inequalities_and_dollar_golds(gold: str, content: str, right: bool) -> None:
    assert _verdict(gold, content) is right


@pytest.mark.parametrize(
    ("gold", "answer", "right"),
    [
        ("5", "The exact value involves a radical and cannot be simplified without the square root of 5.", False),
        ("12", "12 positive and 12 negative integers", False),
        ("47", "The total distance traveled by the ball when it hits the floor for the sixth time is 80 feet.", False),
        ("80", "The total distance traveled by the ball when it hits the floor for the sixth time is 80 feet.", True),
        ("72", "Finally, m + n = 16 + 56 = 72.\n\nSo, the least possible value of $m + n$ is 72.", True),
    ],
)
def test_a_sentence_states_a_value_only_after_is_or_equals(gold: str, answer: str, right: bool) -> None:
    # the gold appearing somewhere in an answer's working is not the model answering with it
    assert _verdict(gold, json.dumps({"reasoning": "...", "answer": answer})) is right
