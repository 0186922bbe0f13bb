"""Numbers in answer text: 18, 18.0, $18, 18.00, "18 dollars" and 1,800 read alike; 1 800 (a space, no-break or
thin space between groups of three), 1{,}800, 1\\,800, 1_800, 1.8 thousand and 1.8k are 1800; 1.234,5 is 1234.5;
3/4, ¾, \\frac{3}{4}, 1 1/2, 1\\frac{1}{2}, 2.5e3, 2.5 × 10^3, 10^3 and 0x10 are the numbers they write. A form
is read whole or not at all (2:30, 1.2.3 and 2 hundred and 50 are none), and exactly: a Number is a float that
carries its exact value. A number the text takes back ("7, not 12") is none it states; number words as digits; an
answer that is an arithmetic expression states its result."""

from __future__ import annotations

import ast
import math
import operator
import re
from fractions import Fraction

__all__ = [
    "Number",
    "find_number",
    "fmt_number",
    "line_number",
    "result_number",
    "taken_back_dropped",
    "vulgar_slashed",
    "words_to_digits",
]

_SPACE = "[ \u00a0\u202f\u2009]"
# thousands grouped by spaces, as some locales and models write them ("$9 500", "1 000 000"): only groups of exactly
# three after a first group that starts with no 0, so a list ("1 2 3", "3 4", "0 135") stays a list; "2 135-degree"
# names a kind of thing, not 2135
_SPACED = rf"(?<![\d.,])[1-9]\d{{0,2}}(?:{_SPACE}\d{{3}})+(?!\d|,\d|-\w)"
# a decimal comma after thousands grouped by dots or spaces (1.234,5 and 1 234,5 are 1234.5): both separators
# say which is which. Dots alone (1.234.567) are a grouping, a version or a date: no number. 1_000 groups thousands.
_EUROPEAN = re.compile(rf"(?<![\d.,])[1-9]\d{{0,2}}(?:(?:\.\d{{3}})+|(?:{_SPACE}\d{{3}})+),\d+(?![\d,]|\.\d)")
_DOTTED = r"(?<![\d.])\d+(?:\.\d+){2,}"
_UNDERSCORED = r"(?<![\w.])[1-9]\d{0,2}(?:_\d{3})+(?![\w.])"
_DIGITS = rf"{_EUROPEAN.pattern}|{_DOTTED}|{_UNDERSCORED}|{_SPACED}(?:\.\d+)?|\d+(?:,\d+)*(?:\.\d+)?|\.\d+"
# a number in another base, as code writes it (0x10 is 16), and a time or a ratio (2:30, 3:2): one form, never
# its first or last digits. A time on the hour is its hour ("2:00 pm" is 2, as GSM8K's golds write it, and 2 of
# whatever unit 2:00 counts); any other (2:30: 2.5 hours, 150 minutes?) or a ratio is no one number: none
_RADIX = r"(?<![\w.])0(?:[xX][0-9a-fA-F]+|[bB][01]+|[oO][0-7]+)(?![\w.])"
_CLOCK = r"(?<![\d:])\d+(?::\d+)+"
_ON_THE_HOUR = re.compile(r"00(?::00)*")
_SPACES = re.compile(_SPACE)
_SIGN = r"(?P<sign>[-−]?)\$?\s*"
# LaTeX's fraction (`\frac{9}{2}`, `\dfrac`, `\tfrac`, `\frac92`) is the fraction 9/2: read as digits alone it was
# its numerator. After a whole number (`2\frac{1}{2}`) it is a mixed number, 2 1/2.
_LATEX_FRACTION = re.compile(
    r"(?:(?<![\d.,])(?P<whole>\d+) ?)?(?(whole)|(?<![\d}]))\\[dt]?frac"
    r"\s*(?:\{\s*(?P<num>\d+)\s*\}|(?P<num1>\d))\s*(?:\{\s*(?P<den>\d+)\s*\}|(?P<den1>\d))"
)
# unicode's fractions: 2½ is 2 1/2
_VULGAR = {"½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5", "⅖": "2/5", "⅗": "3/5"}
_VULGAR |= {"⅘": "4/5", "⅙": "1/6", "⅚": "5/6", "⅐": "1/7", "⅛": "1/8", "⅜": "3/8", "⅝": "5/8", "⅞": "7/8"}
_VULGAR |= {"⅑": "1/9", "⅒": "1/10"}
_VULGAR_FRACTION = re.compile(rf"(?:(\d){_SPACE}?)?([{''.join(_VULGAR)}])")
# LaTeX's ways of grouping thousands (`1{,}234`, `1,\!234`, a thin space `1\,234`) are a comma, which groups them
# or is refused as any comma is (`3{,}14` is a decimal comma or a list); a thin space before a unit joins nothing
_LATEX_SEPARATOR = re.compile(r"(?<=\d)(?:\{,\}|,\\!|\\,)(?=\d)")
# the forms a number takes, the longest first: 2.5 × 10^3, 2.5e3, 10^3, 1 1/2, 3/4, 1,000.5; a slash between
# two numbers that a third follows or precedes is a date (3/4/2020), never a fraction
# a scale scales: a word after the number (3 hundred, 2 dozen, "a dozen", 1.5 million) or a letter written against
# it and followed by no other (3k, 1.2bn; K, M and B after a currency sign only: $2.5M, $3B, while 300K and 0.5M
# read nothing, a kelvin or molar as likely as a scale); "5 km", "3kg" and "10 m" are units. A scale that runs on
# ("2 hundred and 50", "a dozen and a half") is read as none rather than its first part
_SCALE_WORDS = "hundred|thousand|million|billion|trillion|dozen"
_NUMBER = re.compile(
    rf"{_SIGN}(?:(?P<radix>{_RADIX})|(?P<clock>{_CLOCK})"
    rf"|(?P<mant>{_DIGITS})\s*(?:[x×*·]|\\times|\\cdot)\s*10\s*\^\s*\{{?\s*(?P<exp10>[-−+]?\d+)\s*\}}?"
    rf"|(?<![\w.])(?P<sci>(?:{_DIGITS})[eE][-−+]?\d+)(?![\w.])"
    rf"|(?P<base>\d+)\s*\^\s*\{{?\s*(?P<power>\d+)\s*\}}?"
    rf"|(?<![\d/.,])(?P<whole>\d+){_SPACE}(?P<num>\d+)/(?P<den>\d+)(?![\d/])"
    rf"|(?<![\d/.,])(?P<top>\d+)/(?P<bottom>\d+)(?![\d/])"
    rf"|(?P<plain>{_DIGITS})(?:(?P<suffix>[kKMB]|bn)(?!\w)|(?P<scale>(?:\s+(?i:{_SCALE_WORDS})s?\b)+))?"
    rf"|(?<![\w-])(?<!half )(?P<dozen>(?i:a\s+dozen))\b(?!s))"
)
_PIECE_AFTER = re.compile(r"[-−]\d")
_PIECE_BEFORE = re.compile(r"\d$")
_OPERAND_BEFORE = re.compile(r"[\w)\]}]\s*$")
_SPACED_SIGN = re.compile(r"[-−]\$?\s")
# a single letter beside an operator is a variable in an expression ("x - 10", "10 + 2x"); "a" and "I" are words
_ALGEBRA = re.compile(
    r"(?<![A-Za-z\\])(?![aI]\b)[A-Za-z](?![A-Za-z])\s*(?:[-+*/^÷×]|\\times|\\cdot)"
    r"|(?:[-+*/^÷×]|\\times|\\cdot)\s*\d*(?<![A-Za-z\\])(?![aI]\b)[A-Za-z](?![A-Za-z])"
)
_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12, "dozen": 12}
_SUFFIXES = {"k": 10**3, "K": 10**3, "M": 10**6, "B": 10**9, "bn": 10**9}
_RUNS_ON = re.compile(r"\s+(?:and\b|\d)", re.IGNORECASE)
# a number the text takes back is none it states: "7, not 12", "isn't 12", "12 rather than 7" gives 12
_TAKEN_BACK = re.compile(r"(?:(?:\bnot|n't|\bcannot)(?:\s+be)?|\binstead of|\brather than)\s*$", re.IGNORECASE)
# thousands grouped in threes (1,000,000) or the Indian way (1,00,000); any other comma is ambiguous: "3,5" is
# 3.5 written with a decimal comma, or the list 3 and 5, and never 35
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?")
_EQUALS = re.compile(r"=|≈|\\approx")
_OPERATOR = r"(?:\*\*|[-+*×x÷/^]|\\times|\\cdot|\\div)"
_OPERAND = rf"\(*\s*[-−]?\$?\s*(?:{_RADIX}|(?!{_RADIX})(?:{_DIGITS}))\s*\)*"  # 0x10 is no 0 times 10
_EXPRESSION = re.compile(rf"\s*{_OPERAND}(?:\s*{_OPERATOR}\s*{_OPERAND})+")
# what an expression is not: a date (3/4/2020, 2020-03-04), a range or a phone number (5-7), a zero-padded part,
# a number in another base
_NOT_ARITHMETIC = re.compile(rf"\d-\d|\d\s*/\s*\d+\s*/\s*\d|(?<![\d.])0\d|{_RADIX}")
_PYTHON_OPERATORS = [("**", "**"), ("^", "**"), ("\\times", "*"), ("\\cdot", "*"), ("\\div", "/")]
_PYTHON_OPERATORS += [("×", "*"), ("x", "*"), ("÷", "/"), ("−", "-"), ("$", "")]
_MAX_POWER = 400
_MAX_BITS = 4000  # a power past this is far past any float: refused before it is computed

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


