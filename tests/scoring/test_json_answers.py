"""The `json` rung reads only an answer the content gives in JSON, and a JSON object of working gives no answer."""

from __future__ import annotations

import pytest

from qualeval.records import AnswerSpec
from qualeval.scoring.extract import extract

NUMBER = AnswerSpec(type="number")
CHOICE = AnswerSpec(type="choice")
TEXT = AnswerSpec(type="text")


@pytest.mark.parametrize(
    ("spec", "content", "want"),
    [
        (NUMBER, "42", "42"),
        (NUMBER, "  -7 ", "-7"),
        (CHOICE, '"B"', "B"),
        (TEXT, '"Paris"', "Paris"),
    ],
)
def test_a_bare_value_is_read_but_not_reported_as_json(spec: AnswerSpec, content: str, want: str) -> None:
    """A reply that is only `42` or `"B"` is a plain answer: the rung says where it came from, and it was no JSON
    object."""
    got = extract(content, spec, ("x", "y", "z"))
    assert (got.value, got.rung) == (want, "last")


@pytest.mark.parametrize(
    "content",
    [
        '{"reasoning": "16 - 3 - 4 = 9 eggs, 9 * 2 = 12"}',
        '```json\n{"reasoning": "16 - 3 - 4 = 9 eggs, 9 * 2 = 12"}\n```',
        'Here is my work.\n{\n  "explanation": "so the total is 12",\n  "steps": "3 + 9 = 12"\n}',
    ],
    ids=["bare", "fenced", "after-prose"],
)
def test_a_closed_object_of_working_alone_states_no_answer(content: str) -> None:
    """The model closed its JSON before writing an answer field: the last number of its working is no answer."""
    got = extract(content, NUMBER)
    assert (got.value, got.rung) == (None, "none")


@pytest.mark.parametrize(
    ("content", "want", "rung"),
    [
        ('{"reasoning": "3 + 9 = 12"}\nSo the total is 12.', "12", "last"),  # an answer after the object
        ('{"reasoning": "3 + 9 = 12", "answer": "12"}', "12", "json"),
        ('{"reasoning": "he said "wait" 3 + 9", "answer": "12"}', "12", "json"),  # a broken string, answer kept
        ('{"total": 12}', "12", "json"),  # one field that is not working: the answer
        # an answer field a quote the model got wrong swallowed into its working: the anchor reads it
        ('{"reasoning": "3 + 9 = 12. Answer: 12"}', "12", "anchor"),
        # working that ends on its own statement of the answer states it (ZeroEval's Yi-1.5-9B, GSM8K 1159:
        # '{"reasoning": "... Therefore, the answer is 50%."}' with no answer field)
        ('{"reasoning": "3 + 9 = 12, so the answer is 12"}', "12", "anchor"),
    ],
)
def test_an_object_with_an_answer_or_an_answer_after_it_is_still_read(content: str, want: str, rung: str) -> None:
    got = extract(content, NUMBER)
    assert (got.value, got.rung) == (want, rung)
