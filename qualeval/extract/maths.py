"""math-verify, used as it is meant to be: LaTeX and expression extraction over delimited text, gold as LaTeX.

An answer taken out of its context (a JSON field, a `\\boxed{}` argument) has lost its delimiters; it is put
back in `$...$` before parsing, otherwise `3\\sqrt{13}` parses as `3`.
"""

from __future__ import annotations

import re
import threading
from typing import Any

__all__ = ["math_equal", "math_parse", "math_timeout"]

_DELIMITED = re.compile(r"\$|\\\(|\\\[|\\boxed|\\fbox")
# unicode a model writes where LaTeX was meant; math-verify's LaTeX parser drops it (6√2 read as 6)
_UNICODE = [
    (re.compile(r"√\s*\(([^()]*)\)"), r"\\sqrt{\1}"),
    (re.compile(r"√\s*([\w.]+)"), r"\\sqrt{\1}"),
    (re.compile("π"), r"\\pi "),
    (re.compile("[×·]"), r"\\times "),
    (re.compile("−"), "-"),
    (re.compile("∞"), r"\\infty "),
]
_COMMAND = re.compile(r"\\[A-Za-z]+(?:\{[^{}]*\})?")
_WORD = re.compile(r"[A-Za-z]{3,}")


def math_timeout() -> int | None:
    """math-verify's timeouts use SIGALRM, which only the main thread may set: 5 s there, none elsewhere."""
    return 5 if threading.current_thread() is threading.main_thread() else None


def _latex(text: str) -> str:
    for pattern, replacement in _UNICODE:
        text = pattern.sub(replacement, text)
    return text


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


def math_equal(gold: str, answer: str) -> tuple[bool, str]:
    """Whether the answer is the gold by math-verify, with a word on how it went."""
    import math_verify

    want, got = math_parse(gold), math_parse(answer)
    if not want:
        return False, f"math-verify could not parse the gold '{gold[:40]}'"
    if not got:
        return False, "math-verify parsed nothing in the answer"
    same = bool(math_verify.verify(want, got, timeout_seconds=math_timeout()))
    return same, f"math-verify: {got[-1]} vs {want[-1]}"
