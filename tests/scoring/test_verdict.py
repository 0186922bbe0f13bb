"""The one judge: a live run and a rescore of its records reach the same verdict, record by record, in every
constraint mode, with and without rescue, over several reference-server flavours; and the model judge."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from qualeval.errors import InputError, QualevalWarning
from qualeval.reasoning.completion import Completion
from qualeval.records import ConstraintRecord, Grade, RunConfig
from qualeval.run.driver import execute
from qualeval.run.rescoring import rescore
from qualeval.scoring.modeljudge import grade_prompt, read_grade
from qualeval.scoring.verdict import decide
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.sim.grading import grade_reply
from qualeval.tasks import load_task
from qualeval.tasks.sample import Sample
from qualeval.wire.models import Message

TASKS = ("word_problems", "knowledge_qa", "syllogisms")
# (flavour, the convention forced for single/followup, whether the server ignores constraints)
FLAVOURS = [
    ("vllm", "structured_outputs", False),
    ("sglang", "response_format", True),
    ("llamacpp", "json_schema", False),
    ("inline-think", "response_format", True),
]
MODES = ["single", "followup", "off", "auto"]
VERDICT = ("extraction", "score", "naive_correct", "rescue", "rescue_correct")


def _run(tmp: Path, flavour: str, style: str, ignore: bool, mode: str, rescue: bool) -> Path:
    sim = SimConfig(
        flavour=flavour,
        port=0,
        tasks=TASKS,
        behaviour=Behaviour(accuracy=0.6, reasoning_tokens=30, empty_rate=0.15, trap_rate=0.5),
        latency=Latency(burst=True),
        ignore_constraints=ignore,
    )
    out = tmp / f"{flavour}-{mode}"
    with running_server(sim) as url:
        config = RunConfig(
            base_url=url,
            model="sim",
            tasks=list(TASKS),
            out=out,
            limit=8,
            concurrency=[4],
            warmup=0,
            max_tokens=400,
            constraint=mode,  # type: ignore[arg-type]
            constraint_style=None if mode in ("auto", "off") else style,  # type: ignore[arg-type]
            rescue=rescue,
            thinking_switch="none",
        )
        asyncio.run(execute(config))
    return out


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(("flavour", "style", "ignore"), FLAVOURS, ids=[f[0] for f in FLAVOURS])
@pytest.mark.parametrize("mode", MODES)
def test_live_and_rescore_agree_record_by_record(
    tmp_path: Path, flavour: str, style: str, ignore: bool, mode: str
) -> None:
    rescue = (FLAVOURS.index((flavour, style, ignore)) + MODES.index(mode)) % 2 == 0
    try:
        out = _run(tmp_path, flavour, style, ignore, mode, rescue)
    except InputError as exc:  # a mode the endpoint cannot honour stops before any request
        assert "constraint" in str(exc) and "\n" not in str(exc)
        return
    live = _rows(out / "records.jsonl")
    rescore(out)
    again = _rows(out / "rescore" / "records.jsonl")
    assert len(live) == len(again) == 8 * len(TASKS)
    for before, after in zip(live, again, strict=True):
        assert before["sample_id"] == after["sample_id"]
        assert {k: before[k] for k in VERDICT} == {k: after[k] for k in VERDICT}, before["sample_id"]
    pinned = json.loads((out / "manifest.json").read_text())["pinned"]
    for row in live:  # each task in the mode pinned for it (a task asking for working never single inline)
        assert row["constraint"]["mode"] == pinned["tasks"].get(row["task"], pinned["constraint"])
    modes = {row["constraint"]["mode"] for row in live}
    if mode == "followup" or (mode == "single" and flavour != "inline-think"):
        assert modes == {mode}
    if mode == "single" and flavour == "inline-think":  # only knowledge_qa's prompt asks for the answer alone
        assert {row["task"]: row["constraint"]["mode"] for row in live} == {
            "word_problems": "followup",
            "knowledge_qa": "single",
            "syllogisms": "followup",
        }
    for before, after in zip(live, again, strict=True):  # whether it held, and the agreement, are judged again
        assert before["constraint"] == after["constraint"], before["sample_id"]
    if mode == "single":
        rungs = {row["extraction"]["rung"] for row in live}
        assert "constraint" in rungs or ignore  # a server that honours the constraint delivers through it
    if mode == "followup":  # the content's own answer is scored; the follow-up only confirms or fills in
        assert "constraint" not in {row["extraction"]["rung"] for row in live}
        agreements = [row["constraint"]["agreement"] for row in live if row["constraint"]["followup"]]
        assert agreements and "agrees" in agreements
    if rescue:
        assert any(row["rescue"] for row in live if not row["content"].strip())


def _task_and_sample(name: str, gold: str, choices: tuple[str, ...] = ()) -> tuple[Any, Sample]:
    return load_task(name), Sample(id="x/0", task=name, messages=(), gold=gold, choices=choices)


def _followup(content: str, status: str = "ok") -> ConstraintRecord:
    return ConstraintRecord(mode="followup", kind="regex", followup={"content": content, "status": status})


def test_a_followup_never_overrides_the_answer_the_content_states() -> None:
    task, sample = _task_and_sample("word_problems", "18")
    done = Completion(content="So it is 17 or so.\n#### 17", status="ok")
    verdict = decide(task, sample, done, _followup("18"))
    assert (verdict.extraction.rung, verdict.extraction.value, verdict.score.correct) == ("anchor", "17", False)
    assert verdict.constraint is not None
    assert (verdict.constraint.agreement, verdict.constraint.valid, verdict.constraint.held) == (
        "disagrees",
        True,
        False,  # valid, but not agreeing: it did not hold
    )
    agreeing = decide(task, sample, done, _followup("17")).constraint
    assert agreeing is not None and (agreeing.agreement, agreeing.held) == ("agrees", True)


def test_a_followup_fills_in_only_an_answer_the_content_holds() -> None:
    task, sample = _task_and_sample("word_problems", "18")
    done = Completion(
        content="She has 3 boxes of 6 eggs, so 18 eggs in all.\nShe keeps them for the week.", status="ok"
    )
    assert decide(task, sample, done).extraction.value is None  # the ladder finds no stated answer here
    filled = decide(task, sample, done, _followup("18"))
    assert (filled.extraction.rung, filled.extraction.value, filled.score.correct) == ("followup", "18", True)
    assert filled.constraint is not None and filled.constraint.agreement == "filled"
    invented = decide(task, sample, done, _followup("20"))  # a number the content never wrote
    assert (invented.extraction.value, invented.score.correct) == (None, False)
    assert invented.constraint is not None and (invented.constraint.agreement, invented.constraint.held) == (
        "unsupported",
        False,
    )
    broken = decide(task, sample, done, _followup("the answer: 18 eggs"))  # not the regex: read by the ladder
    assert broken.constraint is not None and (broken.constraint.valid, broken.constraint.held) == (False, False)
    assert (broken.extraction.value, broken.constraint.agreement) == ("18", "filled")
    failed = decide(task, sample, Completion(content="#### 17"), _followup("", "transport_error"))
    assert failed.extraction.value == "17" and failed.constraint is not None
    assert failed.constraint.agreement == "silent" and failed.constraint.held is None


def test_a_copied_placeholder_never_replaces_a_right_answer() -> None:
    """SmolLM2-135M-Instruct's follow-up replies, as it wrote them, against the content it had written."""
    task, sample = _task_and_sample("knowledge_qa", "Paris")
    done = Completion(content="The capital of France is Paris.", status="ok")
    for reply in ('{"answer": "Answer: <answer>"}', '{"answer": "Answer: Answer: {response_text} }"}'):
        record = ConstraintRecord(mode="followup", kind="json", followup={"content": reply, "status": "ok"})
        verdict = decide(task, sample, done, record)
        assert verdict.score.correct, reply
        assert verdict.constraint is not None and verdict.constraint.agreement == "disagrees"
        assert verdict.constraint.held is False
    same = ConstraintRecord(mode="followup", kind="json", followup={"content": '{"answer": "Paris"}', "status": "ok"})
    agreed = decide(task, sample, done, same).constraint
    assert agreed is not None and (agreed.agreement, agreed.held) == ("agrees", True)


