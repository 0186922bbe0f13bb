"""Working that states no answer gives none: a JSON object cut off in its working, a loop until the budget (over
lines too), a number the text takes back; a negated yes/no word states its opposite."""

from __future__ import annotations

import pytest

from qualeval.records import AnswerSpec
from qualeval.scoring.extract import extract

NUMBER, BOOLEAN, TEXT = AnswerSpec(type="number"), AnswerSpec(type="boolean"), AnswerSpec(type="text")
# ZeroEval's JSON format, cut off by the budget inside the reasoning (GSM8K Mixtral-8x7B, MATH Llama-3.1-8B)
CUT_OFF = '```json\n{\n    "reasoning": "Four packs of bagels cost 4 * $10.00 = $40.0'
# a loop of whole steps across lines (MATH level 5, Yi-1.5-9B): no line loops on its own
STEPS = "We know $f(4) = 2f(2)$, so:\n\\[f(-20) = -2[2f(2) + f(6)]\\]\nNow set $x = 5$ and $y = -1$:\n"


@pytest.mark.parametrize(("spec", "math"), [(NUMBER, False), (NUMBER, True), (TEXT, True)])
def test_a_json_object_cut_off_in_its_working_states_no_answer(spec: AnswerSpec, math: bool) -> None:
    assert extract(CUT_OFF, spec, math=math).value is None
    assert extract('{"reasoning": "so it is valid and', BOOLEAN).value is None


@pytest.mark.parametrize(
    "content",
    [
        '{"reasoning": "3 + 4 = 7", "answer": "7"}',
        '{"reasoning": "3 + 4 = 7. The answer is 7.\\"answer\\": "7"\n}\n```',  # closed, a quote gone wrong
        "3 + 4 = 7",
    ],
)
def test_a_closed_object_or_plain_working_is_still_read(content: str) -> None:
    assert extract(content, NUMBER).value == "7"


@pytest.mark.parametrize(("spec", "math"), [(NUMBER, False), (NUMBER, True), (TEXT, True), (BOOLEAN, False)])
def test_a_loop_over_lines_states_no_answer_on_the_math_and_number_rungs(spec: AnswerSpec, math: bool) -> None:
    assert extract("Let me work it out.\n" + STEPS * 5 + "We know $f(4) = ", spec, math=math).value is None


def test_a_loop_within_one_line_states_nothing_to_the_math_rung() -> None:
    content = "Let E be her age.\n2(E + 5) = 2(E + 5) = 2(E + 5) = 2(E + 5) = 2(E + 5) = 2(E +"
    assert extract(content, TEXT, math=True).value is None


def test_the_math_rung_skips_a_number_taken_back() -> None:
    assert extract("It is 7, not 12", TEXT, math=True).value == "7"


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("The argument is not valid", "no"),
        ("Answer: The argument is not valid.", "no"),
        ("It cannot be true", "no"),
        ("So the statement is not necessarily true.", "no"),
        ("The argument isn't deductively valid", "no"),
        ("It is not false", "yes"),
        ("The argument is not invalid.", "yes"),
        ("No, it is valid", "no"),  # the anchor-less last line reads its first word
        ("Not only valid but sound", "yes"),  # "only" is no word that carries the negation
        ("So the answer is No.", "no"),
        ("The answer is neither yes nor no", None),
    ],
)
def test_a_negated_yes_no_word_states_its_opposite(content: str, want: str | None) -> None:
    assert extract(content, BOOLEAN).value == want
