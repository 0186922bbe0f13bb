"""The reference server's answer key: questions and their gold answers (or whole responses), found by hashing."""

from __future__ import annotations

import hashlib
import re
import string
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from qualeval.errors import InputError, QualevalWarning

__all__ = ["AnswerKey", "KeyEntry", "KeyedCall", "digest", "load_entries", "offered", "sample_entries"]

_SPACE = re.compile(r"\s+")


_EDGES = string.punctuation + string.whitespace + "“”‘’"


def _norm(text: str) -> str:
    """Lower case, runs of whitespace as one space, punctuation at either end dropped: renderings of one question
    differ in line breaks and in the mark that ends it ("...?" against "...?\nAnswer:")."""
    return _SPACE.sub(" ", text).strip(_EDGES).lower()


@dataclass(frozen=True, slots=True)
class KeyedCall:
    """One call the reference server answers with: a function name and its arguments object."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class KeyEntry:
    question: str
    answer: str
    choices: tuple[str, ...] = ()
    verbatim: str | None = None
    """The answer is a whole response, sent as it is: `code` (a program, fenced when the prompt fences one) or
    `text` (an IFEval response)."""
    draws: str = ""
    """What the simulated draws for this question follow (the task's own rendering of it, else the question):
    one question draws alike however a prompt renders it, and as it did before keys held bare questions."""
    calls: tuple[KeyedCall, ...] | None = None
    """A tool-call item's calls to answer a request that offers `tools` with: () for an item that expects no
    call (answered with text); None for an item that is not a tool-call item."""
    tools: tuple[str, ...] | None = None
    """The names of the functions the item offers (offered), () for none: one question asked with other tools
    is another item (BFCL asks one question of several). None: any (a key file's line)."""
    schema: str = ""
    """A digest of the whole tools list (digest): two items may offer functions of one name with other
    parameters, one expecting a call and the other none."""


def digest(tools: Any) -> str:
    """A digest of an OpenAI `tools` list as JSON with sorted keys: the same list read back from a request gives
    the same digest; "" for none."""
    if not tools:
        return ""
    try:
        text = orjson.dumps(tools, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a value JSON has no form for: the names alone tell the items apart
        return ""
    return hashlib.blake2b(text, digest_size=12).hexdigest()


def offered(tools: Any) -> tuple[str, ...]:
    """The names of the functions in an OpenAI `tools` list, in order; () for none or a list that is no such list."""
    if not isinstance(tools, (list, tuple)):
        return ()
    functions = [t.get("function") for t in tools if isinstance(t, dict)]
    return tuple(f["name"] for f in functions if isinstance(f, dict) and isinstance(f.get("name"), str))


_SPAN = 6
"""Questions are indexed by their first few words: a prompt is searched at each of its word positions."""


class AnswerKey:
    """Questions and gold answers. Reads JSONL with a question field (`question`, `query`, `input`, `context`,
    `prompt`) and an answer field (`answer`, `gold`, `target`; a GSM8K answer's `#### N` line counts), or a whole
    response to give as it is (`response`: IFEval's; `canonical_solution`: HumanEval's, after its `prompt`), or
    the calls to answer with (`tool_calls`: a list of `{"name": ..., "arguments": {...}}`, [] for no call)."""

    @classmethod
    def from_samples(cls, samples: Sequence[Any], verbatim: str | None = None) -> AnswerKey:
        """A key from a task's samples (sample_entries)."""
        return cls(sample_entries(samples, verbatim))

    def __init__(self, entries: Sequence[KeyEntry]) -> None:
        self.entries = list(entries)
        self._norms = [_norm(e.question) for e in self.entries]
        # one question may be several entries (asked with other tools, or by two tasks): all are kept, in order
        self._same: dict[str, list[int]] = {}
        for i, norm in enumerate(self._norms):
            self._same.setdefault(norm, []).append(i)
        _warn_collisions(self.entries, self._same)
        # first words -> entries: a prompt that wraps a question in instructions finds it by hashing, not scanning
        self._index: dict[tuple[str, ...], list[int]] = {}
        for i, norm in enumerate(self._norms):
            self._index.setdefault(tuple(norm.split(" ")[:_SPAN]), []).append(i)
        self._spans = sorted({len(words) for words in self._index})
        self._found: dict[tuple[str, tuple[tuple[str, ...], str] | None], KeyEntry | None] = {}

    @classmethod
    def load(cls, path: Path) -> AnswerKey:
        return cls(load_entries(path))

    def find(self, prompt: str, tools: Any = None) -> KeyEntry | None:
        """The entry for a prompt. `tools`: the request's OpenAI tools, when it is known whether it sent any: an
        entry offering the same tools is preferred, then one offering functions of the same names, then one
        offering any (a key file's), then the last."""
        key = _norm(prompt)
        asked = None if tools is None else (offered(tools), digest(tools))
        if (key, asked) in self._found:
            return self._found[key, asked]
        norm = key if key in self._same else None
        if norm is None:
            # prompts wrap the question in instructions; the longest contained question wins
            best = self._contained(key)
            norm = None if best is None else self._norms[best]
        hit = None if norm is None else self._pick(self._same[norm], asked)
        self._found[key, asked] = hit
        return hit

    def _pick(self, group: list[int], asked: tuple[tuple[str, ...], str] | None) -> KeyEntry:
        """Of the entries of one question, the one for a request offering `asked` (names, digest; None: not
        known)."""
        entries = [self.entries[i] for i in group]
        if asked is not None:
            names, schema = asked
            for fits in (
                lambda e: e.tools == names and e.schema == schema,
                lambda e: e.tools == names,
                lambda e: e.tools is None,
            ):
                matching = [e for e in entries if fits(e)]
                if matching:
                    return matching[-1]
        return entries[-1]

    def _contained(self, key: str) -> int | None:
        words = key.split(" ")
        found = {
            i
            for start in range(len(words))
            for span in self._spans
            for i in self._index.get(tuple(words[start : start + span]), ())
            if self._norms[i] in key
        }
        if not found:  # a question glued to the text before it has no word boundary to hash: scan, once per prompt
            found = {i for i, norm in enumerate(self._norms) if norm in key}
        return max(found, key=lambda i: (len(self._norms[i]), -i), default=None)


def sample_entries(samples: Sequence[Any], verbatim: str | None = None) -> list[KeyEntry]:
    """A task's samples as entries, keyed by the question as the document gives it where the rendered prompt
    holds it (else the last user message): another task's rendering of the same documents (an lm-eval import
    of a built-in task, other instructions or option layout) holds it too, so it finds the same entry.
    `verbatim` for tasks whose gold is a whole response (a reference program)."""
    return [
        KeyEntry(
            question=_keyed(s),
            answer=s.gold,
            choices=tuple(s.choices),
            verbatim=verbatim,
            draws=s.messages[-1].content,
            calls=served_calls(s),
            tools=offered(getattr(s, "tools", ())),
            schema=digest(getattr(s, "tools", ())),
        )
        for s in samples
    ]


def load_entries(path: Path) -> list[KeyEntry]:
    """An answer-key file's entries (AnswerKey says its lines)."""
    entries = []
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot read answer key ({exc.strerror})") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                raise InputError(f"{path}:{number}: not a JSON object") from None
            entries.append(_entry(row, f"{path}:{number}"))
    if not entries:
        raise InputError(f"{path}: answer key is empty")
    return entries


def _warn_collisions(entries: Sequence[KeyEntry], same: dict[str, list[int]]) -> None:
    """Say once when entries that nothing tells apart (one question, the same tools) answer differently: the
    last is served, and the others' items will be answered with its answer."""
    clashes = []
    for group in same.values():
        seen: dict[tuple[object, ...], set[tuple[object, ...]]] = {}
        for i in group:
            e = entries[i]
            seen.setdefault((e.tools, e.schema), set()).add((e.answer, repr(e.calls), e.verbatim, e.choices))
        clashes += [entries[group[0]].question for answers in seen.values() if len(answers) > 1]
    if clashes:
        warnings.warn(
            f"answer key: {len(clashes)} question(s) keyed more than once with the same tools and different "
            f"answers; the last entry of each is served, e.g. {clashes[0][:80]!r}",
            QualevalWarning,
            stacklevel=3,
        )


def _keyed(sample: Any) -> str:
    prompt = sample.messages[-1].content
    asked = _norm(sample.question)
    return sample.question if asked and asked in _norm(prompt) else prompt


def _entry(row: Any, where: str) -> KeyEntry:
    if not isinstance(row, dict):
        raise InputError(f"{where}: not a JSON object")
    question = next((row[k] for k in ("question", "query", "input", "context", "prompt") if k in row), None)
    if isinstance(question, str) and isinstance(row.get("canonical_solution"), str):
        return KeyEntry(question=question, answer=question + row["canonical_solution"], verbatim="code")
    if isinstance(question, str) and isinstance(row.get("response"), str):
        return KeyEntry(question=question, answer=row["response"], verbatim="text")
    answer = next((row[k] for k in ("answer", "gold", "target") if k in row), None)
    if isinstance(question, str) and "tool_calls" in row:
        return KeyEntry(question=question, answer=str(answer or ""), calls=_row_calls(row["tool_calls"], where))
    if not isinstance(question, str) or answer is None:
        raise InputError(f"{where}: needs a question field and an answer field")
    choices = tuple(str(c) for c in row.get("choices") or ())
    if isinstance(answer, list):
        answer = answer[0] if answer else ""
    if isinstance(answer, int) and choices and 0 <= answer < len(choices):
        answer = choices[answer]
    text = str(answer)
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    return KeyEntry(question=question, answer=text, choices=choices)


def _row_calls(value: Any, where: str) -> tuple[KeyedCall, ...]:
    if not isinstance(value, list):
        raise InputError(f"{where}: tool_calls must be a list of {{name, arguments}} objects")
    calls = []
    for n, call in enumerate(value):
        name = call.get("name") if isinstance(call, dict) else None
        arguments = call.get("arguments", {}) if isinstance(call, dict) else None
        if not isinstance(name, str) or not name or not isinstance(arguments, dict):
            raise InputError(f"{where}: tool_calls[{n}] needs a 'name' (text) and 'arguments' (an object)")
        calls.append(KeyedCall(name, arguments))
    return tuple(calls)


_EXAMPLE: dict[str, Any] = {"string": "a", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
"""A value of each JSON Schema type, for an item that accepts any call."""


def served_calls(sample: Any) -> tuple[KeyedCall, ...] | None:
    """The calls a sample's expected answer is served as: for `call`, each expected call with the first acceptable
    value of each parameter (one that may be left out is, unless required); for `none`, no call; for `any`, the first
    offered tool with its required parameters, each an example of its schema type. None: not a tool-call item."""
    answer = getattr(sample, "tool_answer", None)
    if answer is None:
        return None
    if answer.trigger == "none":
        return ()
    tools = [t.get("function") or {} for t in getattr(sample, "tools", ()) if isinstance(t, dict)]
    if answer.trigger == "call":
        required = {str(t.get("name")): set((t.get("parameters") or {}).get("required") or ()) for t in tools}
        return tuple(_call(c.name, c.params, required.get(c.name, set())) for c in answer.calls)
    if not tools:
        return ()
    schema = tools[0].get("parameters") or {}
    props = schema.get("properties") or {}
    arguments = {p: _example(props.get(p) or {}) for p in schema.get("required") or ()}
    return (KeyedCall(str(tools[0].get("name", "")), arguments),)


def _call(name: str, params: Any, required: set[str]) -> KeyedCall:
    """Each parameter's first acceptable value. One that may be left out ("" among its values) is left out,
    unless the schema requires it: BFCL lists "" beside values of some required parameters (a call without them
    misses; the first other value is sent, or "" itself when it is the only one), and values of some parameters
    the schema does not have (a call with them misses)."""
    arguments = {}
    for param, values in params.items():
        if not values or ("" in values and param not in required):
            continue
        given = _given(values)
        arguments[param] = _served(given[0] if given else "")
    return KeyedCall(name, arguments)


def _given(values: Any) -> list[Any]:
    """A nested key's values a call can send ("" among them: the key may be left out, and is)."""
    return [v for v in values if v != ""] if isinstance(values, list | tuple) else [values]


def _served(value: Any) -> Any:
    """An acceptable value as a call sends it: BFCL writes an object's keys with lists of acceptable values of
    their own ({"windStrength": ["HIGH"]}), at any depth, so each key gets its first."""
    if isinstance(value, dict):
        return {k: _served(given[0]) for k, v in value.items() if (given := _given(v))}
    if isinstance(value, list):
        return [_served(v) for v in value]
    return value


def _example(prop: dict[str, Any]) -> Any:
    if prop.get("enum"):
        return prop["enum"][0]
    kind = prop.get("type", "string")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return _EXAMPLE.get(str(kind), "a")
