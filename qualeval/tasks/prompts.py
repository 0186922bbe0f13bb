"""Default prompts where a task file leaves them out, and the warnings about prompts that hide the question.

A choice task whose user template never lists the options would send the question alone and then expect (or
constrain to) letters the model never saw: such a task gets a template that lists them and says how to answer.
"""

from __future__ import annotations

import warnings

from qualeval.errors import QualevalWarning
from qualeval.records import TaskSpec

__all__ = ["CHOICE_USER", "instruction_of", "user_template_of", "warn_once"]

CHOICE_USER = (
    "{{ text }}\n\n{% for label in letters %}{{ label }}. {{ options[loop.index0] }}\n{% endfor %}"
    "{% if instruction %}\n{{ instruction }}{% endif %}"
)
"""A choice question with its options lettered A, B, C..., then the instruction."""

_CHOICE_TEXT_USER = (
    "{{ text }}\n\nOptions:\n{% for option in options %}- {{ option }}\n{% endfor %}"
    "{% if instruction %}\n{{ instruction }}{% endif %}"
)

_LETTER_INSTRUCTION = (
    'Think it through, then give your final answer on the last line as "Answer: X", where X is the letter of '
    "your choice."
)
_TEXT_INSTRUCTION = (
    'Think it through, then give your final answer on the last line as "Answer: <option>", with the option '
    "written exactly as above."
)

_warned: set[str] = set()


def user_template_of(spec: TaskSpec) -> str:
    """The task's own user template, or, for a choice task that gives none, one that lists the options."""
    if spec.answer.type != "choice" or "user" in spec.prompt.model_fields_set:
        return spec.prompt.user
    return CHOICE_USER if spec.answer.labels == "letters" else _CHOICE_TEXT_USER


def instruction_of(spec: TaskSpec) -> str:
    """The task's answer instruction, or, for a choice task that gives none, how to state the choice."""
    if spec.prompt.instruction or spec.answer.type != "choice" or "user" in spec.prompt.model_fields_set:
        return spec.prompt.instruction
    return _LETTER_INSTRUCTION if spec.answer.labels == "letters" else _TEXT_INSTRUCTION


def warn_once(key: str, message: str) -> None:
    """One warning per key and process: a problem of a task, not of each of its items."""
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, QualevalWarning, stacklevel=2)
