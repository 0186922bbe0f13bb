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

__all__ = ["json_answer", "open_working"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|Json)?[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_KEY = re.compile(r"""["']\s*[A-Za-z_][\w ]{0,40}["']\s*:""")
_ANSWER_KEYS = ("answer", "final_answer", "final answer", "finalanswer", "result")
_WORKING_KEYS = frozenset(
    ("reasoning", "reason", "explanation", "rationale", "thought", "thoughts", "thinking", "steps")
)
"""Keys that hold the working: an object with only one of them (the model cut off before its answer field) states
no answer."""
_ANSWER_FIELD = re.compile(r"""["']?\s*(?:final[ _]?answer|answer|result)["']?\s*:""", re.IGNORECASE)
_FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*$(?!\s*[{\[])", re.MULTILINE)
"""A fence that closes a block: alone on its line, no object opening after it (```` ```json ```` opens one)."""
_NESTED = re.compile(r"""\s*["']?(?:final[ _]?)?answer["']?\s*:\s*["']?(?P<v>[^"'\n]*?)["']?\s*""", re.IGNORECASE)
# a JSON string escape that swallowed the first letter of a LaTeX command: "\frac" decodes to form feed + "rac"
_LATEX_ESCAPES = {"\b": "\\b", "\f": "\\f", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_SWALLOWED = re.compile(
    r"[\b\f](?=[A-Za-z])|\t(?=imes|ext|heta|an\b|au\b|o\b|frac|riangle)|\n(?=eq|u\b|abla|ot\b|e\b|i\b|eg)"
    r"|\r(?=ight|ho\b|angle|ceil|floor)"
)


def _objects(text: str) -> list[str]:
    """Every top-level `{...}` span that looks like a JSON object; an unclosed one runs to the end."""
    return [text[start:end] for start, end in _object_spans(text)]


def _object_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    i = text.find("{")
    while i != -1:
        end = _close(text, i)
        stop = end + 1 if end is not None else len(text)
        if _KEY.search(text, i, stop):
            spans.append((i, stop))
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


def json_answer(content: str) -> str | None:
    """The answer field of the last JSON object in the content that has one (fenced or not)."""
    text = content.strip()
    if "{" not in text:  # a bare `42` or `"B"` is the model's plain answer, not JSON: the other rungs read it
        return None
    fenced = [body for body in _FENCE.findall(text) if "{" in body]
    for candidate in [*reversed(fenced), *reversed(_objects(text))]:
        answer = _answer_of(_load(candidate.strip()))
        if answer is not None:
            return answer.strip()
    return None


def open_working(content: str) -> int | None:
    """Where a JSON object begins that holds working and no answer and that the content ends with; None when there
    is none. Its numbers and letters are the working's, not an answer. Two shapes:

    - cut off: the content ends inside it (`{"reasoning": "... so 7 remain, then`, the budget ran out before its
      answer field). Models break their JSON (a quote inside the reasoning, a string never closed), so an object
      counts as cut off only where nothing closes it: no brace, quotes aside, and no fence after it; and one whose
      text names an answer field is the anchor's to read;
    - closed with only working in it (`{"reasoning": "... 3 + 9 = 12"}`, at most a closing fence after it): every
      key is a working key. One whose text names an answer field (`answer": "-15"`, `Answer: "-4"`: a quote the
      model got wrong swallowed the field into its working) is the anchor's to read, as when cut off."""
    spans = _object_spans(content)
    if not spans:
        return None
    start, stop = spans[-1]
    if _close(content, start) is not None:
        return start if _closed_working(content[start:stop], content[stop:]) else None
    rest = content[start:]
    if _FENCE_CLOSE.search(rest) or _ANSWER_FIELD.search(rest) or _braces_close(rest):
        return None
    answer = _answer_of(_load(rest.strip()))
    return start if answer is None or not answer.strip() else None


# working that ends on its own statement of the answer ("Therefore, the answer is 50%.") states it: ZeroEval's Yi
# outputs close such an object with no answer field, and the anchor reads the statement
_STATED = re.compile(r"\banswer\s+is\b", re.IGNORECASE)


def _closed_working(body: str, after: str) -> bool:
    """Whether a closed object, with `after` the content after it, ends the content holding only working."""
    if after.strip().strip("`").strip() or _ANSWER_FIELD.search(body) or _STATED.search(body):
        return False
    obj = _load(body)
    return isinstance(obj, dict) and bool(obj) and all(str(k).strip().lower() in _WORKING_KEYS for k in obj)


def _braces_close(text: str) -> bool:
    """Whether the brace that opens `text` is closed, counting every brace (in strings too)."""
    depth = 0
    for c in text:
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return True
    return False