class Number(float):
    """A number as the text writes it: a float to every reader, and its exact value, a Fraction, for a reader that
    compares it or writes it back past a float's precision (12345678901234567891 and ...890 are one float). orjson
    refuses a float subclass: give it float(number)."""

    __slots__ = ("exact",)
    exact: Fraction


def _number(exact: Fraction | None) -> Number | None:
    """The Number of an exact value; None for none, or one past any float (10^400)."""
    if exact is None:
        return None
    try:
        made = Number(exact)
    except OverflowError:
        return None
    made.exact = exact
    return made


def _canonical(text: str) -> str | None:
    """1,000.5, 1 000.5, 1_000.5 and 1.000,5 as 1000.5; None for a comma that does not group thousands or for
    dots alone (1.234.567)."""
    if _EUROPEAN.fullmatch(text):
        return _SPACES.sub("", text).replace(".", "").replace(",", ".")
    text = _SPACES.sub("", text).replace("_", "")
    if text.count(".") > 1 or ("," in text and not _GROUPED.fullmatch(text)):
        return None
    return text.replace(",", "")


def _digits(text: str) -> Fraction | None:
    canonical = _canonical(text)
    return None if canonical is None else Fraction(canonical)


def _power(base: Fraction, exponent: Fraction) -> Fraction | None:
    """base ** exponent, exactly for a whole exponent; None when undefined, not real or past any float."""
    if abs(exponent) > _MAX_POWER or (base == 0 and exponent < 0):
        return None
    if exponent.denominator == 1:
        if abs(exponent) * max(base.numerator.bit_length(), base.denominator.bit_length()) > _MAX_BITS:
            return None
        return base ** int(exponent)
    try:
        result = float(base) ** float(exponent)
    except (OverflowError, ZeroDivisionError):
        return None
    return Fraction(result) if isinstance(result, float) and math.isfinite(result) else None


