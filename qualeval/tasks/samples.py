"""Documents -> samples: render each document into chat messages with its gold answer and a stable id."""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qualeval.errors import InputError
from qualeval.models import Message, Sample
from qualeval.tasks.load import Task
from qualeval.tasks.sources import read_split
from qualeval.tasks.templates import Value, compile_value

__all__ = ["build_samples", "sample_from_doc"]

LETTERS = string.ascii_uppercase


@dataclass(frozen=True, slots=True)
class _Compiled:
    text: Value
    target: Value
    choice: Value | None
    fixed_choices: tuple[str, ...] | None
    aliases: Value | None
    own_id: Value | None
    meta: dict[str, Value]
    system: Value | None
    user: Value
    shot_answer: Value


def _compile(task: Task) -> _Compiled:
    spec, where = task.spec, task.where

    def key(name: str, source: str, text: bool = False) -> Value:
        return compile_value(source, f"{where}: field '{name}'", text=text)

    choice = spec.doc_to_choice
    return _Compiled(
        text=key("doc_to_text", spec.doc_to_text, text=True),
        target=key("doc_to_target", spec.doc_to_target),
        choice=key("doc_to_choice", choice) if isinstance(choice, str) else None,
        fixed_choices=tuple(choice) if isinstance(choice, tuple) else None,
        aliases=key("doc_to_aliases", spec.doc_to_aliases) if spec.doc_to_aliases else None,
        own_id=key("doc_to_id", spec.doc_to_id) if spec.doc_to_id else None,
        meta={name: key(f"doc_to_meta.{name}", src) for name, src in spec.doc_to_meta.items()},
        system=key("prompt.system", spec.prompt.system, text=True) if spec.prompt.system else None,
        user=key("prompt.user", spec.prompt.user, text=True),
        shot_answer=key("prompt.fewshot_answer", spec.prompt.fewshot_answer, text=True),
    )


def _as_list(value: Any, where: str, item: str) -> list[str]:
    if isinstance(value, str):
        raise InputError(f"{where}: field 'doc_to_choice': {item}: expected a list, got text '{value[:40]}'")
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{where}: field 'doc_to_choice': {item}: expected a list, got {type(value).__name__}")
    return [str(v) for v in value]


def _choice_index(target: Any, choices: list[str], where: str, item: str) -> int:
    if isinstance(target, bool):
        raise InputError(f"{where}: field 'doc_to_target': {item}: a choice target cannot be a boolean")
    if isinstance(target, int) or (isinstance(target, str) and target.strip().isdigit()):
        index = int(target)
    elif isinstance(target, str) and len(target.strip()) == 1 and target.strip().upper() in LETTERS:
        index = LETTERS.index(target.strip().upper())
    elif str(target) in choices:
        index = choices.index(str(target))
    else:
        raise InputError(
            f"{where}: field 'doc_to_target': {item}: '{target}' is neither an index, a letter nor one of the choices"
        )
    if not 0 <= index < len(choices):
        raise InputError(f"{where}: field 'doc_to_target': {item}: index {index} is outside the {len(choices)} choices")
    return index


def _gold(task: Task, target: Any, choices: list[str], item: str) -> str:
    kind = task.spec.answer.type
    if kind == "choice":
        index = _choice_index(target, choices, task.where, item)
        return LETTERS[index] if task.spec.answer.labels == "letters" else choices[index]
    if kind == "boolean":
        if isinstance(target, bool):
            return "yes" if target else "no"
        word = str(target).strip().lower()
        if word in task.spec.answer.true_words:
            return "yes"
        if word in task.spec.answer.false_words:
            return "no"
        raise InputError(f"{task.where}: field 'doc_to_target': {item}: '{target}' is not a yes/no answer")
    if target is None or (isinstance(target, str) and not target.strip()):
        raise InputError(f"{task.where}: field 'doc_to_target': {item}: the gold answer is empty")
    return str(target).strip()


