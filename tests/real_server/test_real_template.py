"""A real reasoning template on the real model: SmolLM2-135M-Instruct served under Qwen3.5-4B's chat template, as
llama.cpp ships it, with `--reasoning-budget`.

The template's generation prompt opens `<think>`, so SmolLM2 writes into the thinking first; llama.cpp returns that
in `reasoning_content`, and once the budget is spent it writes `</think>` itself and generation goes on to the
answer. On short facts SmolLM2 states the answer inside its thinking and stops there: the content is empty, and
nothing may be read out of the reasoning. On questions that ask for working it thinks past the budget, and the
server's closing marker is followed by its answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from qualeval.scoring.extract import normalize
from tests.real_server.conftest import THINKING_BUDGET, LlamaServer, thinking_server
from tests.real_server.test_real_model import CAPITALS, accuracy, content_only, names_the_gold
from tests.real_server.test_runs import final_records, qualeval

pytestmark = [pytest.mark.real_server, pytest.mark.real_model]

CUT, ROOM = 24, 96
"""The two max_tokens levels of the syllogism runs: CUT ends generation inside the thinking (below the budget),
ROOM leaves the answer room after the server has closed the thinking."""
SYLLOGISMS = 6
PROBE_TIME = "1800"  # the probe's own bound: generous, so that no check is cut short on a busy machine


def run(server: LlamaServer, out: Path, *flags: str, task: str, limit: int, budget: str, concurrency: int = 2) -> None:
    done = qualeval(
        "run", "--base-url", server.url, "--model", "smollm2", "--task", task, "--limit", str(limit),
        "--concurrency", str(concurrency), "--warmup", "0", "--max-tokens", budget, "--out", str(out), *flags,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]


def ask(server: LlamaServer, question: str, max_tokens: int, **extra: Any) -> dict[str, Any]:
    body = {"model": "smollm2", "messages": [{"role": "user", "content": question}], "max_tokens": max_tokens}
    got = httpx.post(f"{server.url}/chat/completions", json={**body, "temperature": 0, **extra}, timeout=600)
    assert got.status_code == 200, got.text
    choice = got.json()["choices"][0]
    return {**choice["message"], "finish_reason": choice["finish_reason"]}


def ask_streamed(server: LlamaServer, question: str, max_tokens: int) -> dict[str, Any]:
    """The deltas of a streamed request, joined per field."""
    body = {"model": "smollm2", "messages": [{"role": "user", "content": question}], "max_tokens": max_tokens}
    joined: dict[str, Any] = {"content": "", "reasoning_content": ""}
    with httpx.stream("POST", f"{server.url}/chat/completions", json={**body, "temperature": 0, "stream": True},
                      timeout=600) as got:  # fmt: skip
        for line in got.iter_lines():
            if not line.startswith("data: {"):
                continue
            for choice in json.loads(line[len("data: ") :])["choices"]:
                for field in ("content", "reasoning_content"):
                    joined[field] += choice["delta"].get(field) or ""
                joined["finish_reason"] = choice.get("finish_reason") or joined.get("finish_reason")
    return joined


def tokens(server: LlamaServer, text: str) -> int:
    got = httpx.post(f"{server.root}/tokenize", json={"content": text}, timeout=600)
    return len(got.json()["tokens"])


LONG = "Explain photosynthesis in detail."


def test_the_server_returns_the_thinking_apart_and_closes_it_at_its_budget(smollm2_thinking: LlamaServer) -> None:
    whole = ask(smollm2_thinking, LONG, ROOM)
    thought = whole["reasoning_content"]
    assert thought and tokens(smollm2_thinking, thought) <= THINKING_BUDGET  # the server ended it at the budget
    assert whole["content"].strip(), whole  # and generation went on to an answer
    raw = ask(smollm2_thinking, LONG, ROOM, reasoning_format="none")["content"]
    assert raw.startswith("<think>")  # the template opened the block; the server wrote the closing marker itself
    before, marker, after = raw.removeprefix("<think>").partition("</think>")
    assert marker and before.strip() == thought.strip() and after.strip() == whole["content"].strip()
    streamed = ask_streamed(smollm2_thinking, LONG, ROOM)
    assert (streamed["reasoning_content"], streamed["content"]) == (thought, whole["content"])
    # max_tokens below the budget: cut inside the thinking, with no answer
    cut = ask(smollm2_thinking, LONG, CUT)
    assert (cut["finish_reason"], cut["content"]) == ("length", "") and cut["reasoning_content"]
    # the template's own switch: a pre-filled empty block, and the answer in the content
    off = ask(smollm2_thinking, LONG, CUT, chat_template_kwargs={"enable_thinking": False})
    assert not off.get("reasoning_content") and off["content"].strip()


def expected_status(record: dict[str, Any]) -> set[str]:
    """The status the server's own reply calls for: thinking cut off (length, no answer), an answer cut off, the
    model stopped with no answer, or an answer. An answer that only repeats its prompt may be `echoed` instead."""
    answered = bool(record["content"].strip())
    if record["finish_reason"] == "length":
        return {"answer_truncated", "echoed"} if answered else {"reasoning_truncated"}
    return {"ok", "echoed"} if answered else {"empty_content"}


def check_read_from_content(record: dict[str, Any]) -> None:
    """Status as the reply calls for, and never an answer read out of the reasoning."""
    assert record["status"] in expected_status(record), (record["status"], record["finish_reason"], record["content"])
    assert record["reasoning_source"] in ("field:reasoning_content", "none") or not record["reasoning"].strip()
    found = record["extraction"]
    if not record["content"].strip():
        assert found["value"] is None and not record["score"]["correct"], record["reasoning"]
    elif found["value"] is not None:
        assert normalize(found["raw"]) in normalize(record["content"]), (found, record["content"])


@pytest.fixture(scope="module")
def syllogism_runs(smollm2_thinking: LlamaServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """syllogisms (which asks for working) at max_tokens CUT and ROOM, streamed and not, with nothing but the
    prompt sent: temperature 0, no constraint, no probe; a request at a time, so that the server computes each
    the same way in both runs (see `thinking_server`)."""
    folder = tmp_path_factory.mktemp("syllogisms")
    runs = {}
    for way in ("stream", "no-stream"):
        runs[way] = folder / way
        flags = ("--constraint", "off", "--no-probe", "--temperature", "0", f"--{way}")
        run(smollm2_thinking, runs[way], *flags, task="syllogisms", limit=SYLLOGISMS, budget=f"{CUT},{ROOM}",
            concurrency=1)  # fmt: skip
    return runs


def test_statuses_follow_the_reply_and_nothing_is_read_from_the_thinking(syllogism_runs: dict[str, Path]) -> None:
    for out in syllogism_runs.values():
        records = final_records(out)
        assert len(records) == 2 * SYLLOGISMS
        for r in records:
            check_read_from_content(r)
        summary = json.loads((out / "summary.json").read_text())["tasks"]["syllogisms"]["summary"]
        assert sum(summary["statuses"].values()) == len(records) and summary["endpoint_errors"] == 0


def replay(server: LlamaServer, record: dict[str, Any]) -> dict[str, Any]:
    """The server's own reply to the request a record sent, whole: the oracle of what the run should have read."""
    body = {k: v for k, v in record["request"].items() if k != "stream_options"} | {"stream": False}
    got = httpx.post(f"{server.url}/chat/completions", json=body, timeout=600)
    assert got.status_code == 200, got.text
    return got.json()["choices"][0]["message"]


