"""`alias_match` reads a number as a number ("3.66" is not 366) and refuses a name the answer itself rejects
right after naming it ("Cairo is incorrect; Alexandria")."""

from __future__ import annotations

import pytest

from tests.scoring.test_rules_alias import CANBERRA, WW2, _judged

PI = ("What is pi to two decimal places?", "3.14", ())
DAYS = ("How many days are there in a leap year?", "366", ())


@pytest.mark.parametrize(
    ("item", "answer", "right"),
    [
        (DAYS, "Answer: 3.66", False),  # normalising would drop the point: 366
        (DAYS, "3.660", False),
        (DAYS, "366.0", True),  # the same number
        (DAYS, "There are 366 days.", True),
        (WW2, "19.45", False),
        (WW2, "1,945", True),
        (WW2, "1945.00", True),
        (PI, "3.14", True),
        (PI, "3.140", True),
        (PI, "314", False),
        (PI, "It is about 3.14.", True),
    ],
)
def test_a_number_matches_as_a_number(item: tuple[str, str, tuple[str, ...]], answer: str, right: bool) -> None:
    assert _judged(*item, answer)[0] is right


@pytest.mark.parametrize(
    ("answer", "right"),
    [
        ("Answer: Canberra is incorrect; Sydney", False),
        ("Canberra is wrong, Sydney", False),
        ("Canberra is not the capital; Sydney is", False),
        ("Canberra isn't it. Sydney.", False),
        ("Canberra is not correct", False),
        ("Canberra is correct", True),
        ("Canberra is the capital of Australia.", True),
        ("Canberra is not the largest city, but it is the capital.", True),  # not the answer's point
        ("Sydney is wrong; Canberra", True),
    ],
)
def test_a_name_the_answer_rejects_after_it(answer: str, right: bool) -> None:
    assert _judged(*CANBERRA, answer)[0] is right
