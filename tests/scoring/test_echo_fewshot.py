"""Few-shot chain of thought is not an echo: a model that works the question itself in its examples' words, restating
the question's premises and closing with an example's own sentence ("So the answer is Yes."), has answered. A model
that copies its prompt, or one of its examples, still has not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from qualeval.reasoning.completion import Completion
from qualeval.records.taskspec import TaskSpec
from qualeval.scoring.extract import extract
from qualeval.scoring.verdict import decide, prompt_of
from qualeval.tasks import Task, build_samples, load_task
from qualeval.tasks.sample import Sample
from qualeval.wire.models import Message
from tests.conftest import SHARED

BBH_COT = SHARED / "model_outputs" / "bbh_davinci_cot"

INSTRUCTION = "Decide whether a walker who follows the steps ends where they began."
EXAMPLES = [
    (
        "Take 3 steps north. Take 3 steps south.",
        "The walker starts at the origin (0, 0) and faces north.\n"
        "(1) Take 3 steps north: the walker is now at (0, 3).\n"
        "(2) Take 3 steps south: the walker is now at (0, 0).\n"
        "Since (0, 0) is the origin, the walker ends where they began. So the answer is Yes.",
    ),
    (
        "Take 2 steps west. Take 5 steps north.",
        "The walker starts at the origin (0, 0) and faces north.\n"
        "(1) Take 2 steps west: the walker is now at (-2, 0).\n"
        "(2) Take 5 steps north: the walker is now at (-2, 5).\n"
        "Since (-2, 5) is not the origin, the walker does not end where they began. So the answer is No.",
    ),
]
OWN_YES = (
    "The walker starts at the origin (0, 0) and faces north.\n"
    "(1) Take 2 steps east: the walker is now at (2, 0).\n"
    "(2) Take 4 steps west: the walker is now at (-2, 0).\n"
    "(3) Take 2 steps east: the walker is now at (0, 0).\n"
    "Since (0, 0) is the origin, the walker ends where they began. So the answer is Yes."
)
OWN_NO = (
    "The walker starts at the origin (0, 0) and faces north.\n"
    "(1) Take 2 steps east: the walker is now at (2, 0).\n"
    "(2) Take 4 steps west: the walker is now at (-2, 0).\n"
    "(3) Take 1 step east: (-1, 0). Since (-1, 0) is not the origin, the walker does not end where they began. "
    "So the answer is No."
)
ONE_LINE_YES = (
    "Two steps east, four west and two east again cancel out. Since (0, 0) is the origin, the walker ends where "
    "they began. So the answer is Yes."
)


def _sent(sample: Sample) -> str:
    """The sample's messages as one text, as a model that repeats its prompt writes them back."""
    return "\n\n".join(m.content for m in sample.messages)


def _question(steps: str) -> str:
    return f"Q: Does the walker end where they began? {steps}\nOptions:\n- Yes\n- No\nA: Let's think step by step."


def _prompt(steps: str) -> str:
    shots = [f"{_question(q)}\n{a}" for q, a in EXAMPLES]
    return "\n\n".join([INSTRUCTION, *shots, _question(steps)])


def _task(answer: str, rows: list[dict[str, Any]]) -> tuple[Task, list[Sample]]:
    spec = TaskSpec.model_validate(
        {
            "name": "fewshot",
            "samples": rows,
            "doc_to_text": "{{ input }}",
            "doc_to_target": "target",
            "prompt": {"user": "{{ text }}"},
            "answer": {"type": answer},
            "scorer": {"kind": "exact"},
        }
    )
    task = Task(spec, None)
    return task, build_samples(task)


def _walk(gold: str) -> tuple[Task, Sample]:
    steps = f"Take 2 steps east. Take 4 steps west. Take {2 if gold == 'Yes' else 1} step{'s' * (gold == 'Yes')} east."
    task, samples = _task("boolean", [{"input": _prompt(steps), "target": gold}])
    return task, samples[0]


