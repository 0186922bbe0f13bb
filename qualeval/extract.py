"""Answer extraction: read the final answer from the final content only, never from the reasoning.

The ladder, first rung that yields a value wins:
  json     the content is a JSON answer (bare or in a ```json fence)
  anchor   the task's answer markers: `#### N`, `Answer: X`, `\\boxed{X}`, "the answer is X" — the LAST
           match in the content, because models restate and correct themselves
  math     for math-scored tasks, what math-verify parses out of the content
  last     the last number, choice letter or yes/no word of the last line; the last line for text
(A held structured-output constraint gives the `constraint` rung before all of these; see qualeval.runner.)
The published GSM8K 3/10 came from reading numbers off the reasoning trace; nothing here looks at it.
"""

from __future__ import annotations

import re
import string
import threading

import orjson
from pydantic import BaseModel

from qualeval.tasks.spec import AnswerSpec

__all__ = ["Extraction", "extract", "find_number", "naive_extract", "normalize", "typed_value"]

Rung = str  # "json" | "anchor" | "last" | "none"

_ANCHORS = [
    re.compile(r"####\s*(?P<v>[^\n]+)"),
    re.compile(r"(?:final\s+)?answer\s*(?:is)?\s*[:：]\s*\**\s*(?P<v>[^\n]+)", re.IGNORECASE),
    re.compile(r"\\boxed\{"),
    re.compile(
        r"\b(?:the\s+)?(?:final\s+)?answer\s+is\s*\**\s*(?P<v>[^\n]+?)(?:\.\s|\.?$|\n)", re.IGNORECASE | re.MULTILINE
    ),
]
_NUMBER = re.compile(r"-?\$?\s*\d[\d,]*(?:\.\d+)?|-?\$?\s*\.\d+")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_WORD = re.compile(r"[A-Za-z]+")
_REMARK = re.compile(r"\s+\([^()]*\)\s*\.?\s*$")


class Extraction(BaseModel):
    value: str | None
    rung: Rung
    raw: str | None = None
    """The span the value was read from."""


def _boxed(text: str, start: int) -> str | None:
    """The balanced-brace argument of the \\boxed{ that ends at `start`."""
    depth, i = 1, start
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i]
        i += 1
    return None


def _last_anchor(content: str) -> str | None:
    best: tuple[int, str] | None = None
    for pattern in _ANCHORS:
        for match in pattern.finditer(content):
            value = _boxed(content, match.end()) if "v" not in pattern.groupindex else match.group("v")
            if value is not None and (best is None or match.start() >= best[0]):
                best = (match.start(), value)
    return None if best is None else best[1].strip()


def _json_answer(content: str) -> str | None:
    text = content.strip()
    fenced = _FENCE.findall(text)
    for candidate in [*reversed(fenced), text]:
        try:
            obj = orjson.loads(candidate.strip())
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            if "answer" in obj:
                return str(obj["answer"])
            if len(obj) == 1:
                return str(next(iter(obj.values())))
        elif isinstance(obj, (int, float, str)) and not isinstance(obj, bool):
            return str(obj)
    return None


def find_number(text: str, *, last: bool = False) -> float | None:
    """A number in text, treating 18, 18.0, $18, 18.00 and "18 dollars" alike and 1,800 as 1800."""
    found = _NUMBER.findall(text)
    if not found:
        return None
    token = found[-1 if last else 0].replace("$", "").replace(",", "").replace(" ", "")
    try:
        return float(token)
    except ValueError:
        return None


def _choice_label(span: str, spec: AnswerSpec, choices: tuple[str, ...], *, last: bool) -> str | None:
    letters = string.ascii_uppercase[: len(choices) or 10]
    if spec.labels == "text" or not choices:
        norm = normalize(span, spec.normalize)
        hits = [c for c in choices if normalize(c, spec.normalize) == norm]
        if hits:
            return hits[0]
        ranked = sorted(((span.lower().rfind(c.lower()), c) for c in choices), reverse=last)
        found = [c for pos, c in ranked if pos != -1]
        return found[0] if found else None
    # a standalone letter: "C", "(C)", "C.", "**C**", "C) text"
    hits = re.findall(rf"(?<![A-Za-z])([{letters}])(?![A-Za-z])", span)
    if hits:
        return hits[-1] if last else hits[0]
    norm = normalize(span, spec.normalize)
    for i, choice in enumerate(choices):
        if normalize(choice, spec.normalize) == norm:
            return letters[i]
    return None


