"""Numbers in the forms people write them: fractions, mixed numbers, scientific notation, powers and an anchored
arithmetic expression read as the number they write; a comma that groups no thousands is refused, never read as
the digits around it, and a date is not a fraction."""

from __future__ import annotations

import pytest

from qualeval.records import AnswerSpec, ScorerSpec
from qualeval.scoring.extract.ladder import extract
from qualeval.scoring.extract.maths import math_equal
from qualeval.scoring.extract.numbers import find_number, result_number
from qualeval.scoring.rules import score
from qualeval.tasks.sample import Sample

NUMBER = AnswerSpec(type="number")


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("Answer: 3/4", "0.75"),
        ("1/2", "0.5"),
        ("1 1/2", "1.5"),
        ("The answer is -2 3/4 cups.", "-2.75"),
        ("2.5e3", "2500"),
        ("#### 2.5e3", "2500"),
        ("So the distance is 1e6", "1000000"),
        ("Answer: 2.5 × 10^3", "2500"),
        ("Answer: 3 * 4", "12"),
        ("3 * 4", "12"),
        ("Answer: 10^3", "1000"),
        ("10^3", "1000"),
        ("The answer is 2^{10}.", "1024"),
        ("Answer: (150 * 2) + 240 songs", "540"),
        ("Answer: 30 - 20 = 10", "10"),
        ("The answer is 1,000", "1000"),
        ("Answer: $1,200.50", "1200.5"),
        ("The answer is 1,00,000", "100000"),
        ("On 3/4/2020 she had 5 apples", "5"),
        ("#### 18", "18"),
    ],
)
def test_a_number_reads_as_the_number_it_writes(content: str, want: str) -> None:
    assert extract(content, NUMBER).value == want


@pytest.mark.parametrize("content", ["3,5", "Answer: 3,5", "The answer is 12,3456"])
def test_a_comma_that_groups_no_thousands_is_refused(content: str) -> None:
    assert extract(content, NUMBER).value is None


@pytest.mark.parametrize(
    ("text", "want"),
    [("on 3/4/2020", 3.0), ("3 10/5", None), ("1/0", None), ("12/25/2020 was 5", 12.0), ("7/8", 0.875)],
)
def test_a_date_is_not_a_fraction_and_an_undefined_form_is_no_number(text: str, want: float | None) -> None:
    assert find_number(text) == want


@pytest.mark.parametrize("span", ["Answer: 2020-03-04", "Answer: 5-7 hours", "Answer: 12/25/2020"])
def test_a_date_or_a_range_after_an_anchor_is_not_arithmetic(span: str) -> None:
    assert result_number(span.removeprefix("Answer: ")) is None


@pytest.mark.parametrize("content", ["Answer: 2020-03-04", "Answer: 5-7", "Answer: 3 * 4 + x", "Work.\nAnswer: 3,5"])
def test_a_line_whose_marker_holds_no_number_gives_none_not_a_piece_of_it(content: str) -> None:
    """The marker says the model answered; what it wrote there is no number, so no digit of it is the answer
    (before: -4, -7, 4 from the last-line rung)."""
    got = extract(content, AnswerSpec(type="number"))
    assert (got.value, got.rung) == (None, "anchor")


def test_a_number_on_a_line_after_a_refused_marker_is_still_read() -> None:
    got = extract("Answer: about twelve\n12", AnswerSpec(type="number"))
    assert (got.value, got.rung) == ("12", "last")


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ('{"answer": "$9 500"}', "9500"),  # ZeroEval GSM8K, command-r item 265
        ("Answer: 1 000 000", "1000000"),
        ("Answer: 1\u202f000\u202f000", "1000000"),  # narrow no-break spaces
        ("Answer: 1\u00a0250.5", "1250.5"),  # a no-break space
        ("The answer is 1.5 million", "1500000"),
        ("Answer: 2 billion", "2000000000"),
        ("Answer: 1 000 + 2 000", "3000"),
    ],
)
def test_thousands_grouped_by_spaces_and_scale_words_read_whole(content: str, want: str) -> None:
    assert extract(content, NUMBER).value == want