@pytest.mark.parametrize(
    ("gold", "content"),
    [
        ("Yes", OWN_YES),
        ("No", OWN_NO),
        ("Yes", ONE_LINE_YES),
        ("Yes", OWN_YES.replace(" So the answer", "\nSo the answer")),
    ],
    ids=[
        "closing-line-copied-whole",
        "closing-after-own-words-on-its-line",
        "one-line-answer",
        "answer-on-its-own-line",
    ],
)
def test_working_in_the_examples_words_that_closes_with_an_examples_sentence_is_read(gold: str, content: str) -> None:
    """The working restates the examples' opening line and their step lines; the closing sentence is an example's,
    word for word, because the model's answer is that example's answer."""
    task, sample = _walk(gold)
    verdict = decide(task, sample, Completion(content=content))
    assert verdict.status is None
    assert (verdict.extraction.value, verdict.extraction.rung, verdict.score.correct) == (gold.lower(), "anchor", True)


@pytest.mark.parametrize(
    ("gold", "after"),
    [
        ("Yes", "\n\nQ: Does the walker end where they began? Take 1 step north.\nA: Let's think step by step.\nThe"),
        ("No", f"\n\n{_question(EXAMPLES[0][0])}\n{EXAMPLES[0][1]}"),
    ],
    ids=["into-a-question-of-its-own", "into-an-example-written-back"],
)
def test_a_closing_sentence_the_model_runs_on_from_is_still_its_answer(gold: str, after: str) -> None:
    """A base model that does not stop after its answer goes on as the prompt does after that example: a blank line
    and `Q: Does the walker ...`. The copy runs on past the example's end; the closing is the model's all the same,
    and what follows it is not (an example written back gives its `Yes` to no one)."""
    task, sample = _walk(gold)
    verdict = decide(task, sample, Completion(content=(OWN_YES if gold == "Yes" else OWN_NO) + after))
    assert verdict.status is None
    assert (verdict.extraction.value, verdict.score.correct) == (gold.lower(), True)


def test_a_few_shot_prompt_repeated_until_cut_off_is_an_echo() -> None:
    """Every example's closing sentence is in the copy: none of them is the model's."""
    task, sample = _walk("No")
    content = "\n\n".join([_sent(sample)] * 3)[:-25]
    verdict = decide(task, sample, Completion(content=content, status="answer_truncated"))
    assert (verdict.status, verdict.extraction.value, verdict.score.correct) == ("echoed", None, False)
    assert decide(task, sample, Completion(content=_sent(sample))).status == "echoed"


@pytest.mark.parametrize(
    "content",
    [
        EXAMPLES[0][1],  # an example's worked answer written back, nothing of the model's own
        EXAMPLES[0][1].splitlines()[-1],  # its closing line alone
        "Sure.\n" + EXAMPLES[0][1],  # a word of its own before the copy: the copy is still a passage of the prompt
        f"{_question(EXAMPLES[0][0])}\n{EXAMPLES[0][1]}",  # a whole example, question and all
    ],
    ids=["worked-answer", "closing-line", "after-a-word", "whole-example"],
)
def test_an_example_written_back_is_an_echo(content: str) -> None:
    task, sample = _walk("No")  # the example says Yes
    verdict = decide(task, sample, Completion(content=content))
    assert (verdict.status, verdict.extraction.value, verdict.score.correct) == ("echoed", None, False)


def test_an_example_copied_after_the_models_own_working_is_not_its_answer() -> None:
    """The model works the steps, then writes an example back whole: the example's "So the answer is Yes." is the
    prompt's, and the model stated nothing itself."""
    task, sample = _walk("No")
    working = "\n".join(OWN_NO.splitlines()[:3])
    content = f"{working}\n\n{_question(EXAMPLES[0][0])}\n{EXAMPLES[0][1]}"
    assert extract(content, task.spec.answer, prompt=prompt_of(sample)).value is None


@pytest.mark.parametrize("cut", [False, True], ids=["whole", "up-to-its-first-form"])
def test_the_instruction_restated_after_the_models_working_gives_no_answer(cut: bool) -> None:
    """The instruction names both answers (`"Answer: yes" or "Answer: no"`): after working of the model's own, as
    its last line, it is still the prompt's, not a closing statement; so is the line copied only as far as its
    first form, which the prompt's line goes on from."""
    task = load_task("syllogisms")
    sample = next(s for s in build_samples(task) if s.gold == "no")
    instruction = _sent(sample).splitlines()[-1]
    if cut:
        instruction = instruction[: instruction.index('" or')]
    content = f"Every B is a C, and every A is a B, so I have to check the categories in order.\n{instruction}"
    assert extract(content, task.spec.answer, prompt=prompt_of(sample)).value is None


