"""A multi-turn task's items (BFCL v4 multi-turn): each document becomes a Sample whose `episode` holds its
turns, the tools offered from turn 0 and those held back until a later turn, the API classes it runs against
with their initial state, and the ground-truth calls per turn as published.

The documents are BFCL's multi-turn form, joined with their possible answers: `question` (a list of turns, each a
list of chat messages; a held-back turn's is empty), `involved_classes`, `initial_config`, `ground_truth` (per
turn, call strings) and, for miss_func, `missed_function` ({turn: [function names]}). Which file documents each
class's functions is the task's `environment`; the tools are those documents converted as single-turn BFCL's are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from qualeval.errors import InputError
from qualeval.records import EnvironmentSpec, EpisodeSpec
from qualeval.tasks.bfcl_calls import parse_call
from qualeval.tasks.bfcl_schema import openai_tools
from qualeval.tasks.joins import read_docs
from qualeval.tasks.prompts import warn_once
from qualeval.tasks.sample import Sample
from qualeval.tasks.task import Task
from qualeval.tasks.wheels import data_root, read_member
from qualeval.wire import Message

__all__ = ["build_episodes", "class_docs"]

Docs = dict[str, list[dict[str, Any]]]


def class_docs(task: Task, data: Path | None) -> Docs:
    """Each environment class's function documents (BFCL's form), read from the wheel (or --data)."""
    spec = task.spec
    assert spec.environment is not None and spec.wheel is not None
    root = data_root(spec.wheel, data)
    out: Docs = {}
    for name, file in spec.environment.docs.items():
        raw, label = read_member(root, spec.wheel, file)
        docs: list[dict[str, Any]] = []
        for number, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            try:
                doc = orjson.loads(line)
            except orjson.JSONDecodeError:
                raise InputError(f"{label}:{number}: not a JSON object (the documents of {name})") from None
            if not (isinstance(doc, dict) and isinstance(doc.get("name"), str)):
                raise InputError(f"{label}:{number}: a function document needs a name (the documents of {name})")
            docs.append(doc)
        if not docs:
            raise InputError(f"{label}: no function documents (the documents of {name})")
        out[name] = docs
    return out


class _Item:
    """One document read into an episode; every problem names the field and the item."""

    def __init__(self, where: str, environment: EnvironmentSpec, docs: Docs, doc: dict[str, Any]) -> None:
        self.where, self.environment, self.docs, self.doc = where, environment, docs, doc
        self.unoffered: list[str] = []
        """Ground-truth calls of a function not offered at their turn (published data: the classes run any of
        their methods, so such an item is won only by calling a function the model was not shown)."""

    def fail(self, field: str, problem: str) -> InputError:
        return InputError(f"{self.where}: field '{field}': {problem}")

    def classes(self) -> tuple[str, ...]:
        raw = self.doc.get("involved_classes")
        if not (isinstance(raw, list) and raw and all(isinstance(c, str) for c in raw)):
            raise self.fail("involved_classes", "expected a non-empty list of class names")
        if unknown := [c for c in raw if c not in self.environment.modules]:
            known = ", ".join(self.environment.modules)
            raise self.fail("involved_classes", f"{', '.join(unknown)} not in the task's environment ({known})")
        return tuple(raw)

    def held_back(self, turns: int) -> dict[int, list[str]]:
        raw = self.doc.get("missed_function") or {}
        if not isinstance(raw, dict):
            raise self.fail("missed_function", "expected {turn: [function names]}")
        out: dict[int, list[str]] = {}
        for turn, names in raw.items():
            if not (str(turn).isdigit() and int(turn) < turns):
                raise self.fail("missed_function", f"turn '{turn}' is not one of the item's {turns} turns")
            if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
                raise self.fail("missed_function", f"turn {turn}: expected a list of function names")
            out[int(turn)] = names
        return out

    def turns(self, held: dict[int, list[str]]) -> tuple[tuple[dict[str, str], ...], ...]:
        raw = self.doc.get("question")
        if not (isinstance(raw, list) and raw and all(isinstance(t, list) for t in raw)):
            raise self.fail("question", "expected a non-empty list of turns, each a list of chat messages")
        out: list[tuple[dict[str, str], ...]] = []
        for index, turn in enumerate(raw):
            if index in held:
                if turn:  # BFCL's held-back turn carries no message of its own: its prompt is sent instead
                    raise self.fail("question", f"turn {index} holds functions back, so it must have no message")
                out.append(({"role": "user", "content": self.environment.added_prompt},))
                continue
            if not turn:
                raise self.fail("question", f"turn {index} has no message")
            for message in turn:
                ok = isinstance(message, dict) and message.get("role") in ("system", "user", "assistant")
                if not (ok and isinstance(message.get("content"), str)):
                    raise self.fail("question", f"turn {index}: a message must be {{role, content: text}}")
            out.append(tuple({"role": str(m["role"]), "content": str(m["content"])} for m in turn))
        return tuple(out)

    def tools(self, classes: tuple[str, ...], held: dict[int, list[str]]) -> tuple[list[Any], dict[int, list[Any]]]:
        """The function documents offered from turn 0, and those held back, by the turn that adds them."""
        offered = [doc for name in classes for doc in self.docs[name]]
        added: dict[int, list[Any]] = {}
        for turn in sorted(held):
            for name in held[turn]:
                doc = next((d for d in offered if d["name"] == name), None)
                if doc is None:
                    raise self.fail("missed_function", f"'{name}' is not a function of {', '.join(classes)}")
                offered.remove(doc)
                added.setdefault(turn, []).append(doc)
        return offered, added

    def expected(self, turns: int, names_at: list[set[str]]) -> tuple[tuple[str, ...], ...]:
        raw = self.doc.get("ground_truth")
        if not (isinstance(raw, list) and all(isinstance(t, list) for t in raw)):
            raise self.fail("ground_truth", "expected a list of turns, each a list of call strings")
        if len(raw) != turns:
            raise self.fail("ground_truth", f"{len(raw)} turns where the question has {turns}")
        every = {d["name"] for docs in self.docs.values() for d in docs}
        for index, calls in enumerate(raw):
            for call in calls:
                if not isinstance(call, str):
                    raise self.fail("ground_truth", f"turn {index}: a call must be a string")
                name = parse_call(call, f"{self.where}: field 'ground_truth': turn {index}")[0]
                if name not in every:
                    raise self.fail("ground_truth", f"turn {index}: {name} is not a function of the environment")
                if name not in names_at[index]:
                    self.unoffered.append(f"{self.doc.get('id')}: turn {index} calls {name}")
        return tuple(tuple(calls) for calls in raw)

    def config(self) -> dict[str, Any]:
        raw = self.doc.get("initial_config") or {}
        if not isinstance(raw, dict):
            raise self.fail("initial_config", "expected {class name: its initial state}")
        return raw


def _warn_unoffered(task: Task, found: list[str]) -> None:
    if found:
        warn_once(
            f"unoffered:{task.name}",
            f"{task.where}: {len(found)} item(s) expect a call of a function not yet offered at that turn (the "
            f"data's, kept as published; the call still runs): {'; '.join(found[:3])}"
            + (" ..." if len(found) > 3 else ""),
        )


def _episode(item: _Item, long_context: bool, max_steps: int) -> EpisodeSpec:
    classes = item.classes()
    questions = item.doc.get("question")
    held = item.held_back(len(questions) if isinstance(questions, list) else 0)
    turns = item.turns(held)
    offered, added = item.tools(classes, held)
    names, names_at = {d["name"] for d in offered}, []
    for index in range(len(turns)):
        names |= {d["name"] for d in added.get(index, [])}
        names_at.append(set(names))
    return EpisodeSpec(
        turns=turns,
        tools=openai_tools(offered),
        added={turn: openai_tools(docs) for turn, docs in added.items()},
        classes=classes,
        initial_config=item.config(),
        long_context=long_context,
        expected=item.expected(len(turns), names_at),
        max_steps=max_steps,
    )


def _gold(episode: EpisodeSpec) -> str:
    calls = sum(len(t) for t in episode.expected)
    return f"{len(episode.turns)} turns, {calls} expected calls (BFCL's state and execution checks)"


def _sample(task: Task, subset: str | None, index: int, doc: dict[str, Any], docs: Docs, notes: list[str]) -> Sample:
    spec, environment = task.spec, task.spec.environment
    assert environment is not None
    own = doc.get(spec.doc_to_id) if spec.doc_to_id else None
    own = index if own in (None, "") else own
    item = _Item(f"{task.where}: document {index} of {subset or spec.test_split} (id '{own}')", environment, docs, doc)
    episode = _episode(item, subset in environment.long_context, environment.max_steps)
    notes.extend(item.unoffered)
    scope = f"{spec.name}/{subset}" if subset else spec.name
    first = episode.turns[0]
    return Sample(
        id=f"{scope}/{spec.test_split}/{own}",
        task=task.name,
        messages=tuple(Message.model_validate(m) for m in first),
        question=next((m["content"] for m in reversed(first) if m["role"] == "user"), ""),
        gold=_gold(episode),
        meta={spec.subsets.label: subset} if spec.subsets is not None and subset is not None else {},
        tools=episode.tools,
        tool_choice=str(spec.tool_choice) if spec.tool_choice is not None else None,
        episode=episode,
    )


def build_episodes(task: Task, *, data: Path | None, limit: int | None, limit_per_subset: int | None) -> list[Sample]:
    """Every item of the task's selected subsets as a Sample with its episode; `limit` caps the total."""
    spec = task.spec
    docs_by_class = class_docs(task, data)
    out: list[Sample] = []
    notes: list[str] = []
    for subset in task.subsets():
        docs = read_docs(spec, spec.test_split, subset=subset, data=data, where=task.where)
        for index, doc in enumerate(docs[:limit_per_subset] if limit_per_subset is not None else docs):
            out.append(_sample(task, subset, index, doc, docs_by_class, notes))
            if limit is not None and len(out) >= limit:
                _warn_unoffered(task, notes)
                return out
    _warn_unoffered(task, notes)
    return out
