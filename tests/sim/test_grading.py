"""The reference server grades with its own code: it checks the product's judge path, so it shares none of the
product's scoring, yet reaches the product's grades on the easy cases it is meant for."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import qualeval.sim
from qualeval.scoring.extract import normalize, token_f1, words_to_digits
from qualeval.scoring.modeljudge import GRADER_MARK, grade_prompt
from qualeval.sim.grading import GRADER_LINE, grade_reply
from qualeval.tasks import Sample
from qualeval.wire.models import Message


def _imported(path: Path) -> set[str]:
    """Every module a file imports, at any depth (lazy and typing-only imports included); `from a import b`
    counts as a.b too, since b may be a module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


_CHECKED = ("qualeval.scoring", "qualeval.agent")
"""What the reference server checks: the product's scoring and its agent's loop (issue 34: the server must not
grade an episode, nor replay one, with the code it checks)."""


def test_no_module_of_the_reference_server_imports_the_scoring_or_the_agent_it_checks() -> None:
    root = Path(qualeval.sim.__file__).parent
    sharing = {
        f"{path.relative_to(root)}: {name}"
        for path in root.rglob("*.py")
        for name in _imported(path)
        if any(name == checked or name.startswith(checked + ".") for checked in _CHECKED)
    }
    assert not sharing, sharing


def test_the_server_knows_the_products_grader_prompt_by_its_first_line() -> None:
    assert GRADER_LINE == GRADER_MARK


def _sample(gold: str, *aliases: str) -> Sample:
    return Sample(id="q/1", task="t", messages=(Message(role="user", content="?"),), gold=gold, aliases=aliases)


@pytest.mark.parametrize(
    ("gold", "aliases", "answer", "grade"),
    [
        ("21 guns", (), "Twenty one guns", "CORRECT"),
        ("Zoë Saldaña", (), "zoe saldana", "CORRECT"),
        ("The Eiffel Tower", (), "eiffel tower!", "CORRECT"),
        ("Leonardo da Vinci", (), "da Vinci, Leonardo", "CORRECT"),
        ("Rembrandt", ("Rembrandt van Rijn",), "Johannes Vermeer", "INCORRECT"),
        ("Paris", ("City of Light",), "the city of light", "CORRECT"),
        ("Paris", (), "I'm not sure, maybe Paris", "NOT_ATTEMPTED"),
    ],
)
def test_the_servers_grades_agree_with_the_products_normaliser_on_easy_cases(
    gold: str, aliases: tuple[str, ...], answer: str, grade: str
) -> None:
    assert grade_reply(grade_prompt(_sample(gold, *aliases), answer)) == grade
    if grade != "NOT_ATTEMPTED":  # the product's own reading of the same pair, kept apart from the server's

        def form(text: str) -> str:
            return words_to_digits(normalize(text))

        best = max(token_f1(form(answer), form(g)) for g in (gold, *aliases))
        assert (best >= 0.6) == (grade == "CORRECT")


def test_the_server_reads_a_hyphenated_number_word_as_its_number() -> None:
    assert grade_reply(grade_prompt(_sample("21"), "Twenty-one")) == "CORRECT"
    assert grade_reply(grade_prompt(_sample("21"), "Thirty-one")) == "INCORRECT"
