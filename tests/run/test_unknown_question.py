"""A reference server keyed for other questions answers "I do not have this question in my answer key": it says
so on its side (a warning, and a header no real server sends), and the run does not count that refusal as the
model's wrong answer but says how many answers were the server's."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.sim import Behaviour
from qualeval.tasks import build_samples, load_task
from tests.conftest import fast_sim, sim_url

KNOWN = 5
"""Of the first ten knowledge_qa questions, the ones in the server's answer key."""


def _key(tmp_path: Path) -> Path:
    samples = build_samples(load_task("knowledge_qa"), data=None)[:KNOWN]
    path = tmp_path / "key.jsonl"
    path.write_text("".join(json.dumps({"question": s.messages[-1].content, "answer": s.gold}) + "\n" for s in samples))
    return path


@pytest.mark.parametrize("flavour", ["vllm", "llamacpp"])
@pytest.mark.parametrize("stream", [False, True])
def test_the_server_marks_and_logs_a_question_it_does_not_know(
    tmp_path: Path, flavour: str, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    known = build_samples(load_task("knowledge_qa"), data=None)[0].messages[-1].content
    config = fast_sim(flavour, answers=_key(tmp_path))
    with caplog.at_level(logging.WARNING), sim_url(config) as url:
        marks = []
        for question in (known, "What is the capital of a country that does not exist?"):
            body = {"model": config.model, "messages": [{"role": "user", "content": question}], "stream": stream}
            reply = httpx.post(f"{url}/chat/completions", json=body, timeout=30)
            assert reply.status_code == 200
            marks.append(reply.headers.get("x-qualeval-sim"))
    assert marks == [None, "unknown-question"]
    assert sum("not in the answer key" in r.getMessage() for r in caplog.records) == 1


def test_the_server_says_its_unknown_questions_once_then_counts_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that repeats a question the key lacks (a probe's greeting) does not flood the server's log."""
    config = fast_sim(answers=_key(tmp_path))
    body = {"model": config.model, "messages": [{"role": "user", "content": "Reply with something."}]}
    with caplog.at_level(logging.WARNING), sim_url(config) as url:
        for _ in range(12):
            reply = httpx.post(f"{url}/chat/completions", json=body, timeout=30)
            assert reply.headers.get("x-qualeval-sim") == "unknown-question"  # every one still marked
    said = [r.getMessage() for r in caplog.records if "not in the answer key" in r.getMessage()]
    assert len(said) == 2 and "Reply with something." in said[0] and "10 requests" in said[1]


def test_answers_the_server_did_not_know_are_not_the_models_and_not_in_the_accuracy(tmp_path: Path) -> None:
    config = fast_sim(answers=_key(tmp_path), behaviour=Behaviour(reasoning_tokens=10, accuracy=1.0, trap_rate=0.0))
    out = tmp_path / "run"
    with sim_url(config) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", config.model, "--task", "knowledge_qa", "--limit", "10",
             "--warmup", "0", "--no-probe", "--constraint", "off", "--out", str(out)],
        )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]["summary"]
    # every known question answered right; the others are the server's refusals, not the model's wrong answers
    assert summary["unknown_questions"] == 10 - KNOWN and summary["statuses"]["unknown_question"] == 10 - KNOWN
    assert summary["n"] == KNOWN and summary["accuracy"] == 1.0
    said = f"{10 - KNOWN} of 10 answers came from a reference server that did not know the question"
    assert said in " ".join(re.sub("[│┃]", " ", done.stdout).split())  # a table cell may wrap the sentence
    assert said in (out / "report.md").read_text() and said in (out / "report.html").read_text()
    # nor are they the model's in any speed figure: the speed table and accuracy by reasoning length count the
    # known questions' answers alone
    task = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]
    assert task["speed"]["requests"] == KNOWN
    assert sum(cell["n"] for cell in task["linked"]["accuracy_by_reasoning_length"].values()) == KNOWN
    assert "wrong" not in task["linked"]["latency_by_outcome"]


def _keyless_run(tmp_path: Path, *args: str) -> Any:
    config = fast_sim(behaviour=Behaviour(reasoning_tokens=10))  # no answer key: every question is unknown
    with sim_url(config) as url:
        return CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", config.model, "--warmup", "0", "--no-probe", "--constraint", "off",
             "--out", str(tmp_path / "run"), *args],
        )  # fmt: skip


def test_a_run_whose_every_question_was_unknown_fails_rather_than_looking_done(tmp_path: Path) -> None:
    done = _keyless_run(tmp_path, "--task", "knowledge_qa", "--limit", "4")
    assert done.exit_code == 3
    assert done.stderr.strip().splitlines()[-1] == (
        "error: no item was answered by the model: 4 of 4 requests were questions the reference server's answer "
        "key does not hold (unknown_question); start it with this run's tasks (serve-sim --task knowledge_qa) "
        "or --answers FILE"
    )
    assert (tmp_path / "run" / "report.html").exists()  # the records and reports are kept, to be read


def test_a_keyless_server_is_no_warning_to_a_run_that_scores_nothing(tmp_path: Path) -> None:
    done = _keyless_run(tmp_path, "--workload", "benchy-pp1024-tg1024", "--workload-set", "num_prompts=2")
    assert done.exit_code == 0, done.stderr
    assert "accuracy measured here is 0" not in done.stderr