@pytest.mark.parametrize(
    ("text", "want"),
    [("1 2 3", 1.0), ("3 4", 3.0), ("0 135-degree lines", 0.0), ("2 135-degree lines", 2.0), ("12 3456", 12.0)],
)
def test_a_list_is_no_grouped_number(text: str, want: float) -> None:
    """Only groups of exactly three digits after a first group with no leading 0 are one number."""
    assert find_number(text) == want


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("It is 7, not 12", "7"),
        ("not 20, it is 18", "18"),
        ("Answer: not 20, it is 18", "18"),
        ("The answer is 18 rather than 20.", "18"),
        ("The total isn't $12; it is $15", "15"),
        ("It is not 12", None),
    ],
)
def test_a_number_the_text_takes_back_is_never_the_answer(content: str, want: str | None) -> None:
    assert extract(content, NUMBER).value == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("It takes 5-7 days", None),  # the end of a range: -7 before
        ("He ran on 2020-03-04", None),  # a piece of a date: -4 before
        ("see item-3", 3.0),  # a hyphen joins a word, no minus sign
        ("The result is 8 - 3", 3.0),  # a minus between two operands: -3 before
        ("x = -5", -5.0),
        ("So -5 degrees", -5.0),
        ('"answer": "-21"', -21.0),
        ("a loss of −21", -21.0),
    ],
)
def test_a_dash_is_a_sign_only_where_it_signs_a_number(text: str, want: float | None) -> None:
    assert find_number(text, last=True) == want


@pytest.mark.parametrize(
    "content",
    ['{"answer": "S - 16/3"}', '{"answer": "x - 10"}', "Answer: 2x + 3", "Answer: y = 10 + 2x"],
)
def test_an_expression_in_a_variable_states_no_number(content: str) -> None:
    """ZeroEval GSM8K, Mixtral item 214 and command-r item 338 answer with an expression: -16/3 and -10 before."""
    assert extract(content, NUMBER).value is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (r"\boxed{\frac{9}{2}}", 4.5),  # was 9: the numerator, counted right against a gold of 9
        (r"$\boxed{-\frac{3}{4}}$", -0.75),
        (r"\boxed{\dfrac{3}{4}}", 0.75),
        (r"#### \tfrac{1}{2}", 0.5),
    ],
)
def test_a_latex_fraction_is_the_fraction_not_its_numerator(text: str, value: float) -> None:
    assert find_number(text, last=True) == value


def _scored(value: str, gold: str) -> bool:
    sample = Sample(id="t/0", task="t", messages=(), gold=gold)
    return score(value, sample, ScorerSpec(kind="numeric"), NUMBER).correct


@pytest.mark.parametrize(
    ("value", "gold", "correct"),
    [
        ("12345678901234567891", "12345678901234567890", False),  # one float: equal before
        ("12345678901234567890", "12345678901234567890", True),
        ("12345678901234567.5", "12345678901234567", False),
        ("0.000001", "0", True),  # the tolerance (1e-6) is the decimal the task writes, not its float
    ],
)
def test_numbers_past_a_floats_precision_compare_exactly(value: str, gold: str, correct: bool) -> None:
    assert _scored(value, gold) is correct


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("Answer: 12345678901234567891", "12345678901234567891"),  # 12345678901234567168 before
        ("The answer is 0.1 + 0.2", "0.3"),  # 0.30000000000000004 before
        ("Answer: 2^70", "1180591620717411303424"),
        ("Answer: 12345678901234567.5", "12345678901234567.5"),
    ],
)
def test_an_extracted_number_is_written_back_exactly(content: str, want: str) -> None:
    assert extract(content, NUMBER).value == want


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("Answer: 1{,}234", "1234"),  # 1 before: the digits before the separator
        ("Answer: 1\\,234", "1234"),
        ("Answer: 1,\\!234", "1234"),
        ("The answer is $\\boxed{1\\,000}$.", "1000"),
        ("$\\boxed{12{,}345{,}678}$", "12345678"),
        ("Answer: 3{,}14", None),  # a decimal comma or a list, as 3,14 is
        ("The mass is $5\\,\\text{kg}$", "5"),  # a thin space before a unit joins nothing
    ],
)
def test_latex_thousands_separators_group_thousands(content: str, want: str | None) -> None:
    assert extract(content, NUMBER).value == want