def _value(found: re.Match[str]) -> Fraction | None:
    """The number one match of _NUMBER writes, unsigned; None when its form is ambiguous or undefined."""
    if found["radix"] is not None:
        return Fraction(int(found["radix"], 0))
    if found["clock"] is not None:
        hour, _, minutes = found["clock"].partition(":")
        return Fraction(int(hour)) if _ON_THE_HOUR.fullmatch(minutes) else None
    if found["mant"] is not None or found["sci"] is not None:
        mantissa_text, exponent = (
            (found["mant"], found["exp10"]) if found["mant"] is not None else found["sci"].lower().split("e")
        )
        mantissa = _digits(mantissa_text)
        scale = _power(Fraction(10), Fraction(int(exponent.replace("−", "-"))))
        return None if mantissa is None or scale is None else mantissa * scale
    if found["base"] is not None:
        return _power(Fraction(int(found["base"])), Fraction(int(found["power"])))
    if found["whole"] is not None:
        num, den = int(found["num"]), int(found["den"])
        # "3 10/5" is no mixed number; 0 < num < den is what one is written as
        return int(found["whole"]) + Fraction(num, den) if 0 < num < den else None
    if found["top"] is not None:
        bottom = int(found["bottom"])
        return Fraction(int(found["top"]), bottom) if bottom else None
    scaled = found["dozen"] or found["scale"]
    if scaled and _RUNS_ON.match(found.string, found.end()):
        return None
    plain = Fraction(1) if found["dozen"] else _digits(found["plain"])
    if plain is None or not (scaled or found["suffix"]):
        return plain
    if found["suffix"]:
        # a capital alone is a unit as often as a scale (300K kelvin, 0.5M molar, 2B a grade): it scales money only
        money = "$" in found.group(0) or found.string[: found.start()].rstrip().endswith(("$", "€", "£", "¥"))
        if found["suffix"] in "KMB" and not money:
            return None
        return plain * _SUFFIXES[found["suffix"]]
    for word in scaled.lower().split()[-1 if found["dozen"] else 0 :]:
        plain *= _SCALES[word.removesuffix("s")]
    return plain


