"""A real instruct model, SmolLM2-135M-Instruct, served by llama.cpp's real llama-server: what each constraint mode
does to what the model says, checked against the words it wrote.

The model is weak but real: it answers capitals in sentences ("The capital of France is Paris."), gets some wrong
("The capital of Turkey is Istanbul."), loops on yes/no questions, and copies template text from its prompt when
asked to restate an answer. Its answers do not depend on what qualeval hopes, so a protocol that changes what the
model is asked shows its effect here, as it cannot on the reference server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qualeval.scoring.extract import normalize
from qualeval.tasks import build_samples, load_task
from tests.real_server.conftest import LlamaServer
from tests.real_server.test_runs import final_records, qualeval

pytestmark = [pytest.mark.real_server, pytest.mark.real_model]

CAPITALS = 12
"""knowledge_qa's first twelve items: capitals, Turkey's among them."""


def run(
    server: LlamaServer, out: Path, *flags: str, task: str = "knowledge_qa", limit: int = CAPITALS, budget: str = "96"
) -> str:
    done = qualeval(
        "run", "--base-url", server.url, "--model", "smollm2", "--task", task, "--limit", str(limit),
        "--concurrency", "2", "--warmup", "0", "--max-tokens", budget, "--out", str(out), *flags,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


def names_the_gold(record: dict[str, Any]) -> bool:
    """The words say the right capital: the oracle, read off the content without qualeval's rules."""
    text = f" {normalize(record['content'])} "
    return any(f" {normalize(name)} " in text for name in (record["gold"], *record["aliases"]))


def content_only(out: Path, task: str = "knowledge_qa") -> float:
    """`qualeval score` of the same responses' content, with no constraint and no follow-up."""
    lines = [{"id": r["sample_id"].rsplit("/", 1)[-1], "content": r["content"]} for r in final_records(out)]
    responses = out.parent / f"{out.name}-content.jsonl"
    responses.write_text("".join(json.dumps(line) + "\n" for line in lines))
    scored = out.parent / f"{out.name}-scored"
    done = qualeval("score", "--task", task, "--responses", str(responses), "--out", str(scored))
    assert done.returncode == 0, done.stderr
    return float(json.loads((scored / "summary.json").read_text())["tasks"][task]["summary"]["accuracy"])


def accuracy(out: Path) -> float:
    records = final_records(out)
    return sum(r["score"]["correct"] for r in records) / len(records)


def test_the_default_protocol_scores_what_the_model_said(smollm2: LlamaServer, tmp_path: Path) -> None:
    out = tmp_path / "auto"
    stderr = run(smollm2, out)
    assert "constraint: followup via" in stderr  # llama-server returns no reasoning apart: no first-token constraint
    records = final_records(out)
    assert len(records) == CAPITALS
    for r in records:
        assert r["score"]["correct"] == names_the_gold(r), (r["content"], r["extraction"])
        follow = r["constraint"]["followup"]
        if follow is not None:  # the follow-up shows the question and the response, and nothing to copy
            shown = follow["request"]["messages"][0]["content"]
            assert "<answer>" not in shown and "Answer with just" not in shown and r["content"].strip() in shown
    right = sum(r["score"]["correct"] for r in records)
    assert right >= CAPITALS // 2, [r["content"] for r in records]  # it knows many capitals...
    assert right < CAPITALS, "...and some it gets wrong stay wrong"
    assert any(r["constraint"]["agreement"] == "agrees" for r in records)
    assert accuracy(out) == content_only(out)  # the follow-up never scores over the content
    summary = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]["summary"]
    assert sum(summary["followup"].values()) == sum(r["constraint"]["followup"] is not None for r in records)
    done = qualeval("rescore", str(out))
    assert done.returncode == 0, done.stderr
    again = {r["sample_id"]: r for r in final_records(out / "rescore")}
    for r in records:  # verdicts, whether the constraint held and how the follow-up agreed: all judged again
        assert again[r["sample_id"]]["score"] == r["score"] and again[r["sample_id"]]["constraint"] == r["constraint"]


def test_single_binds_from_the_first_token_only_where_the_prompt_asks_for_the_answer_alone(
    smollm2: LlamaServer, tmp_path: Path
) -> None:
    flags = ("--constraint", "single", "--constraint-style", "response_format", "--no-probe")
    out = tmp_path / "qa"
    run(smollm2, out, *flags, limit=6)
    for r in final_records(out):  # knowledge_qa asks for just the answer: the schema rides on the main request
        assert r["constraint"]["mode"] == "single" and "response_format" in r["request"]
        try:
            wrote = json.loads(r["content"])
        except ValueError:
            wrote = None
        valid = isinstance(wrote, dict) and set(wrote) == {"answer"} and isinstance(wrote["answer"], str)
        assert r["constraint"]["held"] is valid, r["content"]
        if valid:  # what was scored is what the model wrote inside the constraint
            assert r["extraction"]["rung"] == "constraint" and r["extraction"]["raw"] == wrote["answer"]
            assert r["score"]["correct"] == names_the_gold(r)
    out = tmp_path / "syllogisms"
    stderr = run(smollm2, out, *flags, task="syllogisms", limit=4)
    assert "take away the working the prompt asks for" in stderr
    for r in final_records(out):  # "Reason it through": the schema would leave no room for it
        assert r["constraint"]["mode"] == "followup" and "response_format" not in r["request"]
        assert not r["content"].lstrip().startswith("{"), r["content"]


