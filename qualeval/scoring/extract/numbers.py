"""Numbers in answer text: 18, 18.0, $18, 18.00, "18 dollars" and 1,800 read alike; 3/4, 1 1/2, 2.5e3,
2.5 × 10^3 and 10^3 are the numbers they write; number words as digits; an answer that is an arithmetic
expression states its result."""

from __future__ import annotations

import ast
import operator
import re

__all__ = ["find_number", "fmt_number", "line_number", "result_number", "words_to_digits"]

_DIGITS = r"\d+(?:,\d+)*(?:\.\d+)?|\.\d+"
_SIGN = r"(?P<sign>[-−]?)\$?\s*"
# the forms a number takes, the longest first: 2.5 × 10^3, 2.5e3, 10^3, 1 1/2, 3/4, 1,000.5; a slash between
# two numbers that a third follows or precedes is a date (3/4/2020), never a fraction
_NUMBER = re.compile(
    rf"{_SIGN}(?:"
    rf"(?P<mant>{_DIGITS})\s*(?:[x×*·]|\\times|\\cdot)\s*10\s*\^\s*\{{?\s*(?P<exp10>[-−+]?\d+)\s*\}}?"
    rf"|(?<![\w.])(?P<sci>(?:{_DIGITS})[eE][-−+]?\d+)(?![\w.])"
    rf"|(?P<base>\d+)\s*\^\s*\{{?\s*(?P<power>\d+)\s*\}}?"
    rf"|(?<![\d/.,])(?P<whole>\d+)[ \t]+(?P<num>\d+)/(?P<den>\d+)(?![\d/])"
    rf"|(?<![\d/.,])(?P<top>\d+)/(?P<bottom>\d+)(?![\d/])"
    rf"|(?P<plain>{_DIGITS}))"
)
# thousands grouped in threes (1,000,000) or the Indian way (1,00,000); any other comma is ambiguous: "3,5" is
# 3.5 written with a decimal comma, or the list 3 and 5, and never 35
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?")
_EQUALS = re.compile(r"=|≈|\\approx")
_OPERATOR = r"(?:\*\*|[-+*×x÷/^]|\\times|\\cdot|\\div)"
_OPERAND = rf"\(*\s*[-−]?\$?\s*(?:{_DIGITS})\s*\)*"
_EXPRESSION = re.compile(rf"\s*{_OPERAND}(?:\s*{_OPERATOR}\s*{_OPERAND})+")
# what an expression is not: a date (3/4/2020, 2020-03-04), a range or a phone number (5-7), a zero-padded part
_NOT_ARITHMETIC = re.compile(r"\d-\d|\d\s*/\s*\d+\s*/\s*\d|(?<![\d.])0\d")
_PYTHON_OPERATORS = [("**", "**"), ("^", "**"), ("\\times", "*"), ("\\cdot", "*"), ("\\div", "/")]
_PYTHON_OPERATORS += [("×", "*"), ("x", "*"), ("÷", "/"), ("−", "-"), ("$", "")]
_MAX_POWER = 400

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


def _digits(text: str) -> float | None:
    """1,000.5 as 1000.5; None for a comma that does not group thousands."""
    if "," in text and not _GROUPED.fullmatch(text):
        return None
    return float(text.replace(",", ""))


def _power(base: float, exponent: float) -> float | None:
    if abs(exponent) > _MAX_POWER:
        return None
    try:
        return float(base**exponent)
    except (OverflowError, ZeroDivisionError):
        return None


def _value(found: re.Match[str]) -> float | None:
    """The number one match of _NUMBER writes, unsigned; None when its form is ambiguous or undefined."""
    if found["mant"] is not None:
        mantissa = _digits(found["mant"])
        scale = _power(10.0, int(found["exp10"].replace("−", "-")))
        return None if mantissa is None or scale is None else mantissa * scale
    if found["sci"] is not None:
        mantissa_text, _, exponent = found["sci"].lower().partition("e")
        mantissa = _digits(mantissa_text)
        scale = _power(10.0, int(exponent.replace("−", "-")))
        return None if mantissa is None or scale is None else mantissa * scale
    if found["base"] is not None:
        return _power(float(found["base"]), int(found["power"]))
    if found["whole"] is not None:
        num, den = int(found["num"]), int(found["den"])
        # "3 10/5" is no mixed number; 0 < num < den is what one is written as
        return int(found["whole"]) + num / den if 0 < num < den else None
    if found["top"] is not None:
        bottom = int(found["bottom"])
        return int(found["top"]) / bottom if bottom else None
    return _digits(found["plain"])


def find_number(text: str, *, last: bool = False) -> float | None:
    """The first (or last) number in text, in any of the forms of _NUMBER: None when that one is ambiguous."""
    found = list(_NUMBER.finditer(text))
    if not found:
        return None
    match = found[-1 if last else 0]
    value = _value(match)
    if value is None:
        return None
    return -value if match["sign"] else value


def _arithmetic(node: ast.AST) -> float | None:
    """The value of a parsed expression of numbers, + - * / ** and parentheses; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _arithmetic(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if not isinstance(node, ast.BinOp):
        return None
    left, right = _arithmetic(node.left), _arithmetic(node.right)
    if left is None or right is None:
        return None
    if isinstance(node.op, ast.Pow):
        return _power(left, right)
    operations = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
    operation = operations.get(type(node.op))
    if operation is None or (isinstance(node.op, ast.Div) and right == 0):
        return None
    return float(operation(left, right))


def _evaluate(expression: str) -> float | None:
    """The result of a plain arithmetic expression (`3 * 4`, `(150 * 2) + 240`, `10^3`); None for a date, a range
    or anything that is not one."""
    if _NOT_ARITHMETIC.search(expression):
        return None
    numbers = [_digits(n) for n in re.findall(r"\d+(?:,\d+)*(?:\.\d+)?|\.\d+", expression)]
    if any(n is None for n in numbers):
        return None
    text = re.sub(r"(?<=\d),(?=\d)", "", expression)
    for written, python in _PYTHON_OPERATORS:
        text = text.replace(written, python)
    try:
        return _arithmetic(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError):
        return None


def line_number(line: str) -> float | None:
    """The number a last line states: the value of a line that is wholly an expression (`3 * 4`), else its last
    number."""
    whole = _EXPRESSION.fullmatch(line.strip())
    value = _evaluate(whole.group()) if whole else None
    return value if value is not None else find_number(line, last=True)


def result_number(span: str) -> float | None:
    """The number an answer span states: for a worked expression (`30 - 20 = 10`), its result after the last
    `=`; for an expression with no result (`(150 * 2) + 240`, `3 * 4`), its value, and nothing when that is not
    plain arithmetic or it runs on into more (`3 * 4 + x`): its first number is not the answer."""
    parts = _EQUALS.split(span)
    if len(parts) > 1:
        result = find_number(parts[-1])
        if result is not None:
            return result
    if found := _EXPRESSION.match(span):
        runs_on = re.match(rf"\s*{_OPERATOR}", span[found.end() :])
        return None if runs_on else _evaluate(found.group())
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
