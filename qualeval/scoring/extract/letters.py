"""Option letters: a capital counts as an answer only where it is written as an option marker.

Markers: `B`, `(B)`, `[B]`, `B.`, `B)`, `B:`, `**B**`, `option B`, `choice (B)`; never a word ("A", "I"), an
initial or a variable in prose. Up to 26 options (MMLU-Pro has 10).

After an answer marker a letter may also stand in LaTeX text (`\\boxed{\\text{B}}`), in lower case when it is the
whole value (`Answer: (b)`), or after the option's text (`Answer: Mercury (B)`). On a line with no
marker, a closing statement ("... So C.") wins over the options named in the working before it, and an option
written off ("(A) is wrong") is not chosen.
"""

from __future__ import annotations

import re
import string

__all__ = ["letter_in_anchor", "letter_on_line", "option_letters"]

_EMPHASIS = "*_`'\" \t"
_REJECTED = re.compile(r"(?:rules?\s+out|not|except|eliminate)\s*$", re.IGNORECASE)
_WRITTEN_OFF = re.compile(
    r"\s*(?:(?:is|are|was)\s+(?:not\b|incorrect|wrong|false|out\b|eliminated|ruled\s+out)|isn't|wasn't"
    r"|can(?:'t|not)\s+be\b|(?:does|do)(?:n't|\s+not)\s+(?:fit|apply|work|hold)\b)",
    re.IGNORECASE,
)
"""What follows an option that the working rejects: "(A) is wrong", "(A) can't be right"."""
_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")
_CLOSING = r"\b(?:so|thus|therefore|hence|overall|finally)\b[,:]?\s*"


def option_letters(count: int) -> str:
    return string.ascii_uppercase[: count if 0 < count <= 26 else 26]


def _bare(text: str, letters: str) -> str | None:
    """The letter when the text is a marker and nothing else: `B`, `(B)`, `**B.**`, `[B]`."""
    core = text.strip().strip(_EMPHASIS).rstrip(".:;,!").strip(_EMPHASIS)
    if len(core) == 3 and core[0] + core[2] in ("()", "[]"):
        core = core[1]
    return core if len(core) == 1 and core in letters else None


def _leading(text: str, letters: str) -> str | None:
    """The letter of a marker that opens the text: `B. Paris`, `(B) Paris`, `B) Paris`, `**B**: Paris`; not one the
    text goes on to write off ("(A) is wrong, ...")."""
    head = text.lstrip(_EMPHASIS)
    match = re.match(rf"(?:\(([{letters}])\)|\[([{letters}])\]|([{letters}])(?:[.:)]|\*\*))(?=[\s,;]|$|\*)", head)
    if match and not _WRITTEN_OFF.match(head, match.end()):
        return next(g for g in match.groups() if g)
    return None


def _concluded(line: str, letters: str) -> str | None:
    """The letter of a closing statement that ends the line: "... (B) is wrong. So C.", "Therefore, (C)."."""
    lead = rf"{_CLOSING}(?:(?:the\s+)?(?:answer|option|choice)\s+(?:is|must\s+be)\s*|it\s+(?:is|must\s+be)\s*)?"
    match = re.search(rf"{lead}[*_]*[(\[]?([{letters}])[)\]]?[*_]*[.!]?[*_]*\s*$", line, re.IGNORECASE)
    return match.group(1).upper() if match and match.group(1).isupper() else None


def _trailing(span: str, letters: str) -> str | None:
    """The letter in parentheses that closes an anchor's value after words (`Mercury (B)`), where no other marker
    stands before it."""
    match = re.fullmatch(rf"(?P<text>.*\w.*?)\s*[(\[]([{letters}])[)\]]\s*\.?", span.strip(_EMPHASIS))
    if match is None or re.search(rf"[(\[][{letters}][)\]]|\b(?:option|choice)\b", match.group("text"), re.I):
        return None
    return match.group(2)


def _named(text: str, letters: str, *, on_line: bool = False) -> str | None:
    """`option B`, `choice (C)`, `letter D` in the text: the last one. `on_line` (no answer marker before it):
    not an option that is rejected ("option F is not correct", "rules out (F)") nor one that heads a line of a
    walk through the options ("Option H: ..."), which name an option without choosing it."""
    rejected = r"(?![)\]]?\s*(?:(?:is|are|was)\s+(?:not|incorrect|wrong|false)\b|isn't))" if on_line else ""
    pattern = rf"\b(?:option|choice|letter)\s*[(\[]?([{letters}]){rejected}[)\]]?(?![A-Za-z])"
    if on_line and re.match(rf"\W*(?:option|choice)\s*[(\[]?[{letters}][)\]]?\s*[:\-–]", text, re.IGNORECASE):
        return None
    hits = [
        m.group(1)
        for m in re.finditer(pattern, text, re.IGNORECASE)
        if not (on_line and _REJECTED.search(text[max(0, m.start() - 12) : m.start()]))
    ]
    return hits[-1] if hits else None


def letter_in_anchor(span: str, letters: str) -> str | None:
    """A letter right after an answer marker: `Answer: B`, `answer is (B)`, `answer is B because ...`,
    `\\boxed{\\text{B}}`, `Answer: (b)`, `Answer: Mercury (B)`."""
    span = _LATEX_TEXT.sub(r"\1", span)
    opening = re.match(rf"[\s*_]*[(\[]?([{letters}])[)\]]?(?=[\s,;:.]|$)", span)
    if opening and _WRITTEN_OFF.match(span, opening.end()) and (turned := _concluded(span, letters)):
        return turned  # "(A) is wrong, so B": the option it turns to
    found = _bare(span, letters) or _leading(span, letters) or _lower(span, letters)
    if found:
        return found
    # "B because ...", a list "(A, C)" read as its first option (as MMLU-Pro's and lm-eval's parsers do), "(H" cut off
    first = re.match(rf"[\s*_]*\(?([{letters}])(?=[\s,;:.)\]]|$)", span.strip())
    if first:
        return first.group(1)
    return _named(span, letters) or _trailing(span, letters)


def _lower(span: str, letters: str) -> str | None:
    """A lower-case letter that is the whole value: `b`, `(b)`; never one before words ("(a) H. ..." labels a part of
    the question, "a" is an article)."""
    core = span.strip().strip(_EMPHASIS)
    match = re.fullmatch(r"\(?([a-z])\)?[.:]?", core)
    return match.group(1).upper() if match and match.group(1).upper() in letters else None


def letter_on_line(line: str, letters: str) -> str | None:
    """A letter from a line with no answer marker: the line is a marker, ends in a closing statement of one, opens
    with one, or names an option."""
    found = _bare(line, letters) or _concluded(line, letters) or _leading(line, letters)
    return found or _named(line, letters, on_line=True)