def _fraction(found: re.Match[str]) -> str:
    fraction = f"{found['num'] or found['num1']}/{found['den'] or found['den1']}"
    return f"{found['whole']} {fraction}" if found["whole"] else fraction


def _plain(text: str) -> str:
    """LaTeX's and unicode's forms of a number as plain text writes them: `1{,}234` as 1,234, `\frac{9}{2}` as 9/2,
    `2\frac{1}{2}` and 2½ as 2 1/2."""
    return _LATEX_FRACTION.sub(_fraction, _LATEX_SEPARATOR.sub(",", vulgar_slashed(text)))


def vulgar_slashed(text: str) -> str:
    """Unicode's fractions with a slash: 2½ as 2 1/2, ½ as 1/2."""
    return _VULGAR_FRACTION.sub(lambda v: f"{v[1]} {_VULGAR[v[2]]}" if v[1] else _VULGAR[v[2]], text)


def find_number(text: str, *, last: bool = False) -> Number | None:
    """The first (or last) number in text, in any of the forms of _NUMBER, that the text does not take back
    ("not 12"): None when that one is ambiguous."""
    text = _plain(text)
    found = [m for m in _NUMBER.finditer(text) if not _TAKEN_BACK.search(text, 0, m.start())]
    if not found:
        return None
    return _signed(text, found[-1 if last else 0])


def _signed(text: str, match: re.Match[str]) -> Number | None:
    """The value of one match with its sign, where the dash is a sign: not a hyphen joining it to a word ("item-3"
    is 3), nor a minus between two operands ("8 - 3" ends in 3). A number a hyphen joins to another number is a
    piece of a range or a date ("5-7 days", "2020-03-04"): neither end is a number the text states."""
    value = _value(match)
    before = text[: match.start()]
    if value is None or _PIECE_AFTER.match(text, match.end()) or (match["sign"] and _PIECE_BEFORE.search(before)):
        return None
    if not match["sign"] or before[-1:].isalpha():
        return _number(value)
    binary = _OPERAND_BEFORE.search(before) and _SPACED_SIGN.match(match.group())
    return _number(value if binary else -value)


def taken_back_dropped(text: str) -> str:
    """The text without the numbers it takes back ("It is 7, not 12" as "It is 7, not"), for a reader such as
    math-verify that would otherwise take the last number written."""
    return _NUMBER.sub(lambda m: "" if _TAKEN_BACK.search(text, 0, m.start()) else m.group(), text)


