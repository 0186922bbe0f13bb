"""What an answer marker's span gives: the value, not the marker's own form around it, and a plain statement over a
conditional one."""

from __future__ import annotations

import pytest

from qualeval.records import AnswerSpec
from qualeval.scoring.extract import extract

TEXT = AnswerSpec(type="text")
WORKING = "The roots of n^2 + n - 240 = 0 are 15 and -16, and a count of seconds is not negative."


@pytest.mark.parametrize("pick", ["first", "last"])
@pytest.mark.parametrize(
    "line",
    [
        'Answer: "answer": "15"',
        'Answer: `"answer": "15"`',
        'Final answer: "15"',
        "Answer: '15'",
        "Answer: \u201c15\u201d",
    ],
)
def test_a_marker_whose_value_is_quoted_or_another_marker_gives_the_value(pick: str, line: str) -> None:
    """Phi-3.5-mini on ZeroEval's MATH ends `Answer: "answer": "15"`: the value is 15, not `answer": "15`."""
    got = extract(f"{WORKING}\n\n{line}", AnswerSpec.model_validate({"type": "text", "pick": pick}))
    assert (got.value, got.rung) == ("15", "anchor")


def test_an_answer_field_repaired_out_of_prose_gives_the_value() -> None:
    """The model never closed its reasoning string and wrote `Answer: "answer": "15"` inside it; json-repair turns
    the prose into a key `Answer` whose value is `answer": "15`."""
    content = f'```json\n{{\n    "reasoning": "{WORKING}\n\nAnswer: "answer": "15"\n```'
    got = extract(content, TEXT)
    assert got.value == "15"


def test_an_object_cut_off_inside_its_reasoning_states_no_answer() -> None:
    """A JSON answer, then a question of the model's own and a second object cut off in its `reasoning`: that
    object's only field is the working, not the answer (Phi-3.5-mini, ZeroEval MATH items 128, 260)."""
    first = f'```json\n{{\n    "reasoning": "{WORKING}",\n    "answer": "15"\n}}\n```'
    second = '```json\n{\n    "reasoning": "First, we find how long the climb takes when the rate doubles.\n\nThe'
    got = extract(f"{first}\n\nQuestion: what if the plane climbs twice as fast?\n\n{second}", TEXT)
    assert (got.value, got.rung) == ("15", "json")
    assert extract(second, TEXT).rung != "json"


CHOICE_FIRST = AnswerSpec(type="choice", labels="letters", pick="first")
CHOICES = tuple(f"option {n}" for n in range(10))


@pytest.mark.parametrize(
    ("content", "want"),
    [
        (
            "This is not among the options, so the closest answer would be (E), which is near it. However, the view "
            "holds otherwise. The answer is (D).\n\nFinal Answer:\nThe answer is (D).",
            "D",
        ),
        ("The probability is 1/3, so the closest answer would be 33.33% (option I). The answer is (H).", "H"),
        ("None fits exactly; the closest answer would be (E).", "E"),  # a conditional alone is still its answer
    ],
    ids=["hedge-then-answer", "hedge-with-option-then-answer", "hedge-alone"],
)
def test_a_conditional_is_no_answer_where_a_plain_statement_follows(content: str, want: str) -> None:
    """MMLU-Pro reads the first answer statement; Qwen1.5-7B weighs an option ("would be") before it answers.
    MMLU-Pro's own rules read the plain statement."""
    got = extract(content, CHOICE_FIRST, CHOICES)
    assert (got.value, got.rung) == (want, "anchor")


def test_a_conditional_after_the_answer_is_still_read_last() -> None:
    """Read last, a conditional that ends the response is its last word, as before."""
    content = "The answer is (D). Rounded to the options' precision, the answer would be (E)."
    assert extract(content, AnswerSpec(type="choice", labels="letters"), CHOICES).value == "E"
