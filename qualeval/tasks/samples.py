"""Documents -> samples: render each document into chat messages with its gold answer and a stable id."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Undefined

from qualeval.errors import InputError
from qualeval.tasks.choices import LETTERS, Kinds, choice_index, kinds_of
from qualeval.tasks.episodes import build_episodes
from qualeval.tasks.joins import read_docs
from qualeval.tasks.prompts import instruction_of, user_template_of, warn_once
from qualeval.tasks.sample import Sample
from qualeval.tasks.sources import source_label
from qualeval.tasks.task import Doc, Task
from qualeval.tasks.templates import Value, compile_value, function_value
from qualeval.tasks.toolitems import compile_tool_keys, warn_unwinnable
from qualeval.wire import Message

__all__ = ["build_samples", "sample_from_doc"]


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
    shot_text: Value | None
    shot_target: Value | None


def _compile(task: Task) -> _Compiled:
    spec, where = task.spec, task.where
    code = task.code.keys if task.code else {}
    labels = task.code.labels if task.code else {}

    def key(name: str, source: str, text: bool = False) -> Value:
        if name in code:
            return function_value(code[name], f"lm-eval's {labels.get(name, name)}", f"{where}: field '{name}'")
        return compile_value(source, f"{where}: field '{name}'", text=text)

    def shot(name: str, source: str | None, text: bool = False) -> Value | None:
        return key(name, source or "", text) if source is not None or name in code else None

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
        user=key("prompt.user", user_template_of(spec), text=True),
        shot_answer=key("prompt.fewshot_answer", spec.prompt.fewshot_answer, text=True),
        shot_text=shot("fewshot_doc_to_text", spec.fewshot_doc_to_text, text=True),
        shot_target=shot("fewshot_doc_to_target", spec.fewshot_doc_to_target),
    )


_OURS = frozenset({"doc", "subset", "instruction", "choices", "options", "letters", "text", "shots", "target"})
"""Names qualeval gives templates besides the document's fields."""


def _check_fields(task: Task, renderer: _Renderer, doc: dict[str, Any], source: str) -> None:
    """Every name the doc_to_* keys read is a column of a CSV/TSV file read by its header row: a file without one
    (and no `columns:`) is one line naming the file and the field, not a template error."""
    if task.spec.columns or not source.lower().endswith((".csv", ".tsv")):
        return  # other documents carry their field names; a missing one is reported per item
    c = renderer.c
    keys = {"doc_to_text": c.text, "doc_to_target": c.target, "doc_to_choice": c.choice, "doc_to_aliases": c.aliases}
    keys.update({f"doc_to_meta.{k}": v for k, v in c.meta.items()})
    for key, value in keys.items():
        missing = sorted(n for n in (value.names if value else ()) if n not in doc and n not in _OURS)
        if missing:
            shown = ", ".join(list(map(str, doc))[:6])
            raise InputError(
                f"{source}: no field '{missing[0]}' (read by {task.where} {key}); the header row gives: {shown}; "
                "a file without a header row needs `columns:` in the task"
            )


def _as_list(value: Any, where: str, item: str) -> list[str]:
    undefined = next((v for v in value if isinstance(v, Undefined)), None) if isinstance(value, list) else None
    if undefined is not None:
        raise InputError(f"{where}: field 'doc_to_choice': {item}: {undefined._undefined_message}")
    if isinstance(value, str):
        raise InputError(f"{where}: field 'doc_to_choice': {item}: expected a list, got text '{value[:40]}'")
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{where}: field 'doc_to_choice': {item}: expected a list, got {type(value).__name__}")
    return [str(v) for v in value]


def _gold(task: Task, target: Any, choices: list[str], item: str, others: Callable[[], Kinds] | None = None) -> str:
    """The sample's gold from its target: for a choice task the option it names (qualeval.tasks.choices; `others`
    tells how the task's other targets are written), as the task's labels give it."""
    kind = task.spec.answer.type
    if kind == "choice":
        index = choice_index(target, choices, f"{task.where}: field 'doc_to_target': {item}", others=others)
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
    text = _cleaned(task, target)
    if not text:
        raise InputError(f"{task.where}: field 'doc_to_target': {item}: the gold answer is empty")
    return text


