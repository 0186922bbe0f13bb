"""A response that repeats its prompt: the prompt's text is never read as the model's answer, and a response that
is mostly an echo gets the status `echoed`, with no follow-up asked or used."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from qualeval.figures.accuracy import summarize
from qualeval.reasoning.completion import Completion
from qualeval.records import (
    ClientConfig,
    ConstraintRecord,
    FollowupRecord,
    Manifest,
    Outcome,
    Record,
    RunConfig,
    SentBody,
    TaskEntry,
)
from qualeval.records.store import RunStore
from qualeval.run.offline import score_file
from qualeval.run.pipeline import run_one
from qualeval.run.rescoring import rescore
from qualeval.scoring.extract import extract
from qualeval.scoring.verdict import decide, echoed, prompt_of
from qualeval.tasks import Task, build_samples, load_task
from qualeval.tasks.sample import Sample
from qualeval.wire.models import ChatRequest, ChatResponse, Message
from tests.conftest import SHARED

MMLU = SHARED / "mmlu"
needs_mmlu = pytest.mark.skipif(not (MMLU / "test").is_dir(), reason="../shared/data/mmlu missing")
IFEVAL = SHARED / "ifeval" / "input_data.jsonl"
needs_ifeval = pytest.mark.skipif(not IFEVAL.is_file(), reason="../shared/data/ifeval missing")


def _sent(sample: Sample) -> str:
    """The sample's messages as one text, as a model that repeats its prompt writes them back."""
    return "\n\n".join(m.content for m in sample.messages)


def _syllogism(gold: str) -> tuple[Task, Sample]:
    task = load_task("syllogisms")
    return task, next(s for s in build_samples(task) if s.gold == gold)


def _mmlu() -> tuple[Task, Sample]:
    task = load_task("mmlu")
    return task, build_samples(task, data=MMLU, limit=1)[0]


def _repeated(prompt: str, cut: int) -> str:
    """The prompt over and over, as a degenerate small model writes it, cut off mid-copy by max_tokens."""
    text = "\n\n".join([prompt] * 4)
    return text[:-cut]


@pytest.mark.parametrize("cut", [1, 40, 200])
def test_a_syllogism_prompt_repeated_until_cut_off_is_an_echo(cut: int) -> None:
    """The repeated instruction holds `"Answer: no"`: read as it stands, an item whose gold is no counts as right."""
    task, sample = _syllogism("no")
    content = _repeated(sample.messages[-1].content, cut)
    assert extract(content, task.spec.answer, prompt=prompt_of(sample)).value is None
    verdict = decide(task, sample, Completion(content=content, status="answer_truncated"))
    assert verdict.status == "echoed"
    assert not verdict.score.correct
    assert verdict.extraction.value is None


def test_an_echo_that_stops_without_an_answer_of_its_own_is_an_echo() -> None:
    task, sample = _syllogism("no")
    verdict = decide(task, sample, Completion(content=sample.messages[-1].content, status="ok"))
    assert (verdict.status, verdict.score.correct) == ("echoed", False)


@pytest.mark.parametrize("own", ["Answer: no", "All A are C, so the conclusion does not follow.\nAnswer: no"])
def test_the_models_own_answer_after_an_echoed_instruction_is_read(own: str) -> None:
    """`Answer: no` on a line of its own is the model's: the instruction line holds it only inside a sentence."""
    task, sample = _syllogism("no")
    verdict = decide(task, sample, Completion(content=f"{sample.messages[-1].content}\n{own}", status="ok"))
    assert verdict.status is None
    assert (verdict.extraction.value, verdict.score.correct) == ("no", True)


def test_a_partial_echo_is_masked_but_the_response_is_read() -> None:
    """Restating the instruction, then reasoning at length without a stated answer: nothing is read from the echo."""
    task, sample = _syllogism("no")
    instruction = sample.messages[-1].content.splitlines()[-1]
    content = f"{instruction}\n" + "Let me think about the premises and what they say about the categories. " * 6
    verdict = decide(task, sample, Completion(content=content, status="ok"))
    assert verdict.status is None
    assert verdict.extraction.value is None


@needs_mmlu
@pytest.mark.parametrize("status", ["ok", "answer_truncated"])
def test_an_mmlu_question_and_options_repeated_give_no_letter(status: str) -> None:
    task, sample = _mmlu()
    content = _repeated(sample.messages[-1].content, 30) if status == "answer_truncated" else _sent(sample)
    assert extract(content, task.spec.answer, sample.choices, prompt=prompt_of(sample)).value is None
    verdict = decide(task, sample, Completion(content=content, status=status))
    assert (verdict.status, verdict.extraction.value, verdict.score.correct) == ("echoed", None, False)


def _followup_said(letter: str) -> ConstraintRecord:
    reply = FollowupRecord(request=SentBody(), content=f'{{"answer": "{letter}"}}', status="ok")
    return ConstraintRecord(mode="followup", kind="choice", style="structured_outputs", followup=reply)