def _boolean(span: str, spec: AnswerSpec, *, last: bool) -> str | None:
    words = [w.lower() for w in _WORD.findall(span)]
    text = " ".join(words)
    for phrase in sorted(spec.false_words, key=len, reverse=True):
        if " " in phrase and phrase in text:
            return "no"
    order = reversed(words) if last else iter(words)
    for word in order:
        if word in spec.true_words:
            return "yes"
        if word in spec.false_words:
            return "no"
    return None


def _typed(span: str, spec: AnswerSpec, choices: tuple[str, ...], *, last: bool) -> str | None:
    if spec.type == "number":
        number = find_number(span, last=last)
        return None if number is None else _fmt(number)
    if spec.type == "choice":
        return _choice_label(span, spec, choices, last=last)
    if spec.type == "boolean":
        return _boolean(span, spec, last=last)
    value = span.strip().strip("*_`").strip()
    # a trailing remark in parentheses is commentary, not the answer: "Paris (the capital)" -> "Paris"
    value = _REMARK.sub("", value).strip()
    return value.rstrip(".").strip() or None


def _fmt(number: float) -> str:
    return str(int(number)) if number.is_integer() else repr(number)


def typed_value(span: str, spec: AnswerSpec, choices: tuple[str, ...] = ()) -> str | None:
    """The answer of the spec's type that a span holds (a number, a choice label, yes/no, text)."""
    return _typed(span, spec, choices, last=False)


def math_timeout() -> int | None:
    """math-verify's timeouts use SIGALRM, which only the main thread may set: 5 s there, none elsewhere."""
    return 5 if threading.current_thread() is threading.main_thread() else None


def _math_answer(content: str) -> str | None:
    import math_verify

    found = math_verify.parse(content, parsing_timeout=math_timeout())
    return str(found[-1]) if found else None


def extract(content: str, spec: AnswerSpec, choices: tuple[str, ...] = (), *, math: bool = False) -> Extraction:
    """The answer in the final content, and the rung of the ladder that found it."""
    if not content.strip():
        return Extraction(value=None, rung="none")
    answer = _json_answer(content)
    if answer is not None and (value := _typed(answer, spec, choices, last=False)) is not None:
        return Extraction(value=value, rung="json", raw=answer)
    anchored = _last_anchor(content)
    if anchored is not None and (value := _typed(anchored, spec, choices, last=False)) is not None:
        return Extraction(value=value, rung="anchor", raw=anchored)
    if math and (found := _math_answer(content)) is not None:
        return Extraction(value=found, rung="math", raw=found)
    lines = [ln for ln in content.strip().splitlines() if ln.strip()]
    last_line = lines[-1] if lines else ""
    value = _typed(last_line, spec, choices, last=True)
    if value is not None:
        return Extraction(value=value, rung="last", raw=last_line)
    return Extraction(value=None, rung="none")


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’«»¿¡")


def normalize(text: str, steps: tuple[str, ...] = ("lower", "articles", "punctuation", "whitespace", "unicode")) -> str:
    """SQuAD-style normalisation, step by step as the answer spec lists them."""
    import unicodedata

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


def naive_extract(reasoning: str, content: str, spec: AnswerSpec, choices: tuple[str, ...] = ()) -> str | None:
    """What a naive extractor reads: the last number (letter, yes/no) anywhere in reasoning plus content.

    Kept only to show, beside the real accuracy, what reading the trace would have scored.
    """
    text = f"{reasoning}\n{content}".strip()
    if not text:
        return None
    if spec.type == "text":
        return text.splitlines()[-1].strip() or None
    return _typed(text, spec, choices, last=True)
