"""math-verify, used as it is meant to be: LaTeX and expression extraction over delimited text, gold as LaTeX.

An answer taken out of its context (a JSON field, a `\\boxed{}` argument) has lost its delimiters; it is put
back in `$...$` before parsing, otherwise `3\\sqrt{13}` parses as `3`. Before that, the answer is read as a
grader reads it: a sentence's full stop is punctuation (`2/3.` is 2/3, not 2), a closing `\\ldots` of a list
stands for nothing, `\\quad` and `\\text{and}` separate the parts of a list, `x =` and `(x, y) =` name the value
rather than being part of it, `-2 \\le x \\le 7` is the interval [-2, 7], and prose states its box, else what
follows the last "is", "=" or ":" of its last statement that has one ("...the square root of 5." states nothing).
"""

from __future__ import annotations

import re
import threading
from typing import Any

from qualeval.scoring.extract.numbers import vulgar_slashed

__all__ = ["math_equal", "math_parse", "math_timeout"]

_DELIMITED = re.compile(r"(?<!\\)\$|\\\(|\\\[|\\boxed|\\fbox")  # `\$` is a dollar sign, not a delimiter
# unicode a model writes where LaTeX was meant; math-verify's LaTeX parser drops it (6√2 read as 6)
_UNICODE = [
    (re.compile(r"√\s*\(([^()]*)\)"), r"\\sqrt{\1}"),
    (re.compile(r"√\s*([\w.]+)"), r"\\sqrt{\1}"),
    (re.compile("π"), r"\\pi "),
    (re.compile("[×·]"), r"\\times "),
    (re.compile("−"), "-"),
    (re.compile("∞"), r"\\infty "),
]
# a thin space between groups of three digits groups thousands (`1\,000`, as MATH writes them); math-verify reads
# `1{,}000` and `1,\!000` but not this
_THIN_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:\\,\d{3})+(?![\d,])")
# a mixed number as prose writes it (2 1/2, 2½): math-verify reads no mixed number in it (2 1/2 was 3/2)
_MIXED = re.compile(r"(?<![\d.,/^_])(\d+)[ \u00a0](\d+)/(\d+)(?![\d/])")
_COMMAND = re.compile(r"\\[A-Za-z]+(?:\{[^{}]*\})?")
_WORD = re.compile(r"[A-Za-z]{2,}")
_COPULA = re.compile(r"\b(?:is|are|was|equals|gives|gets?|becomes|yields)\b|=|:")
_STATEMENT = re.compile(r"(?<=[.!?])\s+|\n+")
_HOPE = re.compile(r"\s*I hope it is correct\.?\s*$", re.IGNORECASE)  # the closing line of Minerva's answer format
_PERIOD = re.compile(r"(?<=[\w})\]])\.(?=\s*(?:\$|\\\)|\\\]|$))")  # a full stop, not a decimal point (3.5)
_ELLIPSIS = re.compile(r",\s*(?:\\[lc]?dots|\\ldotp|…|\.\.\.)\s*(?=$|\$|\\right|\\\}|[)\]}])")
_SEPARATOR = re.compile(
    r"\s*,?\s*(?:(?:\\q?quad\b|\\(?:text|mbox|mathrm)\{\s*(?:and|or|,)\s*\})\s*,?\s*)+"
    r"(?!\s*$|\s*\\(?:text|mbox|mathrm)\{)"  # a space before a unit ("5 \\quad \\text{cm}") separates nothing
)
_VARIABLE = r"(?:[A-Za-z]|\\[a-z]+)(?:_\{?\w+\}?)?"
_NAMED = re.compile(rf"(?:^|(?<=,))\s*(?:{_VARIABLE}|\(\s*{_VARIABLE}(?:\s*,\s*{_VARIABLE})*\s*\))\s*=(?![=<>])\s*")
_LESS = r"(?:<|\\lt\b|\\le(?:q|qslant)?(?![A-Za-z])|≤)"
_MORE = r"(?:>|\\gt\b|\\ge(?:q|qslant)?(?![A-Za-z])|≥)"
_CHAIN = re.compile(rf"(?P<a>[^<>=≤≥]+?)\s*(?P<l>{_LESS})\s*[A-Za-z]\s*(?P<r>{_LESS})\s*(?P<b>[^<>=≤≥]+?)")
_BOUND = re.compile(rf"[A-Za-z]\s*(?:(?P<below>{_LESS})|(?P<above>{_MORE}))\s*(?P<b>[^<>=≤≥]+?)")
_RELATION = re.compile(r"[<>≤≥]|\\[lg]eq?(?![A-Za-z])|\\[lg]t\b")


