"""The reference server as a model judge: it answers qualeval's grader prompt the way a careful grader would
on easy cases, so the judge path can be tested end to end without a real model.

Its rule: CORRECT when the predicted answer, in plain words (case, accents, punctuation and articles aside, number
words as digits), shares most of its words with the gold target or an accepted answer; NOT_ATTEMPTED for a
refusal; INCORRECT otherwise. It is written here, apart from qualeval.scoring: the server checks the product's
judge path, so it must not agree with the product's normaliser by sharing it (tests/scoring/test_verdict.py holds
the two to the same grades).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

__all__ = ["GRADER_LINE", "grade_reply"]

GRADER_LINE = "You are grading one answer to a question against its gold target."
"""The first line of the grader prompt the product sends (qualeval.scoring.modeljudge writes it; a test holds the
two equal): how the server knows it is asked to grade rather than to answer."""

_FIELD = re.compile(r"^(Gold target|Also accepted|Predicted answer): (.*)$", re.MULTILINE)
_REFUSAL = re.compile(r"\b(i do not know|i don't know|cannot answer|not sure|no idea)\b", re.IGNORECASE)
_ARTICLES = frozenset({"a", "an", "the"})
_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_NUMBERS = {word: n for n, word in enumerate((*_ONES, *_TEENS))}
_TENS = {
    word: 10 * n
    for n, word in enumerate(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), 2)
}


def _words(text: str) -> list[str]:
    """The words a grader compares: `Six geese a-laying` and `6 geese, laying` are the same words."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()
    words = [w for w in re.sub(r"[^\w\s]|_", " ", plain).split() if w not in _ARTICLES]
    out: list[str] = []
    for before, word in zip(["", *words], words, strict=False):
        if before in _TENS and 0 < _NUMBERS.get(word, 0) < 10:
            out[-1] = str(_TENS[before] + _NUMBERS[word])  # twenty-one
        else:
            out.append(str(_NUMBERS.get(word, _TENS.get(word, word))))
    return out


def _overlap(said: list[str], gold: list[str]) -> float:
    """The share of words two answers have in common, as an F1 of the two lists."""
    common = sum((Counter(said) & Counter(gold)).values())
    if common == 0:
        return float(said == gold)
    return 2 * common / (len(said) + len(gold))


def grade_reply(prompt: str) -> str | None:
    """The one-word grade for a grader prompt; None when the prompt is not one."""
    if not prompt.startswith(GRADER_LINE):
        return None
    fields = {name: value.strip() for name, value in _FIELD.findall(prompt)}
    answer = fields.get("Predicted answer", "")
    if not answer or _REFUSAL.search(answer):
        return "NOT_ATTEMPTED"
    accepted = [fields.get("Gold target", "")]
    if fields.get("Also accepted", "(none)") != "(none)":
        accepted += fields["Also accepted"].split("; ")
    best = max(_overlap(_words(answer), _words(gold)) for gold in accepted)
    return "CORRECT" if best >= 0.6 else "INCORRECT"