def _pro_prompt(options: list[str], shot_options: list[str]) -> str:
    def block(question: str, opts: list[str], answer: str) -> str:
        listed = "".join(f"{label}. {text}\n" for label, text in zip("ABCD", opts, strict=True))
        return f"Question:\n{question}\nOptions:\n{listed}Answer: Let's think step by step.{answer}"

    head = (
        "The following are multiple choice questions (with answers) about history. Think step by step and then "
        'finish your answer with "the answer is (X)" where X is the correct letter choice.'
    )
    shot = block(
        "The first passage is most useful as evidence for", shot_options, " It dwells on 1848. The answer is (A)."
    )
    return "\n\n".join([head, shot, block("The second passage is best understood in the context of", options, "")])


@pytest.mark.parametrize(
    "content",
    [
        "The passage concerns the events of 1848 in Berlin and Vienna. The answer is A. {option}",
        "The answer is A. {option}",
        "A. {option}",
    ],
)
def test_an_option_quoted_after_the_marker_keeps_its_marker(content: str) -> None:
    """MMLU-Pro: an example lists an option that begins as the item's option A does, under the same label. The
    quote matches there as long as it matches the item's own option line; it is the item's option, quoted, and
    neither the option nor the `A.` before it is masked."""
    options = [
        "the importance of the revolutions of 1848 in modern German history.",
        "the failure of liberal nationalism in the German states after 1848.",
        "the rise of Prussia as the dominant power among the German states.",
        "the role of the Frankfurt Parliament in drafting a German constitution.",
    ]
    shot_options = [
        "the importance of the revolutions of 1848 in modern German history and memory.",
        "the unification of Italy under the House of Savoy.",
        "the collapse of the Concert of Europe after the Crimean War.",
        "the spread of industrialisation to the German countryside.",
    ]
    task = load_task("mmlu_pro")
    prompt = _pro_prompt(options, shot_options)
    sample = Sample(
        id="mmlu_pro/1",
        task="mmlu_pro",
        messages=(Message(role="user", content=prompt),),
        gold="A",
        choices=tuple(options),
    )
    verdict = decide(task, sample, Completion(content=content.format(option=options[0])))
    assert (verdict.status, verdict.extraction.value, verdict.score.correct) == (None, "A", True)


def _authors(prediction: str) -> str:
    """The BBH authors' reading: the text after the last "So the answer is ", to the end of its line, less a final
    full stop."""
    said = prediction.split("So the answer is ")[-1].strip().split("\n")[0]
    return said[:-1].strip() if said.endswith(".") else said.strip()


def _closes_with_the_prompts_words(prediction: str, prompt: str) -> bool:
    """Whether the prediction's last eight words stand in the prompt in that order: its closing sentence is an
    example's."""
    words = prompt.casefold().split()
    tail = prediction.casefold().split()[-8:]
    return any(words[i : i + 8] == tail for i in range(len(words) - 7))


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("boolean_expressions", "boolean"),
        ("causal_judgement", "boolean"),
        ("logical_deduction_five_objects", "text"),
        ("navigate", "boolean"),
        ("sports_understanding", "boolean"),
    ],
)
def test_real_few_shot_cot_closing_with_an_examples_sentence_reads_as_its_authors_read_it(
    name: str, answer: str
) -> None:
    """code-davinci-002's 3-shot CoT on BIG-Bench-Hard (the authors' outputs): every completion whose closing
    sentence is an example's, word for word, gives the answer the authors' parser gives, and is no echo."""
    outputs = json.loads((BBH_COT / f"{name}.json").read_text())["outputs"]
    rows = [o for o in outputs if _closes_with_the_prompts_words(o["prediction"], o["input"])]
    assert len(rows) >= 1
    task, samples = _task(answer, [{"input": o["input"], "target": o["target"]} for o in rows])
    yes_no = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}
    wrong = []
    for row, sample in zip(rows, samples, strict=True):
        verdict = decide(task, sample, Completion(content=row["prediction"]))
        said = _authors(row["prediction"])
        wanted = yes_no.get(said.casefold(), said) if answer == "boolean" else said
        if verdict.status is not None or verdict.extraction.value != wanted:
            wrong.append((sample.id, verdict.status, verdict.extraction.value, wanted))
    assert not wrong, wrong
