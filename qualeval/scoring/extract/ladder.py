"""The extraction ladder over the final content; the first rung that yields a value of the answer's type wins."""

from __future__ import annotations

import re
from typing import Literal

from qualeval.records import AnswerSpec, Extraction, Rung
from qualeval.scoring.extract.anchors import anchored_spans, restatement, stated_spans, unfilled
from qualeval.scoring.extract.echo import ECHO_SHARE, ECHO_WORDS, Turns, unechoed
from qualeval.scoring.extract.jsonfind import json_answer, open_working
from qualeval.scoring.extract.letters import letter_in_anchor, letter_on_line, option_letters
from qualeval.scoring.extract.maths import math_parse
from qualeval.scoring.extract.normalize import normalize
from qualeval.scoring.extract.numbers import find_number, fmt_number, line_number, result_number, taken_back_dropped

__all__ = ["Extraction", "Rung", "echoes", "extract", "naive_extract", "typed_value"]

Where = Literal["anchor", "line", "whole"]
# a closing remark in parentheses is words ("Paris (the capital)"); a parenthesis of numbers and symbols is part of
# the answer: the last pair in "(5, 8), (8, 5)", the second interval of "(0, 9) \cup (9, 36)"
_QUOTES = {('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019")}
_FENCE_OPENING = re.compile(r"```[ \t]*\w*\s*$")
_REMARK = re.compile(r"\s+\((?=[^()]*[A-Za-z]{2})[^()\\]*\)\s*\.?\s*$")
# a yes/no word after a negation states its opposite: "not valid" is invalid, "cannot be true" false; the words
# that may stand between them (a copula, an article, an adverb of degree) do not undo the negation
_NEGATIONS = frozenset(
    ("not", "never", "cannot", "cant", "isnt", "arent", "wasnt", "werent", "dont", "doesnt", "didnt", "wont")
)
_COPULAS = ("be", "is", "are", "was", "were", "been", "a", "an", "the")
_DEGREES = ("necessarily", "deductively", "logically", "really", "actually", "entirely", "completely", "strictly")
_BETWEEN = frozenset((*_COPULAS, *_DEGREES, "always", "definitely", "quite"))
# a reply that is a value (no words) and one it disowns ("7, not 12", "x = 7 rather than 12") states the value:
# math-verify, reading it as an expression, made "7, not" a list of 7 and a product of letters. In prose the
# disowned number alone is dropped (taken_back_dropped), and math-verify reads the prose's value
_DISOWNED = re.compile(
    r"\s*(?P<v>(?:\\[A-Za-z]+|(?![A-Za-z]{2})[^\n])+?)(?:[ \t]*,)?[ \t]*"
    r"\b(?:not|rather\s+than|instead\s+of)[ \t]+(?:be[ \t]+)?[-−]?\$?[ \t]?"
    r"\d+(?:[.,/]\d+)*[ \t]*\.?\s*",
    re.IGNORECASE,
)
_AFFIRMATION = re.compile(
    r"(?:yes|yeah|yep|definitely|certainly|correct|right|exactly|indeed|sure|no|nope)", re.IGNORECASE
)
# a text answer's closing clause that disowns another value: "Paris, not London" is Paris
_DISOWNING_TAIL = re.compile(
    r"(?<=\S)(?:\s*,\s*(?:but\s+|and\s+)?not|\s+(?:rather\s+than|instead\s+of))\s+\S[^,;]*$", re.IGNORECASE
)


def _choice_text(span: str, spec: AnswerSpec, choices: tuple[str, ...], *, last: bool) -> str | None:
    """The choice whose text the span is, else the first (last) one it mentions."""
    norm = normalize(span, spec.normalize)
    for choice in choices:
        if normalize(choice, spec.normalize) == norm:
            return choice
    lowered = span.lower()
    ranked = sorted(((lowered.rfind(c.lower()) if last else lowered.find(c.lower()), c) for c in choices), reverse=last)
    found = [c for pos, c in ranked if pos != -1]
    return found[0] if found else None


def _choice(span: str, spec: AnswerSpec, choices: tuple[str, ...], where: Where) -> str | None:
    if spec.labels == "text":
        return _choice_text(span, spec, choices, last=where != "anchor")
    letters = option_letters(len(choices))
    found = letter_in_anchor(span, letters) if where == "anchor" else letter_on_line(span, letters)
    if found is not None or where == "whole":
        return found
    norm = normalize(span, spec.normalize)  # the model wrote the option's text instead of its letter
    for i, choice in enumerate(choices):
        if normalize(choice, spec.normalize) == norm:
            return letters[i]
    return None


def _negation(words: list[str], at: int) -> str | None:
    """The negation that governs the word at `at`, right before it or with at most two `_BETWEEN` words."""
    before = at - 1
    while before >= 0 and at - before <= 3 and words[before] in _BETWEEN:
        before -= 1
    found = words[before] if before >= 0 and at - before <= 3 else None
    return found if found in _NEGATIONS or found in ("neither", "nor") else None


def _boolean(span: str, spec: AnswerSpec, *, last: bool) -> str | None:
    words = normalize(span, ("lower", "punctuation", "whitespace")).split()
    text = " ".join(words)
    for phrase in sorted(spec.false_words, key=len, reverse=True):
        if " " in phrase and phrase in text:
            return "no"
    for at in reversed(range(len(words))) if last else range(len(words)):
        said = "yes" if words[at] in spec.true_words else "no" if words[at] in spec.false_words else None
        if said is None:
            continue
        negation = _negation(words, at)
        if negation in ("neither", "nor"):  # "neither yes nor no" says neither
            return None
        return ({"yes": "no", "no": "yes"}[said]) if negation else said
    return None


def _text(span: str) -> str | None:
    value = span.strip().strip("*_`").strip()
    value = _REMARK.sub("", value).strip()
    value = _DISOWNING_TAIL.sub("", value).strip()
    value = value.rstrip(".").strip().strip("*_`").strip()
    if value.count('"') == 1 and value.endswith('"'):  # `answer: 163"`: the quote closes the JSON string it stood in
        value = value[:-1].rstrip(".").strip()
    while len(value) > 1 and (value[0], value[-1]) in _QUOTES:  # `Answer: "20"` answers 20
        value = value[1:-1].strip()
    return value or None


def _typed(span: str, spec: AnswerSpec, choices: tuple[str, ...], where: Where) -> str | None:
    if spec.type == "number":
        readers = {"anchor": result_number, "line": line_number}
        number = readers[where](span) if where in readers else find_number(span, last=True)
        return None if number is None else fmt_number(number)
    if spec.type == "choice":
        return _choice(span, spec, choices, where)
    if spec.type == "boolean":
        return _boolean(span, spec, last=where == "whole")
    return _text(span)


def typed_value(span: str, spec: AnswerSpec, choices: tuple[str, ...] = ()) -> str | None:
    """The answer of the spec's type that a span holds (a number, a choice label, yes/no, text)."""
    return _typed(span, spec, choices, "anchor")


def _anchored(content: str, spec: AnswerSpec, choices: tuple[str, ...]) -> Extraction | None:
    """The answer an answer marker introduces; with no value of the answer's type, the marker's span still
    says the model answered (value None): "Cannot be determined" is an answer, just not a number. A conditional
    ("the closest answer would be (E)") is no answer where a plain statement follows it (`stated_spans`)."""
    marks = stated_spans(content)
    for _, readings in marks if spec.pick == "first" else reversed(marks):
        for span in readings:  # a correction right after the marker first ("12? No, 7."), then its own span
            value = None if _affirms(span, spec) else _typed(span, spec, choices, "anchor")
            if value is not None:
                return Extraction(value=value, rung="anchor", raw=span.strip())
    said = anchored_spans(content)  # a judgement of an answer ("the answer is not among the options") says it answered
    return Extraction(value=None, rung="anchor", raw=said[-1][1].strip()) if said else None


def _affirms(reading: str, spec: AnswerSpec) -> bool:
    """Whether a text answer's restatement only confirms or retracts what the model said ("Answer: Paris? Yes.",
    "Paris. Wait, no."): the text answer is no "Yes" nor "no"."""
    return spec.type == "text" and _AFFIRMATION.fullmatch(reading.strip().rstrip(".!")) is not None


def _disowned_dropped(content: str) -> str:
    """The content without the values it disowns, as the math rung reads it."""
    whole = _DISOWNED.fullmatch(content)
    return whole.group("v") if whole else taken_back_dropped(content)


def _looping(line: str, times: int = 4, longest: int = 15) -> bool:
    """Whether a line ends in one phrase (up to `longest` words) said `times` times over: a model caught in a loop
    until its budget ran out ("= not False and False = not False and False = ..."). A word inside the loop is no
    answer; the phrase may stop anywhere, since a periodic run's last stretches are copies of each other."""
    words = line.split()
    return any(
        len(words) >= times * size and words[-times * size :] == words[-size:] * times for size in range(1, longest + 1)
    )


def _runs_out(content: str) -> bool:
    """Whether the content ends in working that states no answer: looping until the budget ran out, over lines too
    (a loop of whole steps, up to 60 words each). The math rung and a number's or yes/no's last line read nothing
    there: the last number of such working is a step, not an answer. (A JSON object cut off in its working is
    already gone: `open_working`.)"""
    return _looping(" ".join(content.split()), longest=60)


def _last_line(content: str, spec: AnswerSpec, choices: tuple[str, ...]) -> Extraction | None:
    lines = [ln for ln in content.strip().splitlines() if ln.strip()]
    if spec.type == "choice" and spec.labels == "letters" and choices:
        letters = option_letters(len(choices))
        for line in reversed(lines):  # a line that is only a marker, wherever it stands
            if (value := letter_on_line(line, letters)) is not None and len(line.strip(" *_()[].")) == 1:
                return Extraction(value=value, rung="last", raw=line)
    last = lines[-1] if lines else ""
    if _looping(last) or unfilled(last):  # a loop, or a marker with no value (`Answer:`, `Answer: <answer>`)
        return None
    said = restatement(last)  # the model's last word on the line: "Yes? No.", "A or B? It's B."
    for reading in [said, last] if said and not _affirms(said, spec) else [last]:
        value = _typed(reading, spec, choices, "line")
        if value is not None:
            return Extraction(value=value, rung="last", raw=last)
    return None


def _refused_there(anchored: Extraction | None, last: Extraction) -> bool:
    """The last line is the one whose answer marker held no value of the type asked ("Answer: 2020-03-04" for a
    number): reading a number off it anyway would make -4 the answer. The marker said the model answered; what
    it wrote there is not of the type, so nothing is read from that line."""
    if anchored is None or not anchored.raw or last.raw is None:
        return False
    here = anchored_spans(last.raw)
    return bool(here) and here[-1][1].strip() == anchored.raw


def extract(
    content: str,
    spec: AnswerSpec,
    choices: tuple[str, ...] = (),
    *,
    math: bool = False,
    prompt: str | Turns = "",
) -> Extraction:
    """The answer in the final content, and the rung of the ladder that found it. Text that repeats the `prompt`
    (its instruction, options, examples) is the prompt's, not the model's: the ladder never reads it. An option
    quoted, and a closing sentence in the examples' words after working of the model's own, are the model's
    (qualeval.scoring.extract.echo)."""
    if prompt:
        content, _ = unechoed(content, prompt, choices)
    if not content.strip():
        return Extraction(value=None, rung="none")
    answer = json_answer(content)
    if answer is not None and (value := _typed(answer, spec, choices, "anchor")) is not None:
        return Extraction(value=value, rung="json", raw=answer)
    if answer is None and (cut := open_working(content)) is not None:
        # an object cut off before its answer holds the working: nothing is read in it, nor in its fence's opening
        content = _FENCE_OPENING.sub("", content[:cut])
    anchored = _anchored(content, spec, choices)
    if anchored is not None and anchored.value is not None:
        return anchored
    runs_out = _runs_out(content)
    if math and not runs_out and (parsed := math_parse(_disowned_dropped(content))):
        return Extraction(value=str(parsed[-1]), rung="math", raw=str(parsed[-1]))
    # an option or a plain text answer keeps the last line's own rules (a loop within that line)
    last = None if runs_out and (math or spec.type in ("number", "boolean")) else _last_line(content, spec, choices)
    if last is not None and not _refused_there(anchored, last):
        return last
    if answer is not None:  # the model answered in its JSON, with no value of the type asked for
        return Extraction(value=None, rung="json", raw=answer)
    return anchored or Extraction(value=None, rung="none")


def echoes(
    content: str,
    spec: AnswerSpec,
    choices: tuple[str, ...],
    *,
    prompt: str | Turns,
    truncated: bool,
    math: bool = False,
) -> bool:
    """Whether the content is an echo of its prompt: mostly (ECHO_SHARE of its characters) text the prompt holds,
    repeated until the budget cut it off (`truncated`) or with no answer of the model's own beside it; or the
    prompt's text with nothing of the model's own beside it but a fragment (fewer than ECHO_WORDS words, "The
    conclusion does not") that states no answer: with the echo masked, nothing is left to call an answer."""
    text, share = unechoed(content, prompt, choices)
    if text == content:
        return False
    if share < ECHO_SHARE and len(text.split()) >= ECHO_WORDS:
        return False
    return (truncated and share >= ECHO_SHARE) or extract(text, spec, choices, math=math).value is None


def naive_extract(reasoning: str, content: str, spec: AnswerSpec, choices: tuple[str, ...] = ()) -> str | None:
    """What a naive extractor reads: the last number (letter, yes/no) anywhere in reasoning plus content.

    Kept only to show, beside the real accuracy, what reading the trace would have scored.
    """
    text = f"{reasoning}\n{content}".strip()
    if not text:
        return None
    if spec.type == "text":
        return text.splitlines()[-1].strip() or None
    if spec.type == "choice" and spec.labels == "letters":
        letters = option_letters(len(choices))
        hits = [c for c in text.split() if len(c.strip("().*:")) == 1 and c.strip("().*:") in letters]
        return hits[-1].strip("().*:") if hits else None
    return _typed(text, spec, choices, "whole")
