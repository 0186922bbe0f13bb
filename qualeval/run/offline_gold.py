"""The gold of a response line scored offline: the line's own `target`, read as the task reads its answers, or the
gold of the sample its id names; one that no answer could match is refused, naming the line.

A multiple-choice target is an option's letter or its text (qualeval.tasks.choices): `"Paris"` of
`["London", "Paris"]` is option B. A number is refused: whether a file's tool counts options from 0 or from 1 is
not known, and a wrong guess scores every answer against another option. A target that reads two ways (`"B"`
where option A's text is `B`) is read as the file's other targets are written, else refused.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from qualeval.errors import InputError
from qualeval.records import ToolsRecord
from qualeval.run.offline_formats import Line, Parsed
from qualeval.scoring import gold_is_number
from qualeval.tasks import LETTERS, Kinds, Sample, Task, choice_index, kinds_of, openai_name

__all__ = ["check_gold", "line_choices", "offered", "target_kinds", "target_sample"]


def line_choices(task: Task, parsed: Parsed) -> list[str]:
    """The line's options: its own `choices`, else the task's fixed ones (`doc_to_choice: [a, b, c]`)."""
    fixed = task.spec.doc_to_choice
    return list(parsed.line.choices or (fixed if isinstance(fixed, tuple) else ()))


def target_kinds(task: Task, parsed: list[Parsed]) -> Callable[[], Kinds]:
    """How the file's choice targets are written, read only when a target reads two ways."""
    return cache(lambda: kinds_of([(p.line.target, line_choices(task, p)) for p in parsed], indices=False))


def target_sample(task: Task, key: str, target: Any, choices: list[str]) -> Sample:
    """The sample of a line that carries its own target, before its options are known (--data may give them)."""
    gold = ("yes" if target else "no") if isinstance(target, bool) else str(target).strip()
    return Sample(id=key, task=task.name, messages=(), gold=gold, choices=tuple(choices))


def read_target(task: Task, sample: Sample, parsed: Parsed, others: Callable[[], Kinds]) -> Sample:
    """A multiple-choice line's target as the option it names, labelled as the task labels its golds."""
    target = parsed.line.target
    if task.spec.answer.type != "choice" or not sample.choices or target is None:
        return sample
    if isinstance(target, str) and not target.strip():
        return sample  # refused by check_gold, as any empty target
    choices = list(sample.choices)
    index = choice_index(target, choices, f"{parsed.where}: field 'target'", indices=False, others=others)
    gold = LETTERS[index] if task.spec.answer.labels == "letters" else choices[index]
    return sample.model_copy(update={"gold": gold})


def check_gold(task: Task, sample: Sample, parsed: Parsed) -> None:
    """A gold no answer can match is refused, naming the line: an empty target, one that is not a number in a task
    scored by number, or a sample's gold that names none of its options (a dataset read otherwise than the task
    expects) would score every answer to it wrong, unseen."""
    target, where = parsed.line.target, parsed.where
    if isinstance(target, str) and not target.strip():
        raise InputError(f"{where}: field 'target': empty, so no answer could be right: give the gold, or leave it out")
    what = (
        f"field 'target': '{target}'"
        if target is not None
        else f"id '{parsed.line.id}' names {sample.id}, whose gold (its doc_to_target) '{sample.gold}'"
    )
    if task.spec.scorer.kind == "choice":
        letters = LETTERS[: len(sample.choices)]
        texts = [c.strip().lower() for c in sample.choices]
        gold = sample.gold.strip()
        if task.spec.answer.labels == "letters" and not (len(gold) == 1 and gold.upper() in letters):
            raise InputError(
                f"{where}: {what} is not the letter of one of its {len(letters)} options (A-{letters[-1]})"
            )
        if task.spec.answer.labels == "text" and gold.lower() not in texts:
            raise InputError(f"{where}: {what} is not the text of one of its {len(texts)} options")
    if task.spec.scorer.kind != "numeric" or gold_is_number(sample.gold):
        return
    raise InputError(f"{where}: {what} is not a number, and task {task.name} is scored by number")


def offered(sample: Sample, line: Line, where: str) -> tuple[Sample, ToolsRecord | None]:
    """A tool-call item's sample with the tools the line says were offered, and the line's calls (a run record's
    own record of them, where the line is one). Tools that lack an expected call's tool are refused: the item
    could not be judged."""
    if sample.tool_answer is None:
        return sample, None
    update: dict[str, Any] = {}
    if line.tools is not None:
        names = [f.get("name") for t in line.tools if isinstance(f := t.get("function", t), dict)]
        for call in sample.tool_answer.calls:
            if openai_name(call.name) not in names:
                raise InputError(
                    f"{where}: field 'tools': expected call {call.name}: no tool named {openai_name(call.name)} is "
                    f"offered (the line offers {', '.join(str(n) for n in names) or 'none'})"
                )
        update["tools"] = line.tools
    if line.tool_choice is not None:
        update["tool_choice"] = line.tool_choice
    return sample.model_copy(update=update), line.came_back()
