"""Extraction and scoring on responses shaped like real reasoning models' (cases in data/)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qualeval.figures.accuracy import summarize, wilson
from qualeval.records import AnswerSpec, Outcome, ScorerSpec
from qualeval.scoring.extract import extract, naive_extract
from qualeval.scoring.rules import score
from qualeval.tasks.sample import Sample
from tests.conftest import DATA

CASES = json.loads((DATA / "extraction_cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_extraction_case(case: dict[str, Any]) -> None:
    spec = AnswerSpec(type=case["type"], labels=case.get("labels", "letters"))
    got = extract(case["content"], spec, tuple(case.get("choices", ())))
    assert (got.value, got.rung) == (case["want"], case["rung"])


def test_the_trace_is_what_fools_a_naive_extractor() -> None:
    spec = AnswerSpec(type="number")
    reasoning = "16 - 3 = 13 eggs; 13 - 4 = 9; 9 x 2 = 18 dollars. Double-check with 21 eggs? No."
    assert naive_extract(reasoning, "", spec) == "21"
    assert extract("", spec).value is None  # nothing is taken from the reasoning
    assert naive_extract(reasoning, "#### 18", spec) == "18"


def _sample(gold: str, **kw: Any) -> Sample:
    return Sample(id="t/0", task="t", messages=(), gold=gold, **kw)


@pytest.mark.parametrize(
    ("value", "gold", "correct"),
    [
        ("18", "18", True),
        ("18.0", "18", True),
        ("$18", "18", True),
        ("18.00", "18", True),
        ("18 dollars", "18", True),
        ("1,800", "1800", True),
        ("1800", "1,800", True),
        ("17.9999999", "18", True),
        ("19", "18", False),
        ("-5", "5", False),
        ("2880001", "2880000", False),  # GSM8K item 796: a relative tolerance would have accepted this
    ],
)
def test_numeric_equivalence(value: str, gold: str, correct: bool) -> None:
    assert score(value, _sample(gold), ScorerSpec(kind="numeric"), AnswerSpec(type="number")).correct is correct


@pytest.mark.parametrize(
    ("value", "correct"),
    [
        ("Paris", True),
        ("paris.", True),
        ("The City of Light", True),
        ("  PARIS  ", True),
        ("Lyon", False),
    ],
)
def test_alias_match_normalises(value: str, correct: bool) -> None:
    sample = _sample("Paris", aliases=("City of Light",))
    assert score(value, sample, ScorerSpec(kind="alias_match"), AnswerSpec()).correct is correct


def test_alias_match_numbers_and_accents() -> None:
    spec = ScorerSpec(kind="alias_match", tolerance=1e-3)
    assert score("300,000", _sample("300000"), spec, AnswerSpec()).correct
    assert score("Brasilia", _sample("Brasília"), spec, AnswerSpec()).correct
    assert not score("1945 and 1946", _sample("1945"), spec, AnswerSpec()).correct


def test_math_and_regex_scorers() -> None:
    assert score("\\frac{1}{2}", _sample("0.5"), ScorerSpec(kind="math"), AnswerSpec()).correct
    assert not score("\\frac{1}{3}", _sample("0.5"), ScorerSpec(kind="math"), AnswerSpec()).correct
    regex = ScorerSpec(kind="regex", pattern=r"(?i)\s*{gold}\s*")
    assert score(" A+B ", _sample("a+b"), regex, AnswerSpec()).correct


def test_wilson_interval_matches_hand_computed_values() -> None:
    # 8 of 10: centre (0.8 + 1.9208/10) / 1.38415, half-width from the closed form
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(0, 20)
    assert low == 0.0 and round(high, 4) == 0.1611


def test_summary_counts_statuses_rungs_and_breakdowns() -> None:
    rows = [
        Outcome("ok", True, "anchor", {"subject": "a"}, naive_correct=False),
        Outcome("ok", False, "last", {"subject": "a"}, naive_correct=False),
        Outcome("reasoning_truncated", False, "none", {"subject": "b"}, naive_correct=True),
        Outcome("ok", True, "constraint", {"subject": "b"}, naive_correct=True, held=True),
    ]
    s = summarize("t", rows, ["subject"])
    assert (s.n, s.correct, s.accuracy) == (4, 2, 0.5)
    assert s.accuracy_answered == pytest.approx(2 / 3)
    assert s.statuses == {"ok": 3, "reasoning_truncated": 1}
    assert s.rungs == {"anchor": 1, "last": 1, "none": 1, "constraint": 1}
    assert s.naive_accuracy == 0.5 and s.constraint_held == {"held": 1}
    assert s.breakdowns["subject"]["a"].accuracy == 0.5 and s.breakdowns["subject"]["b"].accuracy == 0.5
    assert s.macro_accuracy["subject"] == 0.5


def test_relative_tolerance_is_opt_in() -> None:
    loose = ScorerSpec(kind="numeric", relative_tolerance=0.01)
    assert score("2900000", _sample("2880000"), loose, AnswerSpec(type="number")).correct
    assert not score("2900000", _sample("2880000"), ScorerSpec(kind="numeric"), AnswerSpec(type="number")).correct


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("The values are \\boxed{1} and \\boxed{2} and \\boxed{3}.", "1, 2, 3"),
        ("$x = \\boxed{1}$ or $x = \\boxed{-2}$", "1, -2"),
        ("\\boxed{1} \\quad \\boxed{2}", "1, 2"),
        ("First $\\boxed{5}$.\n\nWait, I dropped a term: $\\boxed{7}$.", "7"),  # a correction on a later line
        ("The sum is $\\boxed{12}$ and the product is $\\boxed{35}$.", "35"),  # prose between: two statements
        ("\\boxed{(x, y) = (5, 8) \\text{ or } (8, 5)}", "(x, y) = (5, 8) \\text{ or } (8, 5)"),
        ("Answer: (3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3)", "(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3)"),
        ("Answer: Paris (the capital)", "Paris"),  # a closing remark in words is still commentary
    ],
)
def test_boxes_of_one_answer_and_closing_pairs_are_read_whole(content: str, want: str) -> None:
    got = extract(content, AnswerSpec(type="text"))
    assert (got.value, got.rung) == (want, "anchor")


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        # BBH boolean_expressions (code-davinci-002): the working loops until the budget, cut mid-phrase
        (
            "not ( True ) and ( True ) is\n= not True and True = not False and False = not False and False = not False "
            "and False = not False and False = not False and",
            "boolean",
        ),
        # ZeroEval GSM8K (Llama-3.1-8B): an equation repeated until the budget
        ("Let E be Eliza's age.\n2(E + 5) = 2(E + 5) = 2(E + 5) = 2(E + 5) = 2(E + 5) = 2(E +", "number"),
    ],
)
def test_a_line_that_loops_until_the_budget_states_no_answer(content: str, kind: str) -> None:
    """A word inside a loop ("= not False and False = ...") is no answer: the last-line rung reads nothing there."""
    got = extract(content, AnswerSpec(type=kind))
    assert (got.value, got.rung) == (None, "none")


@pytest.mark.parametrize(
    ("content", "kind", "want"),
    [
        ("So the answer is False.", "boolean", "no"),
        ("1 + 1 = 2, 2 + 2 = 4, so it is 4", "number", "4"),
        ("yes yes yes", "boolean", "yes"),  # three times is emphasis, not a loop
    ],
)
def test_a_line_that_repeats_less_than_a_loop_is_read(content: str, kind: str, want: str) -> None:
    assert extract(content, AnswerSpec(type=kind)).value == want