def _cleaned(task: Task, target: Any) -> str:
    text = "" if target is None else str(target)
    for pattern in task.spec.scorer.ignore:  # what lm-eval's regexes_to_ignore leave of a worked solution
        text = re.sub(pattern, "", text)
    return text.strip()


def _several(task: Task, target: Any, where: str) -> tuple[Any, list[str]]:
    """A target that is a list (lm-eval's several accepted answers, TriviaQA's aliases): the first is the gold,
    every one is accepted."""
    if not isinstance(target, (list, tuple)) or task.spec.answer.type == "choice":
        return target, []
    if not target:
        raise InputError(f"{where}: the gold answer is empty (an empty list)")
    return target[0], [text for t in target if (text := _cleaned(task, t))]


@dataclass(slots=True)
class _Scopes:
    """What templates see. `fields` is for the doc_to_* keys: the document's own fields win over qualeval's names
    (ARC's `choices` is a mapping of labels and texts, not a list). `prompt` is for the prompt templates:
    qualeval's rendered values under their names, every document field also as `doc.<name>`."""

    fields: dict[str, Any]
    prompt: dict[str, Any]
    options: list[str]


class _Renderer:
    def __init__(self, task: Task) -> None:
        self.task = task
        self.c = _compile(task)
        self.tools = compile_tool_keys(task)
        self.instruction = instruction_of(task.spec)

    def fields(self, doc: dict[str, Any], subset: str | None, item: str) -> tuple[dict[str, Any], list[str]]:
        """What the doc_to_* keys see, and the document's options."""
        c = self.c
        base: dict[str, Any] = {"subset": subset, "instruction": self.instruction, **doc, "doc": doc}
        options = (
            list(c.fixed_choices)
            if c.fixed_choices is not None
            else _as_list(c.choice(base, item), self.task.where, item)
            if c.choice
            else []
        )
        ours = {"choices": options, "options": options, "letters": list(LETTERS[: len(options)])}
        return {**ours, **base}, options

    def scopes(self, doc: dict[str, Any], subset: str | None, item: str, text: Value | None = None) -> _Scopes:
        fields, options = self.fields(doc, subset, item)
        ours = {"choices": options, "options": options, "letters": list(LETTERS[: len(options)])}
        prompt = {**fields, **ours, "instruction": self.instruction, "text": (text or self.c.text)(fields, item)}
        return _Scopes(fields, prompt, options)

    def kinds(self, docs: list[dict[str, Any]], subset: str | None, split: str) -> Callable[[], Kinds]:
        """How the choice targets of `docs` are written (qualeval.tasks.choices), read only when asked: a target
        that reads two ways is read as the others are."""

        def read() -> Kinds:
            pairs = []
            for index, doc in enumerate(docs):
                fields, options = self.fields(doc, subset, f"document {index} of split '{split}'")
                pairs.append((self.c.target(fields, f"document {index} of split '{split}'"), options))
            return kinds_of(pairs)

        return cache(read)

    def shot(
        self, doc: dict[str, Any], subset: str | None, item: str, others: Callable[[], Kinds] | None = None
    ) -> dict[str, Any]:
        """A few-shot document's prompt scope, with its `target` (the gold label for choice and yes/no tasks)."""
        scopes = self.scopes(doc, subset, item, self.c.shot_text)
        target, _ = _several(self.task, (self.c.shot_target or self.c.target)(scopes.fields, item), self.task.where)
        if self.task.spec.answer.type in ("choice", "boolean"):
            target = _gold(self.task, target, scopes.options, item, others)
        return {**scopes.prompt, "target": target}

    def turns(self, shots: list[dict[str, Any]], item: str) -> list[Message]:
        out: list[Message] = []
        for ctx in shots:
            out += [
                Message(role="user", content=self.c.user(ctx, item)),
                Message(role="assistant", content=self.c.shot_answer(ctx, item)),
            ]
        return out