def test_the_budget_is_applied_as_the_server_applies_it(
    syllogism_runs: dict[str, Path], smollm2_thinking: LlamaServer
) -> None:
    records = final_records(syllogism_runs["stream"])
    cut = [r for r in records if r["level"] == f"max_tokens={CUT}"]
    room = [r for r in records if r["level"] == f"max_tokens={ROOM}"]
    # below the budget, max_tokens ends the thinking: SmolLM2 reasons longer than that about a syllogism
    assert any(r["status"] == "reasoning_truncated" for r in cut), [r["reasoning"] for r in cut]
    # above it, the server ends the thinking and the model goes on: never cut inside its thinking
    for r in room:
        sent = replay(smollm2_thinking, r)
        thought, said = sent.get("reasoning_content") or "", sent["content"]
        assert tokens(smollm2_thinking, thought) <= THINKING_BUDGET, thought  # the server closed it at the budget
        # the run read the server's thinking as thinking; where SmolLM2 went on thinking after the server's marker
        # and closed the block again itself, the text before its own `</think>` is thinking too
        assert r["reasoning"].startswith(thought), (r["reasoning"], thought)
        went_on = r["reasoning"][len(thought) :]
        assert said in (r["content"], f"{went_on}</think>{r['content']}"), (said, r["content"])
        assert r["status"] != "reasoning_truncated"
    answered = [r for r in room if r["content"].strip() and r["usage"]["completion_tokens"] > THINKING_BUDGET]
    assert answered, [(r["status"], r["content"]) for r in room]  # answers written after the server's `</think>`
    assert all(r["status"] in ("ok", "answer_truncated", "echoed") for r in answered)


