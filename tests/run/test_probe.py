"""The probe: its own budget and seeds, checks repeated until the verdict is stable, llama.cpp's conventions."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qualeval.reasoning import builtin_formats, split_completion
from qualeval.records import ClientConfig, ProbeResult, RunConfig
from qualeval.run import probing as probe_module
from qualeval.run.pinned import resolve_opened
from qualeval.run.probing import probe, settle
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatRequest, ChatResponse
from tests.conftest import fast_sim, sim_process, sim_url


def scripted(verdicts: list[tuple[str, bool]], calls: list[tuple[int, int]]) -> Any:
    """A check whose samples give these (verdict, starved) in turn, recording each (seed, budget) asked for."""
    answers = iter(verdicts)

    async def sample(seed: int, budget: int) -> tuple[str, str, bool]:
        calls.append((seed, budget))
        verdict, starved = next(answers)
        return verdict, f"detail of {verdict}", starved

    return sample


def test_a_check_stops_as_soon_as_two_samples_agree() -> None:
    calls: list[tuple[int, int]] = []
    verdict, _, seen = asyncio.run(settle(scripted([("enforced", False)] * 4, calls), 100, seed=7))
    assert (verdict, seen) == ("enforced", ["enforced", "enforced"])
    assert calls == [(7, 100), (8, 100)]  # fixed seeds, one per sample


def test_a_flipping_check_is_inconclusive() -> None:
    calls: list[tuple[int, int]] = []
    flips = [("enforced", False), ("ignored", False), ("enforced", False), ("ignored", False)]
    verdict, detail, seen = asyncio.run(settle(scripted(flips, calls), 100))
    assert verdict == "inconclusive" and seen == ["enforced", "ignored", "enforced", "ignored"]
    assert "no stable verdict" in detail and len(calls) == 4
    settled = [("enforced", False), ("ignored", False), ("ignored", False)]
    assert asyncio.run(settle(scripted(settled, []), 100))[0] == "ignored"


def test_a_starved_sample_is_sent_again_with_more_tokens() -> None:
    calls: list[tuple[int, int]] = []
    verdicts = [("inconclusive", True), ("inconclusive", True), ("enforced", False), ("enforced", False)]
    verdict, _, seen = asyncio.run(settle(scripted(verdicts, calls), 100))
    assert verdict == "enforced" and seen == ["enforced", "enforced"]
    assert [budget for _, budget in calls] == [100, 100, 200, 200]


def test_the_rejected_verdicts_of_two_samples_agree_whatever_their_text() -> None:
    rejected = [("rejected: HTTP 400: a", False), ("rejected: HTTP 400: b", False)]
    assert asyncio.run(settle(scripted(rejected, []), 100))[0].startswith("rejected")


def test_probe_requests_carry_its_own_budget_and_fixed_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[ChatRequest] = []
    real = ChatClient.chat

    async def spy(self: ChatClient, request: ChatRequest) -> ChatResponse:
        sent.append(request)
        return await real(self, request)

    monkeypatch.setattr(ChatClient, "chat", spy)
    with sim_url(fast_sim("vllm")) as url:

        async def go() -> ProbeResult:
            async with ChatClient(ClientConfig(base_url=url, api_key=None, concurrency=32)) as client:
                return await probe(client, "sim")

        result = asyncio.run(go())
    assert sent and all(r.seed is not None and r.seed >= probe_module.SEED for r in sent)
    assert {r.max_tokens for r in sent} == {probe_module.BUDGET}
    assert (result.budget, result.seed) == (probe_module.BUDGET, probe_module.SEED)
    assert all(len(check.samples) >= 2 for check in result.structured_outputs.values())


def test_llamacpp_grammar_and_top_level_json_schema_are_probed() -> None:
    with sim_url(fast_sim("llamacpp")) as url:

        async def go() -> ProbeResult:
            async with ChatClient(ClientConfig(base_url=url, api_key=None, concurrency=32)) as client:
                return await probe(client, "sim")

        result = asyncio.run(go())
    enforced = {mode for mode, check in result.structured_outputs.items() if check.verdict == "enforced"}
    assert enforced == {"response_format.json", "json_schema.json", "grammar.choice"}
    assert result.styles() == ["response_format", "json_schema", "grammar"]
    assert result.thinking_switch["chat_template_kwargs"] == "works"


NEVER_STOPS = ("--reasoning-tokens", "1000000", "--decode-ms", "5")
"""A healthy server whose model thinks past any budget, slowly: every probe request would take seconds. In its own
process, which is stopped however many requests it is still generating."""


def test_a_probe_that_runs_out_of_time_says_which_checks_are_inconclusive() -> None:
    with sim_process(*NEVER_STOPS) as url:

        async def go() -> ProbeResult:
            async with ChatClient(ClientConfig(base_url=url, api_key=None, concurrency=32)) as client:
                return await probe(client, "sim", seconds=0.5)

        result = asyncio.run(go())
    assert {"reasoning", "stream reasoning"} <= set(result.inconclusive)
    assert set(result.structured_outputs) <= set(result.inconclusive)
    assert all(v.startswith("inconclusive: out of time") for v in result.thinking_switch.values())  # never "rejected"
    assert {check.verdict for check in result.structured_outputs.values()} == {"inconclusive"}
    # nothing came back to say so: unknown, never "no"
    undecided = ("streaming_usage", "reasoning_tokens_reported", "hidden_reasoning")
    assert [getattr(result, name) for name in undecided] == [None, None, None]
    assert {"streaming usage", "reasoning tokens", "hidden reasoning"} <= set(result.inconclusive)
    assert any("out of time" in note for note in result.notes)


def test_a_run_goes_on_when_its_probe_runs_out_of_time(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", *NEVER_STOPS) as url:
        done = subprocess.run(
            [sys.executable, "-m", "qualeval", "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa",
             "--limit", "2", "--max-tokens", "8", "--probe-time", "0.5", "--out", str(out)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    told = [line for line in done.stderr.splitlines() if line.startswith("note: probe: inconclusive")]
    assert len(told) == 1 and "reasoning" in told[0] and "goes on with the defaults" in told[0]
    assert len((out / "records.jsonl").read_text().splitlines()) == 2
    found = json.loads((out / "manifest.json").read_text())["server"]["probe"]
    assert "reasoning" in found["inconclusive"] and found["seconds"] == 0.5
    # the manifest says unknown where the probe decided nothing, not "not reported"
    assert [found[k] for k in ("streaming_usage", "reasoning_tokens_reported", "hidden_reasoning")] == [None] * 3


def test_a_probe_that_fails_at_the_endpoint_says_so_and_the_run_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--burst", "--faults", "500=1") as url:
        done = subprocess.run(
            [sys.executable, "-m", "qualeval", "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa",
             "--limit", "2", "--max-retries", "0", "--out", str(out)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        alone = subprocess.run(
            [sys.executable, "-m", "qualeval", "probe", "--base-url", url, "--model", "sim", "--max-retries", "0"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert "Traceback" not in done.stderr + alone.stderr
    # the cause, not the time: every request failed at once, so "inconclusive within 90s" would mislead
    told = [line for line in done.stderr.splitlines() if line.startswith("note: probe: ")]
    assert len(told) == 1 and told[0].startswith("note: probe: every request failed at the endpoint ("), done.stderr
    assert "HTTP 500" in told[0] and "within" not in told[0]
    assert "its every request failed at the endpoint" in done.stderr  # why no structured-output convention
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 2 and {r["status"] for r in records} == {"transport_error"}  # the run's own requests
    assert done.returncode == 3  # for its own failed requests, as any run
    assert alone.returncode == 3 and alone.stderr.startswith("error: probe: "), alone.stderr


def test_a_bare_closing_marker_with_nothing_on_either_side_is_no_sign_of_an_opened_template(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """llama.cpp b11434 under Qwen3.5's template with `--reasoning-budget 0` (thinking ended at once), when the model
    then stops: `content: "</think>"` whole, nothing at all streamed. It returns any thinking in
    `reasoning_content` and strips the marker before an answer, so a run must neither split as `--thinking-opened`
    (which would move every answer into the thinking) nor be refused for streaming."""

    async def llamacpp(self: ChatClient, request: ChatRequest) -> ChatResponse:
        content = "" if request.stream else "</think>"
        done = split_completion(content=content, field=None, finish_reason="stop", formats=builtin_formats().values())
        return ChatResponse(completion=done.completion, raw_content=content, finish_reason="stop", http_status=200)

    async def listing(self: ChatClient) -> dict[str, Any]:
        return {"data": [{"id": "smollm2"}]}

    monkeypatch.setattr(ChatClient, "chat", llamacpp)
    monkeypatch.setattr(ChatClient, "models", listing)

    async def go() -> ProbeResult:
        async with ChatClient(ClientConfig(base_url="http://127.0.0.1:9/v1", api_key=None)) as client:
            return await probe(client, "smollm2", seconds=30)

    found = asyncio.run(go())
    assert (found.reasoning_source, found.stream_reasoning_source) == ("none", "none")
    assert {"reasoning", "stream reasoning"} <= set(found.inconclusive)  # an empty reply shows nothing either way
    config = RunConfig(base_url="http://127.0.0.1:9/v1", model="smollm2", tasks=["gsm8k"], out=tmp_path)
    for stream in (True, False):
        assert resolve_opened(config.model_copy(update={"stream": stream}), found) == (False, None)


def test_a_check_with_no_answer_advises_more_tokens_only_when_the_budget_cut_it() -> None:
    def reply(finish: str) -> ChatResponse:
        thought = split_completion(content=None, field=("reasoning_content", "Hello"), finish_reason=finish, formats=())
        return ChatResponse(completion=thought.completion, finish_reason=finish, http_status=200)

    cut, stopped = (probe_module._check("grammar.choice", reply(f)) for f in ("length", "stop"))
    assert (cut.verdict, stopped.verdict) == ("inconclusive", "inconclusive")
    assert "raise the token budget" in cut.detail  # the model was still thinking when the budget ran out
    assert "raise the token budget" not in stopped.detail and "stopped" in stopped.detail  # it ended in its thinking


def test_a_reply_that_says_nothing_is_asked_again_and_never_decides_a_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sampled thinking model that stops at once on some seeds (SmolLM2 under Qwen3.5's template, llama.cpp
    b11434: nothing at all on seed 1234, its thinking in `reasoning_content` on 1235): the probe asks again with the
    next seed, and a check is decided by the replies that said something."""
    silent = {probe_module.SEED, probe_module.SEED + 2}

    async def sampled(self: ChatClient, request: ChatRequest) -> ChatResponse:
        off = request.extra_body.get("chat_template_kwargs") == {"enable_thinking": False}
        thought = None if off or request.seed in silent else ("reasoning_content", "The capital is Paris.")
        content = "Paris" if off else ""
        formats = builtin_formats().values()
        done = split_completion(content=content, field=thought, finish_reason="stop", formats=formats)
        raw = dict([thought]) if thought else {}
        return ChatResponse(
            completion=done.completion, raw_content=content, raw_reasoning=raw, finish_reason="stop", http_status=200
        )

    async def listing(self: ChatClient) -> dict[str, Any]:
        return {"data": [{"id": "smollm2"}]}

    monkeypatch.setattr(ChatClient, "chat", sampled)
    monkeypatch.setattr(ChatClient, "models", listing)

    async def go() -> ProbeResult:
        async with ChatClient(ClientConfig(base_url="http://127.0.0.1:9/v1", api_key=None)) as client:
            return await probe(client, "smollm2", seconds=30)

    found = asyncio.run(go())
    assert (found.reasoning_source, found.stream_reasoning_source) == ("field:reasoning_content",) * 2
    assert found.reasoning_fields == ["reasoning_content"]
    assert not {"reasoning", "stream reasoning"} & set(found.inconclusive)
    assert found.thinking_switch["chat_template_kwargs"] == "works"