def test_a_single_constraint_that_broke_falls_back_to_the_ladder() -> None:
    task, sample = _task_and_sample("word_problems", "18")
    done = Completion(content="The answer is 18 eggs.", status="ok")
    verdict = decide(task, sample, done, ConstraintRecord(mode="single", kind="regex", held=False))
    assert (verdict.extraction.rung, verdict.extraction.value) == ("anchor", "18")
    assert decide(
        task, sample, Completion(content="18"), ConstraintRecord(mode="single", kind="regex")
    ).extraction.rung == ("constraint")


def test_the_model_judge_only_turns_a_rejected_free_form_answer_correct() -> None:
    task, sample = _task_and_sample("knowledge_qa", "6 geese a-laying")
    done = Completion(content="Answer: the gift is half a dozen geese", status="ok")  # right, in words no rule reads
    rules = decide(task, sample, done)
    assert not rules.score.correct
    yes = Grade(verdict="correct", reply="CORRECT", model="j")
    graded = decide(task, sample, done, grade=yes)
    assert (graded.extraction.rung, graded.score.correct) == ("judge", True)
    no = Grade(verdict="incorrect", reply="INCORRECT", model="j")
    assert not decide(task, sample, done, grade=no).score.correct
    empty = Completion(content="", status="reasoning_truncated")
    assert not decide(task, sample, empty, grade=yes).score.correct  # nothing written is never judged right


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("CORRECT", "correct"),
        ("The answer is INCORRECT.", "incorrect"),
        ("not_attempted", "not_attempted"),
        ("NOT ATTEMPTED", "not_attempted"),
        ("I think it is fine", "unreadable"),
    ],
)
def test_grade_words_are_read_from_the_judges_reply(reply: str, verdict: str) -> None:
    assert read_grade(reply) == verdict