def test_a_streamed_run_equals_the_whole_one_item_by_item(syllogism_runs: dict[str, Path]) -> None:
    def outcome(out: Path) -> dict[tuple[str, str], tuple[object, ...]]:
        kept = ("status", "finish_reason", "reasoning", "content")
        return {
            (r["level"], r["sample_id"]): (
                *(r[k] for k in kept),
                r["usage"]["completion_tokens"],
                r["extraction"]["value"],
                r["score"]["correct"],
            )
            for r in final_records(out)
        }

    streamed, whole = outcome(syllogism_runs["stream"]), outcome(syllogism_runs["no-stream"])
    assert streamed.keys() == whole.keys()
    differ = {key: (streamed[key], whole[key]) for key in streamed if streamed[key] != whole[key]}
    assert not differ, differ


def test_the_probe_pins_a_reasoning_field_and_live_accuracy_is_the_contents(
    smollm2_thinking: LlamaServer, tmp_path: Path
) -> None:
    out = tmp_path / "auto"
    # the default protocol, as a user types it
    run(smollm2_thinking, out, "--probe-time", PROBE_TIME, task="knowledge_qa", limit=CAPITALS, budget=str(ROOM))
    manifest = json.loads((out / "manifest.json").read_text())
    found, pinned = manifest["server"]["probe"], manifest["pinned"]
    assert (found["reasoning_source"], found["stream_reasoning_source"]) == ("field:reasoning_content",) * 2
    assert found["reasoning_fields"] == ["reasoning_content"]
    assert found["thinking_switch"]["chat_template_kwargs"] == "works"  # the template's enable_thinking
    assert pinned["thinking_opened"] is False  # the server splits the thinking off: nothing to split inline
    records = final_records(out)
    assert len(records) == CAPITALS
    for r in records:
        check_read_from_content(r)
        assert r["score"]["correct"] == names_the_gold(r), (r["content"], r["extraction"])
    assert abs(accuracy(out) - content_only(out)) <= 0.03


def test_a_server_that_ends_the_thinking_at_once_keeps_its_answers(llama_binary: Path, tmp_path: Path) -> None:
    """`--reasoning-budget 0`: the server closes the block before the first token. Where the model then stops,
    llama.cpp leaves a bare `</think>` in the whole reply's content (nothing streamed); the probe must not take that
    for a template whose thinking comes back inline, which would move every answer of the run into the thinking."""
    server = thinking_server(llama_binary, tmp_path / "llama-server.log", 0)
    server.start()
    try:
        out = tmp_path / "zero"
        flags = ("--constraint", "off", "--probe-time", PROBE_TIME, "--no-stream")
        run(server, out, *flags, task="knowledge_qa", limit=6, budget="48")
    finally:
        server.stop()
    assert json.loads((out / "manifest.json").read_text())["pinned"]["thinking_opened"] is False
    records = final_records(out)
    assert all(not r["reasoning"].strip() for r in records), [r["reasoning"] for r in records]
    assert any(r["content"].strip() for r in records)  # SmolLM2 answers some capitals with the thinking closed
    for r in records:
        check_read_from_content(r)