@dataclass(slots=True)
class _Shots:
    """The few-shot examples of each question: the first N of the pool, or of its part that shares the question's
    `fewshot_by` value; rendered once per value."""

    renderer: _Renderer
    pool: list[dict[str, Any]]
    wanted: int
    subset: str | None
    split: str
    cache: dict[Any, tuple[list[Message], list[dict[str, Any]]]] = field(default_factory=dict)

    def of(self, doc: dict[str, Any], item: str) -> tuple[list[Message], list[dict[str, Any]]]:
        if not self.wanted:
            return [], []
        spec = self.renderer.task.spec
        by = spec.fewshot_by
        if by is not None and by not in doc:
            raise InputError(f"{self.renderer.task.where}: field 'fewshot_by': {item} has no field '{by}'")
        value = doc[by] if by is not None else None
        if value not in self.cache:
            chosen = [d for d in self.pool if by is None or d.get(by) == value][: self.wanted]
            if len(chosen) < self.wanted:
                warn_once(
                    f"shots:{spec.name}:{value}",
                    f"{self.renderer.task.where}: only {len(chosen)} of {self.wanted} few-shot examples in split "
                    f"'{self.split}'" + (f" for {by} '{value}'" if by else ""),
                )
            others = self.renderer.kinds(self.pool, self.subset, self.split)
            shots = [
                self.renderer.shot(d, self.subset, f"few-shot document {i} of split '{self.split}'", others)
                for i, d in enumerate(chosen)
            ]
            self.cache[value] = (self.renderer.turns(shots, item), []) if spec.fewshot_turns else ([], shots)
        return self.cache[value]


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
    if spec.environment is not None:  # multi-turn: each item is an episode
        return build_episodes(task, data=data, limit=limit, limit_per_subset=limit_per_subset)
    renderer = _Renderer(task)
    shots_wanted = spec.num_fewshot if num_fewshot is None else num_fewshot
    if shots_wanted and not (spec.fewshot_split or spec.fewshot_samples):
        raise InputError(
            f"{task.where}: {shots_wanted} few-shot examples asked for, but the task has no "
            "fewshot_split or fewshot_samples"
        )
    out: list[Sample] = []
    seen: dict[str, str] = {}
    for subset in task.subsets():
        docs = _documents(task, spec.test_split, subset, data)
        source = source_label(spec, spec.test_split, subset, data)
        _check_fields(task, renderer, docs[0], source)
        if limit_per_subset is not None and subset is not None:  # tasks without subsets ignore it
            docs = docs[:limit_per_subset]
        split = spec.fewshot_split or "fewshot"
        pool = _shot_pool(task, subset, data) if shots_wanted else []
        shots = _Shots(renderer, pool, shots_wanted, subset, split)
        scope = f"{spec.name}/{subset}" if subset else spec.name
        others = renderer.kinds(docs, subset, spec.test_split)
        for index, doc in enumerate(docs):
            item = f"document {index} of split '{spec.test_split}'" + (f" ({subset})" if subset else "")
            out.append(_sample(task, renderer, doc, index, subset, scope, shots.of(doc, item), item, others))
            _check_unique(task, out[-1].id, item, seen, source if data or spec.dataset_path else None)
            if limit is not None and len(out) >= limit:
                warn_unwinnable(renderer.tools)
                return out
    warn_unwinnable(renderer.tools)
    return out


def _check_unique(task: Task, sample_id: str, item: str, seen: dict[str, str], source: str | None) -> None:
    """Two documents under one id would be one item: a run would skip the second as done, and every record,
    comparison and rescore would pair it with the first one's question."""
    first = seen.setdefault(sample_id, item)
    if first != item:
        key = "doc_to_id" if task.spec.doc_to_id else "samples"
        raise InputError(
            f"{task.where}: field '{key}': {first} and {item}"
            + (f" of {source}" if source else "")
            + f" have the same id '{sample_id}': give each document its own id"
        )


