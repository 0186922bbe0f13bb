"""A number the budget cut is no answer: a response cut off by `max_tokens` that ends on digits may have been cut
inside the number ("... the total is 12" where the next token was "5")."""

from __future__ import annotations

import pytest

from qualeval.reasoning.completion import Completion
from qualeval.scoring.verdict import decide
from qualeval.tasks import load_task
from qualeval.tasks.sample import Sample
from qualeval.wire.models import Message

TASK = load_task("word_problems")
SAMPLE = Sample(
    id="w/0", task="w", messages=(Message(role="user", content="How many apples are there in all?"),), gold="12"
)


@pytest.mark.parametrize(
    "content",
    [
        "Counting them all, the total is 12",
        "Counting them all.\nAnswer: 12",
        "Counting them all, the total is 12.",  # the next token may have been "5": 12.5
        '{"reasoning": "counting them all", "answer": "12',
    ],
    ids=["sentence", "anchor", "decimal-point", "json"],
)
def test_a_number_the_budget_cut_is_not_read(content: str) -> None:
    cut = decide(TASK, SAMPLE, Completion(content=content, status="answer_truncated"))
    assert (cut.extraction.value, cut.score.correct) == (None, False)
    whole = decide(TASK, SAMPLE, Completion(content=content, status="ok"))  # the model stopped: the number is whole
    assert (whole.extraction.value, whole.score.correct) == ("12", True)


@pytest.mark.parametrize(
    "content",
    [
        "Answer: 12\nLet me double-check this by counting",  # the number closed, the working went on
        "The total is 12 apples, and",
        "Answer: 12\n",
        "Answer: 12\nChecking: 3 * 4 = 12",  # the answer stated before the cut line stands
    ],
)
def test_a_number_the_response_closed_before_the_cut_is_read(content: str) -> None:
    verdict = decide(TASK, SAMPLE, Completion(content=content, status="answer_truncated"))
    assert (verdict.extraction.value, verdict.score.correct) == ("12", True)
