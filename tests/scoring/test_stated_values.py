"""A marker takes a value only where it states one; a letter is read where the model chose it."""

from __future__ import annotations

import pytest

from qualeval.records import AnswerSpec
from qualeval.scoring.extract import extract

NUMBER = AnswerSpec(type="number")
TEXT = AnswerSpec(type="text")
CHOICE = AnswerSpec(type="choice", labels="letters")
PLANETS = ("Venus", "Mercury", "Mars", "Earth")


@pytest.mark.parametrize(
    ("content", "spec"),
    [
        ("I worked it out: 12 + 5 = 17.\nAnswer: <answer>", NUMBER),
        ("The capital is big. The answer is [answer]", TEXT),
        ("Answer: <answer>", TEXT),
        ("Paris has 5 museums.\nAnswer: {answer}", NUMBER),
        ('So we are done.\n"answer": "___"', TEXT),
        ("Mercury is closest.\nAnswer: <letter>", CHOICE),
    ],
)
def test_a_placeholder_is_no_answer(content: str, spec: AnswerSpec) -> None:
    """The prompt's own template written back (`Answer: <answer>`) states no value: not "<answer>", not 5."""
    got = extract(content, spec, PLANETS if spec.type == "choice" else ())
    assert (got.value, got.rung) == (None, "none")


@pytest.mark.parametrize("content", ["Let me think.\nAnswer:", "Answer:", "Let me think. The answer is"])
def test_a_marker_with_nothing_after_it_is_no_answer(content: str) -> None:
    assert extract(content, TEXT).value is None


def test_a_placeholder_does_not_hide_a_stated_answer() -> None:
    assert extract("Answer: <answer>\n\nThe answer is 17.", NUMBER).value == "17"


@pytest.mark.parametrize(
    ("content", "spec"),
    [
        ("I think this answer is not correct because 5 is too big.", NUMBER),
        ("The answer is correct since 5 + 3 = 8, giving 9 in all.", NUMBER),
        ("That answer is wrong because Paris is in France.", TEXT),
    ],
)
def test_a_marker_that_judges_an_answer_states_no_value(content: str, spec: AnswerSpec) -> None:
    got = extract(content, spec)
    assert got.value is None


def test_a_judgement_yields_to_a_later_statement() -> None:
    content = "This answer is not correct because 5 is too big.\nThe total is 7."
    assert extract(content, NUMBER).value == "7"


@pytest.mark.parametrize(
    ("content", "spec", "want"),
    [
        ("The answer is:\n```\n17\n```", NUMBER, "17"),
        ("Answer:\n```\nB\n```\nThat is all.", CHOICE, "B"),
        ('The answer is:\n```json\n{"city": "Paris", "country": "France"}\n```', TEXT, None),
    ],
)
def test_a_marker_before_a_fenced_block_states_the_block(content: str, spec: AnswerSpec, want: str | None) -> None:
    """ "The answer is:" then a block: the block's text is the value, never the fence's `json` tag."""
    got = extract(content, spec, PLANETS if spec.type == "choice" else ())
    assert got.value == want


@pytest.mark.parametrize(
    ("content", "spec"),
    [
        ('{"reasoning": "We have 12 apples and eat 5 so 7 remain, then', NUMBER),
        ('```json\n{\n    "reasoning": "So the answer is 7, and then we', NUMBER),
        ('{"reasoning": "Option (B) is wrong and (C) is', CHOICE),
        ('{"reasoning": "Venus is hot, so the answer is (A), but', CHOICE),
    ],
)
def test_a_json_object_cut_off_in_its_working_states_no_answer(content: str, spec: AnswerSpec) -> None:
    """A reply cut off inside its `reasoning` string never reached its answer field: its numbers are working."""
    got = extract(content, spec, PLANETS if spec.type == "choice" else ())
    assert (got.value, got.rung) == (None, "none")


def test_an_answer_before_a_cut_off_object_is_read() -> None:
    content = 'She has $15 left.\n\n```json\n{\n    "reasoning": "Annika had $50 and spent $35, so $50 - $3'
    assert extract(content, NUMBER).value == "15"


@pytest.mark.parametrize(
    "content",
    [
        # the string never closed, but the object and its fence did: the model finished, and said its answer
        '```json\n{\n    "reasoning": "So a + b = 0.\n\nThe final answer is $\\boxed{0}$.\n```\n\nThe answer is: 0.',
        '{\n    "reasoning": "Therefore the answer is 0.\n\n\\"answer\\": "0"\n}\n```',
    ],
)
def test_a_broken_but_finished_object_is_still_read(content: str) -> None:
    assert extract(content, NUMBER).value == "0"


@pytest.mark.parametrize(
    "content",
    ["(A) is wrong, (B) is wrong, (D) is wrong. So C.", "Working.\n(A) is wrong, (B) is wrong... Therefore, (C)."],
)
def test_a_closing_statement_wins_over_the_options_in_the_working(content: str) -> None:
    got = extract(content, CHOICE, PLANETS)
    assert (got.value, got.rung) == ("C", "last")


@pytest.mark.parametrize(
    "content",
    [
        "The planet closest to the Sun is $\\boxed{\\text{B}}$",
        "Answer: (b)",
        "Answer: b",
        "Answer: Mercury (B)",
        "The answer is **\\textbf{B}**.",
    ],
)
def test_an_option_letter_in_other_forms_after_a_marker(content: str) -> None:
    got = extract(content, CHOICE, PLANETS)
    assert (got.value, got.rung) == ("B", "anchor")


def test_a_lower_case_letter_before_words_is_no_option() -> None:
    """ "(a) H. ..." labels part (a) of a question; "a" before words is an article."""
    content = "So the final answer is:\n\n(a) H. 0.229, (b) J. 0.688"
    assert extract(content, CHOICE, tuple("ABCDEFGHIJ")).value != "A"
