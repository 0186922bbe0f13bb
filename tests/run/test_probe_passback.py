"""The passback probe against the reference server's flavours: the same second turn with the earlier reasoning under
`reasoning`, under `reasoning_content`, inline and not at all; usage.prompt_tokens says which the server consumed
and which it dropped silently, a 400 which it rejected; passback_found picks what `--reasoning-passback auto`
sends; the CLI prints one line each and keeps them in `--json`."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qualeval.records import ClientConfig, PassbackCheck, ProbeResult, passback_found
from qualeval.run import check_passback
from qualeval.run.probepassback import THRESHOLD, judge_passback, passback_messages
from qualeval.wire import ChatClient, ChatResponse, failed_response
from tests.conftest import ask, fast_sim, sim_url


def _probed(flavour: str, **config: Any) -> ProbeResult:
    with sim_url(fast_sim(flavour, **config)) as url:

        async def go() -> ProbeResult:
            found = ProbeResult(base_url=url, model="sim", simulated=True)
            async with ChatClient(ClientConfig(base_url=url, api_key=None, concurrency=4)) as client:
                await check_passback(client, "sim", found, seconds=60.0)
            return found

        return asyncio.run(go())


def _verdicts(found: ProbeResult) -> dict[str, str]:
    return {c.sent: c.verdict for c in found.passback or ()}


def test_vllm_consumes_reasoning_and_drops_reasoning_content_silently() -> None:
    found = _probed("vllm")
    assert _verdicts(found) == {
        "none": "baseline",
        "reasoning": "consumed",
        "reasoning_content": "dropped",
        "inline": "consumed",  # inline <think> is content, which every server reads
    }
    dropped = next(c for c in found.passback or () if c.sent == "reasoning_content")
    assert dropped.added == 0 and dropped.line().startswith("passback reasoning_content: dropped silently")
    assert passback_found(found) == "reasoning"
    assert any("`reasoning_content` without an error" in n for n in found.notes)


@pytest.mark.parametrize("flavour", ["llamacpp", "sglang", "deepseek"])
def test_servers_that_read_reasoning_content_consume_it_and_drop_reasoning(flavour: str) -> None:
    found = _probed(flavour)
    verdicts = _verdicts(found)
    assert (verdicts["reasoning_content"], verdicts["reasoning"]) == ("consumed", "dropped")
    assert passback_found(found) == "reasoning_content"
    added = {c.sent: c.added for c in found.passback or ()}
    assert (added["reasoning_content"] or 0) > THRESHOLD  # the reasoning's few hundred tokens, counted


def test_a_server_that_reads_no_field_back_keeps_only_what_is_inline() -> None:
    found = _probed("openai")
    verdicts = _verdicts(found)
    assert (verdicts["reasoning"], verdicts["reasoning_content"], verdicts["inline"]) == (
        "dropped",
        "dropped",
        "consumed",
    )
    assert passback_found(found) == "inline"


def test_a_server_requiring_reasoning_content_rejects_the_others_and_auto_picks_it() -> None:
    found = _probed("deepseek", require_reasoning_content=True)
    assert _verdicts(found) == {
        "none": "rejected",
        "reasoning": "rejected",
        "reasoning_content": "consumed",  # taken only with it: no baseline count, yet the server needs it
        "inline": "rejected",
    }
    rejected = next(c for c in found.passback or () if c.sent == "reasoning")
    assert "HTTP 400" in rejected.detail and "must be passed back" in rejected.detail
    assert passback_found(found) == "reasoning_content"


def test_the_400_flag_refuses_only_a_tool_call_turn_without_reasoning_content() -> None:
    with sim_url(fast_sim("vllm", require_reasoning_content=True)) as url:
        from tests.conftest import chat

        plain = chat(url, ask("What is 2 + 2?", max_tokens=8, stream=False))
        without = chat(url, ask("x").model_copy(update={"messages": passback_messages("reasoning"), "stream": False}))
    assert plain.error is None
    assert without.http_status == 400 and without.error and "reasoning_content" in without.error


def _answer(prompt_tokens: int | None) -> ChatResponse:
    resp = failed_response(ask("x"), 200, None, "")
    return resp.model_copy(
        update={"error": None, "usage": resp.usage.model_copy(update={"prompt_tokens": prompt_tokens})}
    )


def test_a_verdict_needs_counts_on_both_sides() -> None:
    base = judge_passback("none", _answer(100), None)
    assert base.verdict == "baseline"
    assert judge_passback("reasoning", _answer(100 + THRESHOLD), base).verdict == "consumed"
    assert judge_passback("reasoning", _answer(100 + THRESHOLD - 1), base).verdict == "dropped"  # template markers
    assert judge_passback("reasoning", _answer(None), base).verdict == "inconclusive"  # no usage
    failed = judge_passback("none", failed_response(ask("x"), 503, None, "HTTP 503: busy"), None)
    assert failed.verdict == "inconclusive"  # a server error is no rejection
    assert judge_passback("reasoning", _answer(400), failed).verdict == "inconclusive"


def test_auto_is_undecided_when_a_check_is_inconclusive_or_none_ran() -> None:
    def result(**verdicts: str) -> ProbeResult:
        found = ProbeResult(base_url="x", model="m", simulated=True)
        found.passback = [PassbackCheck(sent=s, verdict=v) for s, v in verdicts.items()]  # type: ignore[arg-type]
        return found

    assert passback_found(None) is None
    assert passback_found(ProbeResult(base_url="x", model="m", simulated=True)) is None  # not checked
    dropped = {"none": "baseline", "reasoning": "dropped", "reasoning_content": "dropped", "inline": "dropped"}
    assert passback_found(result(**dropped)) == "none"
    assert passback_found(result(**{**dropped, "reasoning": "inconclusive"})) is None
    assert passback_found(result(**{**dropped, "inline": "consumed"})) == "inline"


def test_the_cli_prints_one_line_each_and_keeps_the_checks_in_its_json(tmp_path: Path) -> None:
    out = tmp_path / "probe.json"
    command = [sys.executable, "-m", "qualeval", "probe", "--sim", "vllm", "--passback", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("passback ")]
    assert [line.split(":")[0] for line in lines] == [
        "passback none",
        "passback reasoning",
        "passback reasoning_content",
        "passback inline",
    ]
    kept = ProbeResult.model_validate(json.loads(out.read_text()))
    assert passback_found(kept) == "reasoning"
