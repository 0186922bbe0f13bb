"""The probe: its own budget and seeds, checks repeated until the verdict is stable, llama.cpp's conventions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from qualeval.records import ClientConfig, ProbeResult
from qualeval.run import probe as probe_module
from qualeval.run.probe import probe, settle
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatRequest, ChatResponse
from tests.conftest import fast_sim, sim_url


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