def _documents(task: Task, split: str, subset: str | None, data: Path | None) -> list[Doc]:
    """A split's documents, through the task's process_docs where it has one (lm-eval applies it to every split)."""
    docs = read_docs(task.spec, split, subset=subset, data=data, where=task.where)
    process = task.code.process_docs if task.code else None
    if process is None:
        return docs
    docs = process(docs)
    if not docs:
        raise InputError(f"{task.where}: field 'process_docs': no documents of split '{split}' are left")
    return docs


def _shot_pool(task: Task, subset: str | None, data: Path | None) -> list[Doc]:
    spec = task.spec
    if spec.fewshot_samples and spec.fewshot_split is None:  # inline examples, used as written
        return [dict(d) for d in spec.fewshot_samples]
    return _documents(task, spec.fewshot_split or "fewshot", subset, data)


def _sample(
    task: Task,
    r: _Renderer,
    doc: dict[str, Any],
    index: int,
    subset: str | None,
    scope: str,
    shots: tuple[list[Message], list[dict[str, Any]]],
    item: str,
    others: Callable[[], Kinds] | None = None,
) -> Sample:
    spec, c = task.spec, r.c
    at = r.scopes(doc, subset, item)
    own = c.own_id(at.fields, item) if c.own_id else None
    named = own is not None and str(own).strip() not in ("", "None")
    own = own if named else index
    tool = r.tools(at.fields, f"{item}, id '{own}'" if named else item) if r.tools else None
    if tool is not None and tool.answer is not None:  # the expected calls are the gold
        gold, aliases = tool.gold, list[str]()
    else:
        target, aliases = _several(task, c.target(at.fields, item), f"{task.where}: field 'doc_to_target': {item}")
        gold = _gold(task, target, at.options, item, others)
    if c.aliases:
        found = c.aliases(at.fields, item)
        aliases += [str(a) for a in (found if isinstance(found, (list, tuple)) else [found]) if str(a).strip()]
    prefix, inline = shots
    prompt = {**at.prompt, "shots": inline}
    user = c.user(prompt, item)
    if at.options and not all(o.strip() in user for o in at.options):
        warn_once(
            f"choices:{task.name}",
            f"{task.where}: the prompt of {item} does not show all its choices, so the model cannot pick among "
            "them: list `options` in prompt.user, or leave prompt.user out for qualeval's default",
        )
    messages = [Message(role="system", content=c.system(prompt, item))] if c.system else []
    messages += [*prefix, Message(role="user", content=user)]
    meta = {name: value(at.fields, item) for name, value in c.meta.items()}
    if subset is not None and spec.subsets is not None:
        meta[spec.subsets.label] = subset
        if spec.subsets.group_label:
            meta[spec.subsets.group_label] = next(
                (g for g, members in spec.subsets.groups.items() if subset in members), None
            )
    fields = {"messages": tuple(messages), "question": str(at.prompt["text"]), **(tool.overrides if tool else {})}
    return Sample(
        id=f"{scope}/{spec.test_split}/{own}",
        task=task.name,
        gold=gold,
        choices=tuple(at.options),
        aliases=tuple(dict.fromkeys(aliases)),
        meta=meta,
        **fields,
    )


def sample_from_doc(
    task: Task, doc: dict[str, Any], index: int | str, *, subset: str | None = None, docs: list[Doc] | None = None
) -> Sample:
    """Render one document on its own (no few-shot prefix): offline scoring of logged documents. `docs`: the
    other logged documents, which say how a choice target that reads two ways is written."""
    spec = task.spec
    scope = f"{spec.name}/{subset}" if subset else spec.name
    item = f"document {index}"
    renderer = _Renderer(task)
    others = renderer.kinds(docs or [doc], subset, "the log")
    sample = _sample(task, renderer, doc, 0, subset, scope, ([], []), item, others)
    return sample.model_copy(update={"id": f"{scope}/{spec.test_split}/{index}"})
