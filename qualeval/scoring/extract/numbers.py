"""Numbers in answer text: 18, 18.0, $18, 18.00, "18 dollars" and 1,800 read alike; number words as digits."""

from __future__ import annotations

import re

__all__ = ["find_number", "fmt_number", "result_number", "words_to_digits"]

_NUMBER = re.compile(r"[-−]?\$?\s*\d[\d,]*(?:\.\d+)?|[-−]?\$?\s*\.\d+")
_EQUALS = re.compile(r"=|≈|\\approx")
_OPERAND = r"\(*\s*[-−]?\$?\s*\d[\d,]*(?:\.\d+)?\s*\)*"
_EXPRESSION = re.compile(rf"\s*{_OPERAND}\s*(?:[-+*×x÷]|\*\*)\s*{_OPERAND}")

_UNITS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
)
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_WORDS = {word: value for value, word in enumerate(_UNITS)} | _TENS
_WORD_NUMBER = re.compile(
    r"\b(" + "|".join(sorted(_TENS, key=len, reverse=True)) + r")[- ](" + "|".join(_UNITS[1:10]) + r")\b"
    r"|\b(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


def find_number(text: str, *, last: bool = False) -> float | None:
    """The first (or last) number in text."""
    found = _NUMBER.findall(text)
    if not found:
        return None
    token = found[-1 if last else 0].replace("$", "").replace(",", "").replace(" ", "").replace("−", "-")
    try:
        return float(token)
    except ValueError:
        return None


def result_number(span: str) -> float | None:
    """The number an answer span states: for a worked expression (`30 - 20 = 10`), its result after the last
    `=`. An expression with no result (`(150 * 2) + 240`) states no number: its first one is not the answer."""
    parts = _EQUALS.split(span)
    if len(parts) > 1:
        result = find_number(parts[-1])
        if result is not None:
            return result
    if _EXPRESSION.match(span):
        return None
    return find_number(span)


def fmt_number(number: float) -> str:
    return str(int(number)) if number.is_integer() else repr(number)


def _word_value(match: re.Match[str]) -> str:
    if match.group(1):
        return str(_TENS[match.group(1).lower()] + _UNITS.index(match.group(2).lower()))
    return str(_WORDS[match.group(3).lower()])


def words_to_digits(text: str) -> str:
    """`six geese` -> `6 geese`; `twenty-one` -> `21`. Only whole words below one hundred."""
    return _WORD_NUMBER.sub(_word_value, text)
