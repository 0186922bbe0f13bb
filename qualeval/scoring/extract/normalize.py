"""Text normalisation for comparing free-form answers (SQuAD-style, step by step)."""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

__all__ = ["normalize", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’«»¿¡")
DEFAULT_STEPS = ("lower", "articles", "punctuation", "whitespace", "unicode")


def normalize(text: str, steps: tuple[str, ...] = DEFAULT_STEPS) -> str:
    """Normalise as the answer spec lists the steps."""
    if "unicode" in steps:
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    if "lower" in steps:
        text = text.lower()
    if "punctuation" in steps:
        text = text.translate(_PUNCT)
    if "articles" in steps:
        text = _ARTICLES.sub(" ", text)
    if "whitespace" in steps:
        text = " ".join(text.split())
    return text


def token_f1(predicted: str, gold: str) -> float:
    """SQuAD's token-overlap F1 of two already-normalised strings."""
    got, want = predicted.split(), gold.split()
    common = sum((Counter(got) & Counter(want)).values())
    if not got or not want or common == 0:
        return float(got == want)
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)