def test_the_reference_server_grades_like_a_lenient_human() -> None:
    sample = Sample(
        id="q/1",
        task="t",
        messages=(Message(role="user", content="On the sixth day of Christmas?"),),
        gold="6 geese a-laying",
        aliases=("six geese",),
    )
    assert grade_reply(grade_prompt(sample, "Six geese a-laying")) == "CORRECT"
    assert grade_reply(grade_prompt(sample, "seven swans a-swimming")) == "INCORRECT"
    assert grade_reply(grade_prompt(sample, "I don't know")) == "NOT_ATTEMPTED"
    assert grade_reply("What is 2 + 2?") is None


PAINTERS = [
    ("Who painted the Mona Lisa?", "Leonardo da Vinci", "da Vinci, Leonardo"),
    ("Who painted The Starry Night?", "Vincent van Gogh", "van Gogh, Vincent"),
    ("Who painted Guernica?", "Pablo Picasso", "Pablo Picasso"),
    ("Who painted The Night Watch?", "Rembrandt", "Johannes Vermeer"),
]


def test_a_run_with_a_model_judge_stores_its_verdict_and_reports_both_accuracies(tmp_path: Path) -> None:
    # the served "model" answers from its own key, in forms the rules reject but a grader accepts
    key = tmp_path / "key.jsonl"
    key.write_text("".join(json.dumps({"question": q, "answer": said}) + "\n" for q, _, said in PAINTERS))
    task = tmp_path / "painters.yaml"
    rows = ", ".join(f'{{question: "{q}", answer: "{gold}"}}' for q, gold, _ in PAINTERS)
    task.write_text(f"name: painters\nsamples: [{rows}]\nanswer: {{type: text}}\nscorer: alias_match\n")
    sim = SimConfig(
        flavour="vllm",
        port=0,
        answers=key,
        behaviour=Behaviour(accuracy=1.0, reasoning_tokens=20, trap_rate=0.0),
        latency=Latency(burst=True),
    )
    with running_server(sim) as url:
        config = RunConfig(
            base_url=url,
            model="sim",
            tasks=[str(task)],
            out=tmp_path / "run",
            warmup=0,
            constraint="off",
            judge_base_url=url,
            judge_model="sim",
        )
        summary = asyncio.run(execute(config))
    records = {r["gold"]: r for r in _rows(tmp_path / "run" / "records.jsonl")}
    for gold in ("Leonardo da Vinci", "Vincent van Gogh"):
        assert records[gold]["grade"]["reply"] == "CORRECT" and records[gold]["extraction"]["rung"] == "judge"
    assert records["Pablo Picasso"]["grade"] is None  # the rules accepted it: no judge asked
    assert records["Rembrandt"]["grade"]["verdict"] == "incorrect" and not records["Rembrandt"]["score"]["correct"]
    result = summary.tasks["painters"].summary
    assert (result.accuracy, result.accuracy_without_judge) == (0.75, 0.25)
    rescore(tmp_path / "run")  # offline: the stored grades, no judge call
    again = {r["gold"]: r for r in _rows(tmp_path / "run" / "rescore" / "records.jsonl")}
    assert {g: r["score"] for g, r in again.items()} == {g: r["score"] for g, r in records.items()}


def test_every_scorer_kind_of_the_task_format_is_in_exactly_one_table() -> None:
    from typing import get_args

    from qualeval.records import ScorerSpec
    from qualeval.scoring.rules import SCORERS
    from qualeval.scoring.whole import WHOLE_SCORERS

    kinds = set(get_args(ScorerSpec.model_fields["kind"].annotation))
    # tool_call judges calls, not text (scoring.toolverdict); episode judges an agent's whole episode
    # (scoring.judge_episode, from its steps): both outside the text tables
    apart = {"tool_call", "episode"}
    tables = set(SCORERS) | set(WHOLE_SCORERS) | apart
    assert tables == kinds and not set(SCORERS) & set(WHOLE_SCORERS) and not apart & (set(SCORERS) | set(WHOLE_SCORERS))


def test_a_live_run_warns_when_its_model_judge_cannot_be_reached(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on once the socket closes
        sock.bind(("127.0.0.1", 0))
        judge = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    key = tmp_path / "key.jsonl"  # answers in forms the rules reject, so the judge is asked
    key.write_text("".join(json.dumps({"question": q, "answer": said}) + "\n" for q, _, said in PAINTERS))
    task = tmp_path / "painters.yaml"
    rows = ", ".join(f'{{question: "{q}", answer: "{gold}"}}' for q, gold, _ in PAINTERS)
    task.write_text(f"name: painters\nsamples: [{rows}]\nanswer: {{type: text}}\nscorer: alias_match\n")
    behaviour = Behaviour(accuracy=1.0, reasoning_tokens=20, trap_rate=0.0)
    sim = SimConfig(port=0, answers=key, behaviour=behaviour, latency=Latency(burst=True))
    with running_server(sim) as url, pytest.warns(QualevalWarning, match=f"model judge sim at {judge} failed"):
        config = RunConfig(
            base_url=url, model="sim", tasks=[str(task)], out=tmp_path / "run", warmup=0, constraint="off",
            judge_base_url=judge, judge_model="sim",
        )  # fmt: skip
        asyncio.run(execute(config))