def _arithmetic(node: ast.AST, source: str) -> Fraction | None:
    """The exact value of a parsed expression of numbers, + - * / ** and parentheses (a decimal is the one
    written: 0.1 + 0.2 is 0.3); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return Fraction(ast.get_source_segment(source, node) or repr(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _arithmetic(node.operand, source)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if not isinstance(node, ast.BinOp):
        return None
    left, right = _arithmetic(node.left, source), _arithmetic(node.right, source)
    if left is None or right is None:
        return None
    if isinstance(node.op, ast.Pow):
        return _power(left, right)
    operations = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
    operation = operations.get(type(node.op))
    if operation is None or (isinstance(node.op, ast.Div) and right == 0):
        return None
    return Fraction(operation(left, right))


def _evaluate(expression: str) -> Number | None:
    """The result of a plain arithmetic expression (`3 * 4`, `(150 * 2) + 240`, `10^3`); None for a date, a range
    or anything that is not one."""
    numbers = [_canonical(n.group()) for n in re.finditer(_DIGITS, expression)]
    # each number as Python writes it: "1 000" is 1000, not "0" padded, and 1.234,5 is 1234.5
    text = re.sub(_DIGITS, lambda n: _canonical(n.group()) or "", expression)
    if any(n is None for n in numbers) or _NOT_ARITHMETIC.search(text):
        return None
    for written, python in _PYTHON_OPERATORS:
        text = text.replace(written, python)
    text = text.strip()
    try:
        return _number(_arithmetic(ast.parse(text, mode="eval").body, text))
    except (SyntaxError, ValueError):
        return None


def line_number(line: str) -> Number | None:
    """The number a last line states: the value of a line that is wholly an expression (`3 * 4`), else its last
    number."""
    line = _plain(line)
    whole = _EXPRESSION.fullmatch(line.strip())
    value = _evaluate(whole.group()) if whole else None
    return value if value is not None else find_number(line, last=True)


def result_number(span: str) -> Number | None:
    """The number an answer span states: for a worked expression (`30 - 20 = 10`), its result after the last
    `=`; for an expression with no result (`(150 * 2) + 240`, `3 * 4`), its value, and nothing when that is not
    plain arithmetic or it runs on into more (`3 * 4 + x`): its first number is not the answer. An expression in
    a variable (`x - 10`, `S - 16/3`) states no number at all."""
    span = _plain(span)
    parts = _EQUALS.split(span)
    if _ALGEBRA.search(parts[-1]):
        return None
    if len(parts) > 1:
        result = find_number(parts[-1])
        if result is not None:
            return result
    if found := _EXPRESSION.match(span):
        runs_on = re.match(rf"\s*{_OPERATOR}", span[found.end() :])
        return None if runs_on else _evaluate(found.group())
    return find_number(span)


def fmt_number(number: float) -> str:
    """The number as digits: exactly, for a Number a float would round (12345678901234567891, 0.1 + 0.2 as 0.3);
    a fraction no decimal ends (1/3) as its float."""
    exact = number.exact if isinstance(number, Number) else Fraction(number)
    if exact.denominator == 1:
        return str(exact.numerator)
    if Fraction(repr(float(exact))) == exact:
        return repr(float(exact))
    rest, places = exact.denominator, 0
    while rest % 2 == 0 or rest % 5 == 0:  # 1 / (2^a 5^b) ends within a + b places
        rest //= 2 if rest % 2 == 0 else 5
        places += 1
    if rest != 1:
        return repr(float(exact))
    whole, fraction = divmod(abs(exact.numerator) * 10**places // exact.denominator, 10**places)
    sign = "-" if exact < 0 else ""
    return f"{sign}{whole}.{str(fraction).rjust(places, '0').rstrip('0')}"


def _word_value(match: re.Match[str]) -> str:
    if match.group(1):
        return str(_TENS[match.group(1).lower()] + _UNITS.index(match.group(2).lower()))
    return str(_WORDS[match.group(3).lower()])


def words_to_digits(text: str) -> str:
    """`six geese` -> `6 geese`; `twenty-one` -> `21`. Only whole words below one hundred."""
    return _WORD_NUMBER.sub(_word_value, text)