def math_timeout() -> int | None:
    """math-verify's timeouts use SIGALRM, which only the main thread may set: 5 s there, none elsewhere."""
    return 5 if threading.current_thread() is threading.main_thread() else None


def _latex(text: str) -> str:
    for pattern, replacement in _UNICODE:
        text = pattern.sub(replacement, text)
    text = _MIXED.sub(_mixed, vulgar_slashed(text))
    return _THIN_GROUPED.sub(lambda grouped: grouped.group().replace("\\,", ""), text)


def _mixed(found: re.Match[str]) -> str:
    """2 1/2 as `2\\frac{1}{2}`, which math-verify reads as 5/2; an improper "2 3/2" is no mixed number."""
    whole, num, den = found.groups()
    return f"{whole}\\frac{{{num}}}{{{den}}}" if 0 < int(num) < int(den) else found.group()


def _prose(text: str) -> bool:
    """More than two words outside LaTeX commands: a sentence, not an expression to put inside `$...$`."""
    return len(_WORD.findall(_COMMAND.sub(" ", text))) > 2


def math_parse(text: str) -> list[Any]:
    """What math-verify reads in text: a delimited span as it stands, a bare expression inside `$...$` first."""
    import math_verify

    timeout = math_timeout()
    text = _latex(text)
    if not _DELIMITED.search(text) and not _prose(text):
        found = math_verify.parse(f"${text}$", parsing_timeout=timeout)
        if found:
            return found
    return math_verify.parse(text, parsing_timeout=timeout)


def _stated(text: str) -> str:
    """What a sentence states: its box, else what follows the last "is", "=" or ":" of its last statement that has
    one; else nothing, because a number in passing ("the square root of 5") is not an answer."""
    if "\\boxed" in text or "\\fbox" in text:
        return text  # math-verify reads a box before anything else
    for statement in reversed(_STATEMENT.split(text)):
        stated = _COPULA.split(statement)[-1]
        if stated != statement and stated.strip():
            return stated
    return ""


def _interval(text: str) -> str:
    """`-2 \\le x \\le 7` as the interval `[-2, 7]`, `x > 2` as `(2, \\infty)`."""
    if found := _CHAIN.fullmatch(text.strip()):
        left = "(" if found["l"] in ("<", "\\lt") else "["
        right = ")" if found["r"] in ("<", "\\lt") else "]"
        return f"{left}{found['a'].strip()}, {found['b'].strip()}{right}"
    if found := _BOUND.fullmatch(text.strip()):
        strict = (found["below"] or found["above"]) in ("<", ">", "\\lt", "\\gt")
        bound = found["b"].strip()
        if found["below"]:
            return f"(-\\infty, {bound}{')' if strict else ']'}"
        return f"{'(' if strict else '['}{bound}, \\infty)"
    return text


def _as_graded(answer: str, gold: str) -> str:
    """The answer as a grader reads it against this gold (see the module's docstring)."""
    text = _HOPE.sub("", _latex(answer))
    if _prose(text):
        text = _stated(text)
    text = _PERIOD.sub("", text.strip())
    text = _ELLIPSIS.sub("", text)
    text = _SEPARATOR.sub(", ", text)
    if "=" not in gold:  # a gold that is an equation ("y = 2x + 3") is compared as one
        text = _NAMED.sub("", text)
    if not _RELATION.search(gold):
        text = _interval(text)
    return text.strip()


def math_equal(gold: str, answer: str) -> tuple[bool, str]:
    """Whether the answer is the gold by math-verify, with a word on how it went."""
    import math_verify

    text = _as_graded(answer, gold)
    want, got = math_parse(gold), (math_parse(text) if text else [])
    if not want:
        return False, f"math-verify could not parse the gold '{gold[:40]}'"
    if not got:
        return False, "math-verify parsed nothing in the answer"
    same = bool(math_verify.verify(want, got, timeout_seconds=math_timeout()))
    return same, f"math-verify: {got[-1]} vs {want[-1]}"
