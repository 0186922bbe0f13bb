"""The model's last word: a correction after an answer wins, a value it disowns ("7, not 12") or asks about ("A or
B?") is no answer, and an option stated in a plain sentence ("B is the answer.", "Final: C") is read."""

from __future__ import annotations

import pytest

from qualeval.records import AnswerSpec
from qualeval.scoring.extract import extract

NUMBER, BOOLEAN, TEXT = AnswerSpec(type="number"), AnswerSpec(type="boolean"), AnswerSpec(type="text")
CHOICE = AnswerSpec(type="choice", labels="letters")
FIRST = AnswerSpec(type="number", pick="first")
OPTIONS = ("Paris", "London", "Rome", "Madrid")


@pytest.mark.parametrize("spec", [NUMBER, FIRST])
@pytest.mark.parametrize(
    "content",
    [
        "The answer is 12... no wait, 7",
        "Answer: 12? No, 7.",
        "The answer is 12. Actually, 7.",
        "The answer is 12. Correction: 7.",
        "Answer: 12, I mean 7.",
        "The answer is 12.\nNo wait, it's 7.",
    ],
)
def test_a_retraction_after_an_answer_gives_the_corrected_value(content: str, spec: AnswerSpec) -> None:
    assert extract(content, spec).value == "7"


@pytest.mark.parametrize(
    "content",
    [
        "The answer is 12. Actually, let me check: 3 * 4 = 12.",  # working, not a value
        "The answer is 12. Actually, 7 is also possible.",  # a sentence about another value
        "The answer is 12. No other value works.",
    ],
)
def test_a_remark_after_an_answer_is_no_correction(content: str) -> None:
    assert extract(content, NUMBER).value == "12"


@pytest.mark.parametrize(("content", "want"), [("Yes? No.", "no"), ("No? Yes.", "yes"), ("Is it valid? No.", "no")])
def test_a_yes_or_no_asked_then_answered_gives_the_answer(content: str, want: str) -> None:
    assert extract(content, BOOLEAN).value == want


@pytest.mark.parametrize(
    "content",
    [
        "It is 7, not 12",
        "7, not 12",
        "7 rather than 12",
        "7 instead of 12",
        "The answer is 7, not 12.",
        "x = 7, not 12",
    ],
)
def test_a_value_the_text_disowns_is_not_the_math_answer(content: str) -> None:
    assert extract(content, TEXT, math=True).value in ("7", "x = 7")


@pytest.mark.parametrize(
    "content",
    ["(A) is wrong, so B", "Answer: (A) is wrong, so B", "Answer: (A) can't be right, so B.", "A or B? It's B."],
)
def test_an_option_rejected_or_asked_about_is_not_the_answer(content: str) -> None:
    assert extract(content, CHOICE, OPTIONS).value == "B"


def test_options_asked_about_state_no_answer() -> None:
    assert extract("Answer: A or B?", CHOICE, OPTIONS).value is None


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("B is the answer.", "B"),
        ("So, (B) is the correct answer.", "B"),
        ("Answer = C", "C"),
        ("Final: C", "C"),
        ("I'll answer B.", "B"),
        ("So the answer is therefore B.", "B"),
        ("The answer is not A. It's B.", "B"),
        ("The answer is not A, it's B.", "B"),
    ],
)
def test_an_option_stated_in_a_plain_sentence_is_read(content: str, want: str) -> None:
    assert extract(content, CHOICE, OPTIONS).value == want


def test_a_plain_sentence_yields_to_a_marker_after_it() -> None:
    """MMLU-Pro is read first-marker-first, as its parser reads "the answer is (X)": a sentence naming an option
    earlier in the working does not stand before the closing statement."""
    spec = AnswerSpec(type="choice", labels="letters", pick="first")
    assert extract("(A) is the correct answer for part one.\nThe answer is (C).", spec, OPTIONS).value == "C"
    assert extract("So, (A) is the correct answer.\n\nThe answer is (C).", spec, OPTIONS).value == "C"


@pytest.mark.parametrize(
    "content",
    ["Here is the answer.\n7", "The value of A is the answer to the problem.\n7", "This is the answer, in JSON:\n7"],
)
def test_a_sentence_that_only_points_at_the_answer_names_none(content: str) -> None:
    assert extract(content, TEXT).value == "7"


def test_a_denial_is_corrected_by_a_value_not_by_another_denial() -> None:
    """MMLU-Pro, Llama-3.1-8B: a walk through the options, each "so the answer is not (X)", then the answer; read
    first-marker-first, no denial stands for the answer."""
    spec = AnswerSpec(type="choice", labels="letters", pick="first")
    content = "It is 4, so the answer is not (B). It is 12, so the answer is not (A), (B) or (D). The answer is (C)."
    assert extract(content, spec, OPTIONS).value == "C"


def test_a_judgement_after_the_answer_corrects_nothing() -> None:
    """MATH, Phi-3.5-mini: a remark after the box ("this answer is not a specific value ...") and a brace closing
    its JSON on the next line."""
    content = "Therefore:\n\n$$\\boxed{\\ln(2) + 1}\n\nNote that this answer is not a specific numerical value.\n}"
    assert extract(content, TEXT, math=True).value == "\\ln(2) + 1"


def test_an_option_written_off_with_no_other_named_is_still_read_as_the_authors_parser_reads_it() -> None:
    """MMLU-Pro's parser takes "the answer is (A)" in "The answer is (A) is false."; with no option turned to, the
    reading stays, so the letter agrees with the corpus' reference."""
    assert extract("The answer is (A) is false.", CHOICE, OPTIONS).value == "A"


@pytest.mark.parametrize(
    "opening", ["Before I answer, note the 5 cases.", "I'll answer in 3 steps.", "I will answer the 2 parts below."]
)
def test_saying_one_will_answer_is_no_answer(opening: str) -> None:
    assert extract(f"{opening}\nThe answer is 7.", FIRST).value == "7"


@pytest.mark.parametrize(
    "content",
    [
        "The answer is Paris. Sorry for the confusion.",
        "The answer is Paris.\nWait a moment.",
        "The answer is Paris. Actually, quite simple.",
        "Answer: Paris? Yes.",
        "The answer is Paris. Wait, no.",
    ],
)
def test_a_text_answer_is_not_replaced_by_a_remark_or_a_yes(content: str) -> None:
    assert extract(content, TEXT).value == "Paris"


@pytest.mark.parametrize(
    ("content", "want"), [("Answer: 12?", "12"), ("Answer: 3/4?", "0.75"), ("Answer: 12? Yes.", "12")]
)
def test_a_single_value_asked_is_still_the_answer(content: str, want: str) -> None:
    assert extract(content, NUMBER).value == want