@needs_mmlu
def test_a_follow_up_to_an_echo_is_never_used() -> None:
    """The follow-up answers from the echoed option list; the content holds every letter, so it would 'fill in'."""
    task, sample = _mmlu()
    verdict = decide(task, sample, Completion(content=_sent(sample)), _followup_said(sample.gold))
    assert (verdict.status, verdict.extraction.value, verdict.score.correct) == ("echoed", None, False)
    assert verdict.constraint is not None and verdict.constraint.agreement is None


@needs_mmlu
def test_a_follow_up_does_not_find_its_answer_in_echoed_options() -> None:
    """A long answer of the model's own with no answer stated, after an echoed option list: the follow-up's letter
    is in the echo only, so it is not supported by what the model wrote."""
    task, sample = _mmlu()
    options = "\n".join(line for line in _sent(sample).splitlines() if line[:2] in ("A.", "B.", "C.", "D."))
    content = f"{options}\n" + "I need to work through each of these options carefully before choosing. " * 8
    verdict = decide(task, sample, Completion(content=content), _followup_said(sample.gold))
    assert verdict.status is None
    assert verdict.extraction.value is None
    assert verdict.constraint is not None and verdict.constraint.agreement == "unsupported"


@needs_mmlu
@pytest.mark.parametrize("form", ["The answer is ({L}) {text}", "Answer: {L}. {text}", "{L}. {text}"])
def test_a_genuine_answer_quoting_one_option_is_read(form: str) -> None:
    task, sample = _mmlu()
    letter = "B"
    content = form.format(L=letter, text=sample.choices[1])
    got = extract(content, task.spec.answer, sample.choices, prompt=prompt_of(sample))
    assert got.value == letter


def test_a_long_option_quoted_alone_is_still_the_models_choice() -> None:
    """An option of eight words or more quoted after the answer marker names a choice; it is not an echo."""
    task = load_task("mmlu")
    choices = (
        "the cell membrane controls what enters and leaves the cell",
        "the mitochondria is the powerhouse of the cell in every eukaryote",
        "ribosomes are found only in the nucleus of plant cells",
        "chloroplasts are found in every animal cell of the body",
    )
    prompt = "Which is true?\n\n" + "".join(f"{L}. {c}\n" for L, c in zip("ABCD", choices, strict=True))
    assert extract(f"Answer: B. {choices[1]}", task.spec.answer, choices, prompt=prompt).value == "B"
    assert extract(f"The answer is (D) {choices[3]}.", task.spec.answer, choices, prompt=prompt).value == "D"
    assert extract(prompt, task.spec.answer, choices, prompt=prompt).value is None  # the whole list is an echo


@needs_ifeval
def test_a_whole_answer_task_may_repeat_its_prompt() -> None:
    """IFEval asks some responses to repeat the request word for word: never an echo there."""
    task = load_task("ifeval")
    sample = next(s for s in build_samples(task, data=IFEVAL, limit=5) if "repeat the request" in _sent(s).lower())
    assert not echoed(task, sample, Completion(content=_sent(sample), status="answer_truncated"))


def test_echoes_are_counted_as_not_correct_and_apart_from_the_answered() -> None:
    outcomes = [
        Outcome(status="ok", correct=True, rung="anchor", item="a"),
        Outcome(status="echoed", correct=False, rung="none", item="b"),
    ]
    summary = summarize("t", outcomes)
    assert summary.statuses["echoed"] == 1
    assert summary.accuracy == 0.5
    assert summary.accuracy_answered == 1.0


class _Echoing:
    """An endpoint whose model repeats its prompt; counts the requests it gets."""

    def __init__(self) -> None:
        self.asked: list[ChatRequest] = []

    @property
    def config(self) -> ClientConfig:
        return ClientConfig(base_url="http://127.0.0.1:9", api_key=None)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.asked.append(request)
        echo = "\n\n".join(m.content for m in request.messages) * 3
        return ChatResponse(completion=Completion(content=echo, status="answer_truncated"), finish_reason="length")


def test_an_echo_gets_its_status_and_no_follow_up_request(tmp_path: Path) -> None:
    task, sample = _syllogism("no")
    client = _Echoing()
    record: Record = asyncio.run(run_one(client, task, sample, model="m", mode="followup", style="structured_outputs"))
    assert len(client.asked) == 1
    assert record.status == "echoed"
    assert not record.score.correct
    assert record.constraint.followup is None


def _stored(root: Path, record: Record, task: Task) -> None:
    config = RunConfig(base_url="http://127.0.0.1:1/v1", model="m", tasks=[task.name], out=root)
    store = RunStore(root)
    store.open(Manifest(fingerprint="f", config=config, tasks={task.name: TaskEntry(spec=task.spec)}))
    store.append(record.model_dump_json().encode())
    store.close()


@pytest.mark.parametrize("status", ["ok", "echoed"])
def test_a_rescore_judges_an_echo_as_a_live_run_does(tmp_path: Path, status: str) -> None:
    """A run recorded before echoes were told apart (status ok, the anchor read `no`), and one recorded since."""
    task, sample = _syllogism("no")
    old = asyncio.run(run_one(_Echoing(), task, sample, model="m", mode="off", style=None))
    old = old.model_copy(update={"status": status, "finish_reason": "stop", "content": _sent(sample)})
    _stored(tmp_path, old, task)
    _, out = rescore(tmp_path)
    (again,) = list(out.records())
    assert (again.status, again.score.correct, again.extraction.value) == ("echoed", False, None)