class _Renderer:
    def __init__(self, task: Task) -> None:
        self.task = task
        self.c = _compile(task)

    def context(self, doc: dict[str, Any], subset: str | None, item: str) -> dict[str, Any]:
        c = self.c
        ctx: dict[str, Any] = {**doc, "doc": doc, "subset": subset, "instruction": self.task.spec.prompt.instruction}
        choices = (
            list(c.fixed_choices)
            if c.fixed_choices is not None
            else _as_list(c.choice(ctx, item), self.task.where, item)
            if c.choice
            else []
        )
        ctx["choices"] = choices
        ctx["letters"] = list(LETTERS[: len(choices)])
        ctx["text"] = c.text(ctx, item)
        return ctx

    def user(self, ctx: dict[str, Any], item: str) -> str:
        return self.c.user(ctx, item)

    def shots(self, docs: list[dict[str, Any]], subset: str | None, split: str) -> list[Message]:
        out: list[Message] = []
        for i, doc in enumerate(docs):
            item = f"few-shot document {i} of split '{split}'"
            ctx = self.context(doc, subset, item)
            target = self.c.target(ctx, item)
            ctx["target"] = (
                _gold(self.task, target, ctx["choices"], item)
                if self.task.spec.answer.type in ("choice", "boolean")
                else target
            )
            out += [
                Message(role="user", content=self.user(ctx, item)),
                Message(role="assistant", content=self.c.shot_answer(ctx, item)),
            ]
        return out


def build_samples(
    task: Task,
    *,
    data: Path | None = None,
    limit: int | None = None,
    limit_per_subset: int | None = None,
    num_fewshot: int | None = None,
) -> list[Sample]:
    """Every sample of the task (its selected subsets), rendered. `limit` caps the total, after subsets."""
    spec = task.spec
    renderer = _Renderer(task)
    shots_wanted = spec.num_fewshot if num_fewshot is None else num_fewshot
    if shots_wanted and not (spec.fewshot_split or spec.fewshot_samples):
        raise InputError(
            f"{task.where}: {shots_wanted} few-shot examples asked for, but the task has no "
            "fewshot_split or fewshot_samples"
        )
    out: list[Sample] = []
    for subset in task.subsets():
        docs = read_split(spec, spec.test_split, subset=subset, data=data, where=task.where)
        if limit_per_subset is not None and subset is not None:  # tasks without subsets ignore it
            docs = docs[:limit_per_subset]
        prefix: list[Message] = []
        if shots_wanted:
            split = spec.fewshot_split or "fewshot"
            pool = read_split(spec, split, subset=subset, data=data, where=task.where)
            prefix = renderer.shots(pool[:shots_wanted], subset, split)
        scope = f"{spec.name}/{subset}" if subset else spec.name
        for index, doc in enumerate(docs):
            item = f"document {index} of split '{spec.test_split}'" + (f" ({subset})" if subset else "")
            out.append(_sample(task, renderer, doc, index, subset, scope, prefix, item))
            if limit is not None and len(out) >= limit:
                return out
    return out


def _sample(
    task: Task,
    r: _Renderer,
    doc: dict[str, Any],
    index: int,
    subset: str | None,
    scope: str,
    prefix: list[Message],
    item: str,
) -> Sample:
    spec, c = task.spec, r.c
    ctx = r.context(doc, subset, item)
    gold = _gold(task, c.target(ctx, item), ctx["choices"], item)
    own = c.own_id(ctx, item) if c.own_id else None
    if own is None or str(own).strip() in ("", "None"):
        own = index
    aliases: list[str] = []
    if c.aliases:
        found = c.aliases(ctx, item)
        aliases = [str(a) for a in (found if isinstance(found, (list, tuple)) else [found]) if str(a).strip()]
    messages = [Message(role="system", content=c.system(ctx, item))] if c.system else []
    messages += [*prefix, Message(role="user", content=r.user(ctx, item))]
    meta = {name: value(ctx, item) for name, value in c.meta.items()}
    if subset is not None and spec.subsets is not None:
        meta[spec.subsets.label] = subset
        if spec.subsets.group_label:
            meta[spec.subsets.group_label] = next(
                (g for g, members in spec.subsets.groups.items() if subset in members), None
            )
    return Sample(
        id=f"{scope}/{spec.test_split}/{own}",
        task=task.name,
        messages=tuple(messages),
        gold=gold,
        choices=tuple(ctx["choices"]),
        aliases=tuple(dict.fromkeys(aliases)),
        meta=meta,
    )


def sample_from_doc(task: Task, doc: dict[str, Any], index: int | str, *, subset: str | None = None) -> Sample:
    """Render one document on its own (no few-shot prefix): offline scoring of logged documents."""
    spec = task.spec
    scope = f"{spec.name}/{subset}" if subset else spec.name
    item = f"document {index}"
    renderer = _Renderer(task)
    sample = _sample(task, renderer, doc, 0, subset, scope, [], item)
    return sample.model_copy(update={"id": f"{scope}/{spec.test_split}/{index}"})
