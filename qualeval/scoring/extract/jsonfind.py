"""The answer field of a JSON object written anywhere in the content.

Models asked for `{"reasoning": ..., "answer": ...}` put it in a fence (```json, ``` json, ```JSON) or not, after
or between prose, and break it: raw newlines in strings, single quotes, trailing commas, a missing closing brace.
Each candidate object is parsed strictly first (orjson), then with control characters allowed (the standard
library's non-strict mode), and only then repaired by json-repair, which is slow on long strings.
"""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair
import orjson

__all__ = ["cut_off_working", "json_answer"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|Json)?[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_KEY = re.compile(r"""["']\s*[A-Za-z_][\w ]{0,40}["']\s*:""")
_ANSWER_KEYS = ("answer", "final_answer", "final answer", "finalanswer", "result")
_WORKING_KEYS = frozenset(
    ("reasoning", "reason", "explanation", "rationale", "thought", "thoughts", "thinking", "steps")
)
"""Keys that hold the working: an object with only one of them (the model cut off before its answer field) states
no answer."""
_NESTED = re.compile(r"""\s*["']?(?:final[ _]?)?answer["']?\s*:\s*["']?(?P<v>[^"'\n]*?)["']?\s*""", re.IGNORECASE)
# a JSON string escape that swallowed the first letter of a LaTeX command: "\frac" decodes to form feed + "rac"
_LATEX_ESCAPES = {"\b": "\\b", "\f": "\\f", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_SWALLOWED = re.compile(
    r"[\b\f](?=[A-Za-z])|\t(?=imes|ext|heta|an\b|au\b|o\b|frac|riangle)|\n(?=eq|u\b|abla|ot\b|e\b|i\b|eg)"
    r"|\r(?=ight|ho\b|angle|ceil|floor)"
)


def _objects(text: str) -> list[str]:
    """Every top-level `{...}` span that looks like a JSON object; an unclosed one runs to the end."""
    spans: list[str] = []
    i = text.find("{")
    while i != -1:
        end = _close(text, i)
        span = text[i : end + 1] if end is not None else text[i:]
        if _KEY.search(span):
            spans.append(span)
        if end is None:
            break
        i = text.find("{", end + 1)
    return spans


def _close(text: str, start: int) -> int | None:
    """Index of the brace closing the one at `start`, skipping braces inside double-quoted strings."""
    depth, quoted, escaped = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if quoted:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _load(candidate: str) -> Any:
    try:
        return orjson.loads(candidate)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(candidate, strict=False)
    except ValueError:
        pass
    try:
        return json_repair.loads(candidate)
    except Exception:  # json-repair gives up with assorted exceptions on hopeless input
        return None


def _answer_of(obj: Any) -> str | None:
    if isinstance(obj, list):
        found = [a for a in map(_answer_of, obj) if a is not None]
        return found[-1] if found else None
    if not isinstance(obj, dict) or not obj:
        return None
    keys = {str(k).strip().lower(): k for k in obj}
    for name in _ANSWER_KEYS:
        if name in keys and _scalar(obj[keys[name]]):
            return _restore_latex(_inner(str(obj[keys[name]])))
    (key, value), *others = obj.items()
    if not others and _scalar(value) and str(key).strip().lower() not in _WORKING_KEYS:
        return _restore_latex(str(value))
    return None


def _inner(value: str) -> str:
    """The value of an answer field whose value is itself one: json-repair, given `Answer: "answer": "15"` inside a
    string the model never closed, makes a key `Answer` of the prose and `answer": "15` its value."""
    inner = _NESTED.fullmatch(value)
    return inner.group("v") if inner else value


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _restore_latex(value: str) -> str:
    return _SWALLOWED.sub(lambda m: _LATEX_ESCAPES[m.group(0)], value)


def _whole(text: str) -> str | None:
    """The content as one JSON scalar (`42`, `"B"`)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return str(value) if _scalar(value) else None


def json_answer(content: str) -> str | None:
    """The answer field of the last JSON object in the content that has one (fenced or not)."""
    text = content.strip()
    if "{" not in text:
        return _whole(text)
    fenced = [body for body in _FENCE.findall(text) if "{" in body]
    for candidate in [*reversed(fenced), *reversed(_objects(text))]:
        answer = _answer_of(_load(candidate.strip()))
        if answer is not None:
            return answer.strip()
    return None


def cut_off_working(content: str) -> bool:
    """Whether the content ends inside a JSON object that holds only the working (`{"reasoning": "... 3 + 4 = 7`):
    the budget ran out before the answer field, so no number or word in it is the answer. An object the model
    closed (a final brace or fence after a quote it got wrong) was not cut off."""
    text = content.strip()
    spans = _objects(text) if "{" in text and not text.endswith(("}", "```")) else []
    if not spans or _close(spans[-1], 0) is not None or not text.endswith(spans[-1].rstrip()):
        return False
    found = _load(spans[-1].strip())
    return isinstance(found, dict) and bool(found) and all(str(k).strip().lower() in _WORKING_KEYS for k in found)
