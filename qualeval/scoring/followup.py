"""The follow-up: an extraction step, not a second question.

A model asked again for "only your final answer" inside the original conversation answers a new question: it can
change its mind, or copy back the template text of the prompt (`Answer: <answer>`), and a constraint then makes
that copy look valid. So the follow-up shows the model its own response, with the question as the document gave it
(never the task's instruction), and asks which answer the response gives. What it says is then held against the
content: an answer the content states is what gets scored, and the follow-up may only confirm it, or fill in one
the ladder could not find and the content holds.
"""

from __future__ import annotations

import re

from qualeval.records import Agreement, AnswerSpec
from qualeval.scoring.extract import Extraction, find_number, math_equal, normalize
from qualeval.tasks import Sample

__all__ = ["followup_prompt", "reconcile"]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_NUMBERS = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")
_ASKED = {
    "number": "the final number it gives",
    "boolean": "whether its final answer is yes or no",
    "text": "the final answer it gives, in as few words as the response allows",
}


def _what(spec: AnswerSpec) -> str:
    if spec.type == "choice":
        return "the letter of the option it chooses" if spec.labels == "letters" else "the option it chooses"
    return _ASKED[spec.type]


def followup_prompt(sample: Sample, content: str, spec: AnswerSpec) -> str:
    """The follow-up's one user message: the question, the options where there are some, the response."""
    parts = [f"Below is a question and a response to it. Report {_what(spec)}, exactly as the response states it."]
    parts.append("Do not answer the question yourself; if the response gives no answer, say so.")
    if sample.question.strip():
        parts.append(f"Question:\n{sample.question.strip()}")
    if sample.choices:
        labels = _LETTERS if spec.labels == "letters" else None
        listed = "\n".join(f"{labels[i]}. {c}" if labels else f"- {c}" for i, c in enumerate(sample.choices))
        parts.append(f"Options:\n{listed}")
    parts.append(f"Response:\n{content.strip()}")
    return "\n\n".join(parts)


def _words(text: str, spec: AnswerSpec) -> str:
    return f" {normalize(text, spec.normalize)} "


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "").replace("−", "-")) for n in _NUMBERS.findall(text)]


def _same(a: str, b: str, spec: AnswerSpec, math: bool) -> bool:
    """Whether two extracted answers of the spec's type are the same answer."""
    if spec.type == "number":
        x, y = find_number(a), find_number(b)
        return x is not None and y is not None and abs(x - y) <= 1e-9 * max(1.0, abs(x))
    if spec.type in ("choice", "boolean"):
        return a.strip().lower() == b.strip().lower()
    if math and math_equal(a, b)[0]:
        return True
    shorter, longer = sorted((_words(a, spec), _words(b, spec)), key=len)
    return shorter.strip() != "" and shorter in longer  # "Paris" is the answer "The capital is Paris" gives


def _held_by(value: str, content: str, spec: AnswerSpec, choices: tuple[str, ...]) -> bool:
    """Whether the content holds the follow-up's answer: the number, the option, the words are in it."""
    if spec.type == "number":
        wanted = find_number(value)
        return wanted is not None and any(abs(n - wanted) <= 1e-9 * max(1.0, abs(n)) for n in _numbers(content))
    if spec.type == "choice" and spec.labels == "letters" and value.strip().upper() in _LETTERS[: len(choices)]:
        index = _LETTERS.index(value.strip().upper())
        marked = re.search(rf"(?<![A-Za-z]){re.escape(value.strip().upper())}(?![A-Za-z])", content)
        return marked is not None or _words(choices[index], spec) in _words(content, spec)
    if spec.type == "boolean":
        words = spec.true_words if value.strip().lower() == "yes" else spec.false_words
        return any(_words(w, spec) in _words(content, spec) for w in words)
    squeezed = _words(value, spec).strip()
    return bool(squeezed) and f" {squeezed} " in _words(content, spec)


def reconcile(
    found: Extraction,
    reply: str | None,
    content: str,
    spec: AnswerSpec,
    choices: tuple[str, ...] = (),
    *,
    math: bool = False,
) -> tuple[Extraction, Agreement]:
    """What gets scored, given the content's own answer (`found`) and the follow-up's (`reply`), and how the two
    stand. The content's answer always wins; the follow-up's is taken only where the content has none and holds
    it."""
    if reply is None:
        return found, "silent"
    if found.value is not None:
        return found, "agrees" if _same(found.value, reply, spec, math) else "disagrees"
    if _held_by(reply, content, spec, choices):
        return Extraction(value=reply, rung="followup", raw=reply), "filled"
    return found, "unsupported"