def test_scoring_a_file_of_echoes_says_so(tmp_path: Path) -> None:
    task, sample = _syllogism("no")
    path = tmp_path / "responses.jsonl"
    line = {"id": sample.id, "content": _repeated(_sent(sample), 5), "finish_reason": "length"}
    path.write_text(json.dumps(line) + "\n")
    items, summary = score_file(task, path)
    assert (items[0].status, items[0].correct) == ("echoed", False)
    assert summary.statuses == {"echoed": 1}


def test_a_line_with_its_own_target_is_still_read_against_its_prompt(tmp_path: Path) -> None:
    """A line that carries `target` and names a sample the task can build: the sample's prompt masks the echo
    (its repeated instruction holds "Answer: no"), and the line's target is the gold."""
    task, sample = _syllogism("no")
    path = tmp_path / "responses.jsonl"
    echo = _repeated(_sent(sample), 5)
    lines = [
        {"id": sample.id, "content": echo, "finish_reason": "length", "target": "no"},
        {"id": "not-a-sample", "content": "Answer: no", "target": "no"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    items, _ = score_file(task, path)
    assert (items[0].status, items[0].correct, items[0].gold) == ("echoed", False, "no")
    assert (items[1].status, items[1].correct) == ("ok", True)  # a target of its own, no sample to read


def test_an_option_list_echoed_with_one_option_changed_is_still_an_echo() -> None:
    """SmolLM2 on MMLU wrote the option list back with its first option changed (`A. True, False` for the
    prompt's `A. True, True`): the changed line is the echo's, not an answer of the model's."""
    task = load_task("mmlu")
    choices = ("True, True", "False, False", "True, False", "False, True")
    prompt = "Statement 1 | Every group is abelian. Statement 2 | Every field is a ring.\n\n" + "".join(
        f"{label}. {text}\n" for label, text in zip("ABCD", choices, strict=True)
    )
    content = "A. True, False\nB. False, False\nC. True, False\nD. False, True"
    sample = Sample(
        id="mmlu/t/0", task="mmlu", messages=(Message(role="user", content=prompt),), gold="A", choices=choices
    )
    assert extract(content, task.spec.answer, choices, prompt=prompt).value is None
    verdict = decide(task, sample, Completion(content=content))
    assert (verdict.status, verdict.score.correct) == ("echoed", False)


def test_premises_restated_with_only_a_fragment_beside_them_are_an_echo() -> None:
    """A premise restated in a sentence of the model's own does not count toward the echo's share; but when the
    prompt's words are all there is, beside a fragment that states nothing ("The conclusion does not"), the item has
    no answer of its own and says so: `echoed`, never `ok` with nothing read."""
    task = load_task("syllogisms")
    sample = next(s for s in build_samples(task) if s.id == "syllogisms/test/AAA-1-believable")
    premise, conclusion = sample.messages[-1].content.splitlines()[1:3]
    content = f"So every {' '.join(premise.split()[3:])} {conclusion} The conclusion does not"
    verdict = decide(task, sample, Completion(content=content, status="ok"))
    assert (verdict.status, verdict.extraction.rung, verdict.score.correct) == ("echoed", "none", False)


KNOWLEDGE_QUESTION = "Which river flows through the city of Paris, the capital of France, and into the English Channel?"


@pytest.mark.parametrize(
    "content",
    [
        f"Q: {KNOWLEDGE_QUESTION}\nA: The Seine",
        f"{KNOWLEDGE_QUESTION}\nAnswer: Seine",
        f"{KNOWLEDGE_QUESTION} The Seine.",
    ],
    ids=["q-a", "answer-marker", "after-the-question"],
)
def test_a_question_repeated_then_answered_and_cut_off_is_an_answer(content: str) -> None:
    """A reply that writes the question back, answers it and is then cut off by its budget states an answer of its
    own: it is read and scored, not `echoed`."""
    task = load_task("knowledge_qa")
    sample = Sample(
        id="q/0", task="q", messages=(Message(role="user", content=KNOWLEDGE_QUESTION),), gold="Seine", aliases=()
    )
    verdict = decide(task, sample, Completion(content=content, status="answer_truncated"))
    assert (verdict.status, verdict.score.correct) == (None, True)


@pytest.mark.parametrize("cut", [10, 45])
def test_a_question_repeated_and_cut_off_with_nothing_of_its_own_is_an_echo(cut: int) -> None:
    """The budget cut the reply while it wrote the question back a second time: nothing in it is the model's."""
    task = load_task("knowledge_qa")
    sample = Sample(
        id="q/0", task="q", messages=(Message(role="user", content=KNOWLEDGE_QUESTION),), gold="Seine", aliases=()
    )
    content = f"{KNOWLEDGE_QUESTION}\n{KNOWLEDGE_QUESTION}"[:-cut]
    verdict = decide(task, sample, Completion(content=content, status="answer_truncated"))
    assert (verdict.status, verdict.score.correct) == ("echoed", False)