@pytest.mark.parametrize(
    ("gold", "answer"), [("1000", "\\boxed{1\\,000}"), ("1234567", "$1\\,234\\,567$"), ("1\\,000", "1000")]
)
def test_math_verify_reads_a_thin_space_between_thousands(gold: str, answer: str) -> None:
    assert math_equal(gold, answer)[0]


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("Answer: 1.234,5", "1234.5"),  # 1.234 before: a piece of it
        ("Answer: 1.234.567,25 €", "1234567.25"),
        ("Answer: 1 234,5", "1234.5"),  # 1 before
        ("Answer: 1.234.567", None),  # dots alone: a grouping, a version or a date (1.234 before)
        ("It was on 03.04.2020", None),
        ("Answer: 1.234", "1.234"),  # one dot is a decimal point
        ("Answer: 1\u2009234", "1234"),
        ("Answer: 1_000", "1000"),  # 1 before
        ("Answer: 1_000_000", "1000000"),
        ("Answer: 0x10", "16"),  # 0 before
        ("Answer: 0xFF", "255"),
        ("Answer: 0x10 + 5", None),  # no arithmetic in another base
        ("Answer: 2:30", None),  # 2 before
        ("It took 2:30 hours", None),  # 30 before
        ("The ratio is 3:2", None),
        ('"answer": "2:00 pm"', "2"),  # a time on the hour is its hour (GSM8K item 1001's gold is 2)
        ("Answer: 15:00:00", "15"),
        ("Answer: 1.5 + 1.234,5", "1236"),
    ],
)
def test_a_number_with_separators_is_read_whole_or_not_at_all(content: str, want: str | None) -> None:
    assert extract(content, NUMBER).value == want


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("Answer: 3k", "3000"),  # 3 before: the bare coefficient
        ("Answer: $3K", "3000"),
        ("Answer: $2.5M", "2500000"),
        ("Answer: 2.5M", None),  # a capital alone scales money only: 0.5M molar, 300K kelvin read nothing
        ("Answer: 300K", None),
        ("Answer: 2B", None),
        ("Answer: 1.2bn", "1200000000"),
        ("Answer: $3B.", "3000000000"),
        ("Answer: 3 hundred", "300"),
        ("Answer: 2 dozen", "24"),
        ("Answer: a dozen", "12"),
        ("Answer: A dozen eggs", "12"),
        ("Answer: 3 hundred thousand", "300000"),
        ("Answer: half a dozen", None),  # never 12
        ("Answer: 2 hundred and 50", None),  # never 200
        ("Answer: a dozen and a half", None),
        ("Answer: 5 km", "5"),  # a unit, not a scale
        ("Answer: 3 kg", "3"),
        ("Answer: 3kg", "3"),
        ("Answer: 2 min", "2"),
        ("Answer: 10 m", "10"),
        ("Answer: 10m", "10"),
        ("Answer: 5 K", "5"),  # a scale is written against its number
        ("Answer: 7 hundredths", "7"),
    ],
)
def test_a_scale_scales_and_a_unit_does_not(content: str, want: str | None) -> None:
    assert extract(content, NUMBER).value == want


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("Answer: 2\\frac{1}{2}", "2.5"),  # 2 before: the whole part alone
        ("The answer is $\\boxed{-2\\frac{1}{2}}$", "-2.5"),
        ("Answer: $2\\tfrac{3}{4}$ cups", "2.75"),
        ("Answer: 2\\frac12", "2.5"),
        ("Answer: \\frac34", "0.75"),
        ("Answer: 2\\frac{3}{2}", None),  # improper: 2 times 3/2, or a mistake; never 2
        ("Answer: 2\u00a01/2", "2.5"),
        ("Answer: 2½", "2.5"),
        ("Answer: 2 ¾ cups", "2.75"),
        ("Answer: ½", "0.5"),
    ],
)
def test_a_mixed_number_is_its_whole_and_its_fraction(content: str, want: str | None) -> None:
    assert extract(content, NUMBER).value == want


@pytest.mark.parametrize(
    ("gold", "answer"),
    [("\\frac{5}{2}", "2 1/2"), ("2.5", "The answer is 2 1/2."), ("\\frac{9}{4}", "\\boxed{2 1/4}"), ("2.5", "2½")],
)
def test_math_verify_reads_a_mixed_number_as_one(gold: str, answer: str) -> None:
    assert math_equal(gold, answer)[0]