def test_a_looping_answer_is_cut_scored_and_counted(smollm2: LlamaServer, tmp_path: Path) -> None:
    out = tmp_path / "loop"
    run(smollm2, out, "--constraint", "off", budget="40", task="syllogisms", limit=6)
    records = final_records(out)
    cut = [r for r in records if r["finish_reason"] == "length"]
    assert cut, [r["content"] for r in records]  # it repeats itself to the token limit on yes/no questions
    for r in cut:
        assert r["status"] in ("answer_truncated", "echoed") and r["error"] is None
        if r["status"] == "echoed":  # it wrote its prompt back: eight words in a row of the prompt, and no answer read
            prompt = normalize(" ".join(m["content"] for m in r["request"]["messages"])).split()
            runs = {" ".join(prompt[i : i + 8]) for i in range(len(prompt) - 7)}
            words = normalize(r["content"]).split()
            assert any(" ".join(words[i : i + 8]) in runs for i in range(len(words) - 7)), r["content"]
            assert r["extraction"]["value"] is None and not r["score"]["correct"]
            continue
        said = [w for w in normalize(r["content"]).split() if w in ("yes", "no")]
        if said and len(set(said)) == 1:  # the same word over and over: that is its answer
            assert r["extraction"]["value"] == said[0]
    summary = json.loads((out / "summary.json").read_text())["tasks"]["syllogisms"]["summary"]
    statuses = summary["statuses"]
    assert statuses.get("answer_truncated", 0) + statuses.get("echoed", 0) == len(cut)
    assert summary["endpoint_errors"] == 0


def test_a_context_the_server_cannot_hold_is_an_endpoint_error_not_a_wrong_answer(
    smollm2: LlamaServer, tmp_path: Path
) -> None:
    out = tmp_path / "lengths"
    done = qualeval(
        "run", "--base-url", smollm2.url, "--model", "smollm2", "--task", "knowledge_qa", "--limit", "3",
        "--context-length", "150,2600", "--constraint", "off", "--no-probe", "--max-tokens", "32", "--warmup", "0",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 3, done.stderr[-2000:]
    said = " ".join(done.stderr.split())
    assert "3 requests at --context-length 2600 are longer than the server's context" in said, said
    summary = json.loads((out / "summary.json").read_text())
    at = summary["serving"]["context"]["tasks"]["knowledge_qa"]
    assert at["2600"]["accuracy"]["n"] == 0 and at["2600"]["endpoint_errors"] == 3
    assert at["150"]["accuracy"]["n"] == 3 and at["150"]["endpoint_errors"] == 0
    s = summary["tasks"]["knowledge_qa"]["summary"]
    assert s["endpoint_errors"] == 3 and "exceeds the available context size" in next(iter(s["error_reasons"]))
    assert "| knowledge_qa | 2600 | 0 | – | – | 3 |" in (out / "report.md").read_text()


def test_the_items_used_are_the_capitals() -> None:
    samples = build_samples(load_task("knowledge_qa"), limit=CAPITALS)
    assert all("capital" in s.question for s in samples) and any("Turkey" in s.question for s in samples)


def test_output_budgets_are_levels_of_the_same_items(smollm2: LlamaServer, tmp_path: Path) -> None:
    out = tmp_path / "budgets"
    run(smollm2, out, "--constraint", "off", budget="6,96")
    records = final_records(out)
    levels = {r["level"] for r in records}
    assert levels == {"max_tokens=6", "max_tokens=96"}
    cut = [r for r in records if r["level"] == "max_tokens=6"]
    assert {r["sample_id"] for r in cut} == {r["sample_id"] for r in records if r["level"] == "max_tokens=96"}
    for r in cut:  # six tokens hold "The capital of France is": the server stops there, and says so
        assert r["usage"]["completion_tokens"] <= 6 and r["request"]["max_tokens"] == 6
    assert sum(r["finish_reason"] == "length" for r in cut) >= CAPITALS // 2
    summary = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]["levels"]
    assert summary["max_tokens=6"]["accuracy"]["accuracy"] < summary["max_tokens=96"]["accuracy"]["accuracy"]


def test_sampled_reruns_measure_their_own_noise(smollm2: LlamaServer, tmp_path: Path) -> None:
    # B is a third run of the same config: A2 must be another run than B (B as its own rerun is refused)
    for name in ("a", "a2", "b"):
        run(smollm2, tmp_path / name, "--constraint", "off", "--temperature", "1.0")
    done = qualeval("compare", str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "a2"))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "a2" / "compare" / "compare.json").read_text())  # beside the last run given
    noise = result["noise"]["knowledge_qa"]
    assert noise["pairs"] == CAPITALS and noise["identical"] < 1  # sampled: the words differ run to run
    task = result["tasks"]["knowledge_qa"]
    # one config sampled three times: B - A is read as noise unless McNemar itself rejects (a 5% chance)
    assert noise["detectable"] is not None and task["within_noise"] in (True, False)
    if task["p_value"] >= 0.05:
        assert task["within_noise"] is True
