"""An example's closing sentence is not an instruction's example. A model may end with the sentence its few-shot
examples end with ("So the answer is No."): the prompt shows it as the answer to an earlier question. A zero-shot
prompt shows no answer; the form its instruction asks for, with an example value (`"answer": "42"`), or the
template it gives (`"answer": "___"`), is the prompt's, wherever the model writes it back."""

from __future__ import annotations

import pytest

from qualeval.reasoning.completion import Completion
from qualeval.records.taskspec import TaskSpec
from qualeval.scoring.extract import extract
from qualeval.scoring.verdict import decide, prompt_of
from qualeval.tasks import Task, build_samples
from qualeval.tasks.sample import Sample
from qualeval.wire.models import Message

QUESTION = (
    "A bakery packs muffins in boxes of 6 and sells each box for 9 dollars. On Monday it baked 150 muffins and "
    "sold every full box it could pack. How many dollars did it take in from the muffins on Monday?"
)
INSTRUCTION = (
    "## Instruction \n\n"
    "Please answer this question by first reasoning and then providing your answer.\n"
    "Present your reasoning and solution in the following json format. \n"
    'Please show your final answer in the `answer` field, e.g., `"answer": "42"`.\n\n'
    '```json\n{\n    "reasoning": "___",\n    "answer": "___"\n}\n```'
)
OWN_QUESTION = (
    "A bakery packs muffins in boxes of 8 and sells each box for 11 dollars. On Tuesday it baked 170 muffins. "
    "How many dollars could it take in?"
)
WORKING = "150 muffins make 25 full boxes of 6, and 25 boxes at 9 dollars each bring in 225 dollars."


def _zero_shot(answer: str = "text") -> tuple[Task, Sample]:
    spec = TaskSpec.model_validate(
        {
            "name": "zeroshot",
            "samples": [{"q": QUESTION, "a": "225"}],
            "doc_to_text": "{{ q }}",
            "doc_to_target": "a",
            "prompt": {"user": "## Question: \n\n{{ text }}\n\n\n" + INSTRUCTION},
            "answer": {"type": answer},
            "scorer": {"kind": "math" if answer == "text" else "numeric"},
        }
    )
    task = Task(spec, None)
    return task, build_samples(task)[0]


@pytest.mark.parametrize("answer", ["text", "number"])
def test_the_instruction_written_back_after_the_models_json_answer_is_not_its_answer(answer: str) -> None:
    """Phi-3.5-mini on ZeroEval's MATH: it answers in its JSON, then writes a question of its own and ZeroEval's
    instruction block after it. The instruction's `"answer": "42"` ends where its line ends and states one answer,
    as an example's closing sentence would; but a zero-shot prompt has no examples, so it is the prompt's."""
    task, sample = _zero_shot(answer)
    own = f'```json\n{{\n    "reasoning": "{WORKING}",\n    "answer": "225"\n}}\n```'
    content = f"{own}\n\n\nQuestion:\n\n{OWN_QUESTION}\n\n\n{INSTRUCTION}"
    verdict = decide(task, sample, Completion(content=content))
    assert verdict.status is None
    assert (verdict.extraction.value, verdict.extraction.rung, verdict.score.correct) == ("225", "json", True)


def test_the_instruction_written_back_after_working_with_no_answer_gives_none() -> None:
    task, sample = _zero_shot("number")
    working = (
        "First I count the full boxes the muffins fill, leaving out the muffins that do not make a whole box, since "
        "only full boxes were sold. Then I price those boxes, each at the price the question gives, and add them up "
        "to find what the bakery took in on that day."
    )
    content = f"{working}\n\n{INSTRUCTION}"
    assert extract(content, task.spec.answer, prompt=prompt_of(sample)).value is None


EXAMPLES = [
    (
        "Take 3 steps north. Take 3 steps south.",
        "(1) Take 3 steps north: the walker is now at (0, 3).\n"
        "(2) Take 3 steps south: the walker is now at (0, 0).\n"
        "Since (0, 0) is the origin, the walker ends where they began. So the answer is Yes.",
    ),
    (
        "Take 2 steps west. Take 5 steps north.",
        "(1) Take 2 steps west: the walker is now at (-2, 0).\n"
        "(2) Take 5 steps north: the walker is now at (-2, 5).\n"
        "Since (-2, 5) is not the origin, the walker does not end where they began. So the answer is No.",
    ),
]
HEAD = (
    "Decide whether a walker who follows the steps ends where they began.\n"
    'Close your answer with one sentence such as "So the walker ends where they began. So the answer is Yes."'
)
STEPS = "Take 2 steps east. Take 4 steps west. Take 2 steps east."
OWN = (
    "(1) Take 2 steps east: the walker is now at (2, 0).\n"
    "(2) Take 4 steps west: the walker is now at (-2, 0).\n"
    "(3) Take 2 steps east: the walker is now at (0, 0).\n"
)
CLOSING = "Since (0, 0) is the origin, the walker ends where they began. So the answer is Yes."


