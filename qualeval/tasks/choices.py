"""Which option a multiple-choice target names: its index, its letter, or its text.

A number (an integer, lm-eval's convention) is the option's index from 0; text is an option's letter (`B`), an
index written as digits (`1`, as a CSV holds it), or an option's own text (`Paris`). Text that reads two ways
naming two options (`B` where option A's text is `B`; `1` where option C's text is `1`) is read as the task's other
targets are written: a dataset writes its targets one way, so letters (or digits) elsewhere make it a letter,
option texts elsewhere make it a text. Where nothing says which, it is refused: a guess would score every answer
to it against another option, unseen.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

from qualeval.errors import InputError

__all__ = ["LETTERS", "Kinds", "choice_index", "kinds_of"]

LETTERS = string.ascii_uppercase
Kinds = Counter[Literal["label", "text"]]
"""How many of a task's text targets read one way only, as a label (letter or index) or as an option's text."""


def _readings(target: Any, choices: list[str], indices: bool) -> dict[str, int]:
    """Each way `target` names an option, and that option's index: `index`, `letter`, `text`."""
    if isinstance(target, int) and not isinstance(target, bool):
        return {"index": target} if indices and 0 <= target < len(choices) else {}
    if not isinstance(target, str):
        return {}
    said, out = target.strip(), {}
    if indices and said.isascii() and said.isdigit() and int(said) < len(choices):
        out["index"] = int(said)
    if len(said) == 1 and said.upper() in LETTERS[: len(choices)]:
        out["letter"] = LETTERS.index(said.upper())
    texts = [c.strip() for c in choices]
    if said and said in texts:
        out["text"] = texts.index(said)
    return out


def kinds_of(targets: list[tuple[Any, list[str]]], indices: bool = True) -> Kinds:
    """How the text targets among `targets` (each with its options) read where they read one way only."""
    kinds: Kinds = Counter()
    for target, choices in targets:
        found = _readings(target, choices, indices) if isinstance(target, str) else {}
        if len(found) == 1:  # none, two options, or two ways to the same option: none of them says how
            kinds["text" if "text" in found else "label"] += 1
    return kinds


def choice_index(
    target: Any,
    choices: list[str],
    where: str,
    *,
    indices: bool = True,
    others: Callable[[], Kinds] | None = None,
) -> int:
    """The index of the option `target` names. `where` opens every message (file, field, item); `indices`: a
    number is an index (a task's doc_to_target), else refused (a score line's, whose counting from 0 or 1 is not
    known); `others`: how the task's other targets read, asked only when this one reads two ways."""
    if isinstance(target, bool):
        raise InputError(f"{where}: a choice target cannot be a boolean ({target})")
    shown, last = f"'{target}'" if isinstance(target, str) else str(target), LETTERS[min(len(choices), 26) - 1]
    expected = f"an option's letter (A-{last}) or its text" if choices else "an option"
    found = _readings(target, choices, indices)
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    if not found:
        hint = _expected(target, choices, indices, expected)
        raise InputError(f"{where}: {shown} names none of the {len(choices)} options: {hint}")
    kinds = others() if others is not None else Counter()
    label = next(k for k in found if k != "text")
    if kinds["label"] and not kinds["text"]:
        return found[label]
    if kinds["text"] and not kinds["label"]:
        return found["text"]
    told = (
        f"the other targets are written both ways ({kinds['label']} as labels, {kinds['text']} as option texts)"
        if kinds["label"]
        else "no other target says which way they are written"
    )
    raise InputError(
        f"{where}: {shown} is both the {label} of option {LETTERS[found[label]]} and the text of option "
        f"{LETTERS[found['text']]}, and {told}: which option it names is not known"
    )


def _expected(target: Any, choices: list[str], indices: bool, expected: str) -> str:
    """What a target that names no option should have been, said for the shape it has."""
    said = str(target).strip()
    if not (said.isascii() and said.isdigit()):
        return f"expected {expected}"
    if not indices:
        return f"a number is not read here (whether it counts from 0 or 1 is not known): give {expected}"
    texts = [c.strip() for c in choices]
    hint = f"a number is an option's index, from 0 to {len(choices) - 1}; else give {expected}"
    if said in texts:  # an integer 7 where option B's text is "7"
        hint += f" (option {LETTERS[texts.index(said)]}'s text is {said}: quote it to name that option)"
    return hint