def _question(steps: str, cue: str) -> str:
    return f"Q: Does the walker end where they began? {steps}\n{cue}"


def _walk(turns: bool, cue: str = "A: Let's think step by step.") -> tuple[Task, Sample]:
    """A three-shot prompt, in one message (each example's answer after the answer cue the question ends with: on
    the lines after `A: Let's think step by step.` as in the BIG-Bench-Hard prompts, on the line of `A:` as in
    lm-eval's GSM8K chain of thought) or as chat turns (each example's answer an assistant message)."""
    after = " " if cue == "A:" else "\n"
    if turns:
        messages = [Message(role="system", content=HEAD)]
        for question, answer in EXAMPLES:
            messages += [
                Message(role="user", content=_question(question, cue)),
                Message(role="assistant", content=answer),
            ]
        messages.append(Message(role="user", content=_question(STEPS, cue)))
    else:
        shots = [f"{_question(q, cue)}{after}{a}" for q, a in EXAMPLES]
        messages = [Message(role="user", content="\n\n".join([HEAD, *shots, _question(STEPS, cue)]))]
    spec = TaskSpec.model_validate(
        {
            "name": "walk",
            "samples": [{"q": "", "a": "Yes"}],
            "doc_to_text": "{{ q }}",
            "doc_to_target": "a",
            "answer": {"type": "boolean"},
            "scorer": {"kind": "exact"},
        }
    )
    return Task(spec, None), Sample(id="walk/0", task="walk", messages=tuple(messages), gold="Yes")


@pytest.mark.parametrize("turns", [False, True], ids=["one-message", "chat-turns"])
@pytest.mark.parametrize("cue", ["A: Let's think step by step.", "A:"])
def test_a_closing_sentence_an_example_answers_with_is_read(turns: bool, cue: str) -> None:
    """The prompt shows the model's closing sentence as an example's answer: after the answer cue its question ends
    with, or in an assistant message."""
    task, sample = _walk(turns, cue)
    verdict = decide(task, sample, Completion(content=OWN + CLOSING))
    assert verdict.status is None
    assert (verdict.extraction.value, verdict.score.correct) == ("yes", True)


def _templated() -> str:
    """The three-shot prompt as one text through a Llama-3 chat template, as an lm-eval log keeps what it sent: each
    answer follows the assistant header and a blank line."""
    head = "<|start_header_id|>{}<|end_header_id|>\n\n"
    turns = [head.format("system") + HEAD]
    for question, answer in EXAMPLES:
        turns += [head.format("user") + _question(question, "A:"), head.format("assistant") + answer]
    turns.append(head.format("user") + _question(STEPS, "A:"))
    return "<|eot_id|>".join(turns) + "<|eot_id|>" + head.format("assistant")


def test_a_closing_sentence_in_a_chat_templated_prompt_is_read() -> None:
    task, sample = _walk(False)
    sample = sample.model_copy(update={"messages": (Message(role="user", content=_templated()),)})
    verdict = decide(task, sample, Completion(content=OWN + CLOSING))
    assert (verdict.status, verdict.extraction.value, verdict.score.correct) == (None, "yes", True)
    assert extract(OWN + HEAD.splitlines()[-1], task.spec.answer, prompt=prompt_of(sample)).value is None


@pytest.mark.parametrize("turns", [False, True], ids=["one-message", "chat-turns"])
def test_the_instructions_closing_form_written_back_is_not_an_answer(turns: bool) -> None:
    """The instruction shows the closing form with a value ("So the answer is Yes."), once, before any example:
    written back after the model's own steps it is the prompt's sentence, as a zero-shot instruction's is."""
    task, sample = _walk(turns)
    content = OWN + HEAD.splitlines()[-1]
    assert extract(content, task.spec.answer, prompt=prompt_of(sample)).value is None


RESTATED = (
    '{\n    "reasoning": "We know that the bakery packs muffins in boxes of 6 and sells each box for 9 dollars, and '
    "since on Monday it baked 150 muffins and sold"
)


def test_premises_restated_in_a_sentence_of_the_models_own_and_cut_off_are_no_echo() -> None:
    """Mixtral on ZeroEval's GSM8K, cut off after one sentence of its reasoning: two stretches of the question's
    sentences, woven into a sentence of its own, make most of a short response. It restated the question; it did
    not echo it. It states no answer, so it is wrong, and its status is its own."""
    task, sample = _zero_shot("number")
    verdict = decide(task, sample, Completion(content=RESTATED))
    assert (verdict.status, verdict.extraction.value, verdict.score.correct) == (None, None, False)


@pytest.mark.parametrize("cut", [40, 120])
def test_the_question_written_back_from_its_start_and_cut_off_is_still_an_echo(cut: int) -> None:
    task, sample = _zero_shot("number")
    verdict = decide(task, sample, Completion(content=f"## Question:\n\n{QUESTION}"[:-cut]))
    assert (verdict.status, verdict.extraction.value, verdict.score.correct) == ("echoed", None, False)
