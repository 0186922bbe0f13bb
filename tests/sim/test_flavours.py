"""Every flavour of the reference server, over real HTTP, through the client: ok, truncated, empty."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from qualeval.sim import FLAVOURS
from qualeval.sim.answerkey import AnswerKey
from tests.conftest import GSM8K, ask, chat, fast_sim, sim_url

QUESTION = json.loads(GSM8K.read_text().split("\n", 1)[0])["question"] if GSM8K.exists() else ""
GOLD = "18"

# what each flavour puts on the wire: the reasoning field names seen, and where the reasoning is found
EXPECTED = {
    "vllm": ({"reasoning"}, "field:reasoning"),
    "vllm-0.13": ({"reasoning", "reasoning_content"}, "field:reasoning"),
    "vllm-0.10": ({"reasoning_content"}, "field:reasoning_content"),
    "sglang": ({"reasoning_content"}, "field:reasoning_content"),
    "llamacpp": ({"reasoning_content"}, "field:reasoning_content"),
    "ollama": ({"reasoning"}, "field:reasoning"),
    "deepseek": ({"reasoning_content"}, "field:reasoning_content"),
    "openrouter": ({"reasoning"}, "field:reasoning"),
    "openai": (set(), "none"),
    "inline-think": (set(), "inline:paired"),
    "think-close-only": (set(), "inline:close-only"),
    "harmony": (set(), "channel:harmony"),
    "plain": (set(), "none"),
}


@pytest.fixture(scope="module", params=sorted(FLAVOURS))
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    if not GSM8K.exists():
        pytest.skip("shared data missing")
    with sim_url(fast_sim(request.param, answers=GSM8K, retry_after=0.01)) as url:
        yield request.param, url


def test_the_expected_table_covers_every_flavour() -> None:
    assert set(EXPECTED) | {"vllm-qwen3-leak"} == set(FLAVOURS)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_ok(server: tuple[str, str], stream: bool) -> None:
    flavour, url = server
    resp = chat(url, ask(QUESTION, stream=stream), {"x-qualeval-sim": "outcome=correct"})
    if flavour == "vllm-qwen3-leak":
        # non-stream leaks "A</think>\n\nB" (we split it); the stream leaves no boundary, so the trace
        # stays in the content: the documented leak, reported as such rather than hidden
        expected = "none" if stream else "inline:close-only"
        assert resp.completion.reasoning_source == expected and GOLD in resp.completion.content
        return
    fields, source = EXPECTED[flavour]
    got = resp.completion
    assert resp.error is None, resp.error
    assert got.status == "ok"
    assert set(resp.raw_reasoning) == fields
    assert got.reasoning_source == source
    assert GOLD in got.content
    assert resp.finish_reason == "stop"
    if flavour not in ("openai", "plain"):
        assert got.reasoning and got.reasoning_closed
        assert "<think>" not in got.content and "<|" not in got.content
    assert resp.usage.prompt_tokens and resp.usage.completion_tokens
    if flavour in ("vllm", "sglang", "deepseek", "openai", "openrouter"):
        assert not resp.usage.reasoning_estimated and resp.usage.reasoning_tokens > 0
    else:
        assert resp.usage.reasoning_estimated
    if stream:
        assert resp.timing.ttft is not None and resp.timing.first_content is not None
        assert not resp.usage.completion_estimated, "include_usage was asked for"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_budget_runs_out_inside_reasoning(server: tuple[str, str], stream: bool) -> None:
    flavour, url = server
    budget = 3 if flavour == "plain" else 20
    resp = chat(url, ask(QUESTION, stream=stream, max_tokens=budget), {"x-qualeval-sim": "reasoning=200"})
    got = resp.completion
    assert resp.finish_reason == "length"
    if flavour == "plain":
        assert got.status == "answer_truncated"  # no thinking: the budget cut the answer itself
        return
    if flavour in ("vllm-qwen3-leak", "think-close-only"):
        # no closing tag ever came and the client was not told the template opens the block: unknowable
        assert got.status == "answer_truncated" and got.reasoning == ""
        return
    assert got.status == "reasoning_truncated", (flavour, got)
    assert got.content == ""
    assert not got.reasoning_closed
    if flavour != "openai":
        assert got.reasoning


@pytest.mark.parametrize("flavour", ["vllm-qwen3-leak", "think-close-only"])
def test_template_opened_truncation_is_found_when_declared(flavour: str) -> None:
    with sim_url(fast_sim(flavour)) as url:
        for stream in (True, False):
            resp = chat(
                url,
                ask("anything", stream=stream, max_tokens=20),
                {"x-qualeval-sim": "reasoning=200"},
                thinking_opened=True,
            )
            assert resp.completion.status == "reasoning_truncated"
            assert resp.completion.reasoning_source == "inline:unclosed"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_finished_with_empty_answer(server: tuple[str, str], stream: bool) -> None:
    flavour, url = server
    resp = chat(url, ask(QUESTION, stream=stream), {"x-qualeval-sim": "outcome=empty"})
    if flavour == "vllm-qwen3-leak" and stream:
        assert resp.completion.status == "ok" and resp.completion.reasoning_source == "none"  # the leak
        return
    assert resp.completion.status == "empty_content", flavour
    assert resp.completion.content.strip() == ""


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_budget_runs_out_inside_answer(server: tuple[str, str], stream: bool) -> None:
    flavour, url = server
    budget = 3 if flavour == "plain" else 24
    resp = chat(url, ask(QUESTION, stream=stream, max_tokens=budget), {"x-qualeval-sim": "reasoning=20"})
    assert resp.finish_reason == "length"
    assert resp.completion.status == "answer_truncated", (flavour, resp.completion)
    assert resp.completion.content.strip()


def test_qwen3_leak() -> None:
    with sim_url(fast_sim("vllm-qwen3-leak")) as url:
        whole = chat(url, ask("What is 2+2?", stream=False))
        streamed = chat(url, ask("What is 2+2?", stream=True))
    assert whole.raw_reasoning == {} and "</think>" in (whole.raw_content or "")
    assert whole.completion.reasoning_source == "inline:close-only"
    assert "</think>" not in whole.completion.content
    assert "</think>" not in (streamed.raw_content or "")  # vLLM drops the lone special-token chunk


def test_thinking_switch_turns_reasoning_off() -> None:
    with sim_url(fast_sim("vllm")) as url:
        resp = chat(url, ask("What is 2+2?", thinking=False))
    assert resp.completion.reasoning == "" and resp.completion.content


def test_answer_key_accuracy_and_determinism(gsm8k_rows: list[dict[str, str]]) -> None:
    key = AnswerKey.load(GSM8K)
    assert len(key.entries) == len(gsm8k_rows) == 1319
    assert key.entries[0].answer == "18"
    rows = gsm8k_rows[:60]
    with sim_url(fast_sim("vllm", answers=GSM8K)) as url:
        first = [chat(url, ask(r["question"], stream=False)).completion.content for r in rows]
        again = [chat(url, ask(r["question"], stream=False)).completion.content for r in rows]
    assert first == again
    golds = [r["answer"].rsplit("####", 1)[1].strip().replace(",", "") for r in rows]
    right = sum(f" {g}" in c.replace(",", "") for g, c in zip(golds, first, strict=True))
    assert 36 <= right <= 58  # accuracy 0.8 on 60 items


def test_raw_wire_keys_follow_the_documented_order() -> None:
    """Spot checks against literal examples in wire-formats.md."""

    def lines(flavour: str, **body: object) -> list[dict[str, object]]:
        with sim_url(fast_sim(flavour)) as url:
            payload = {
                "model": "sim",
                "messages": [{"role": "user", "content": "hi"}],
                "stream": True,
                "stream_options": {"include_usage": True},
                **body,
            }
            text = httpx.post(f"{url}/chat/completions", json=payload).text
        return [json.loads(ln[6:]) for ln in text.split("\n") if ln.startswith("data: {")]

    v13 = lines("vllm-0.13")
    assert list(v13[0]) == ["id", "object", "created", "model", "choices", "prompt_token_ids"]
    assert v13[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "reasoning_content": None}
    assert list(v13[1]["choices"][0]) == ["index", "delta", "logprobs", "finish_reason", "token_ids"]
    content = next(c for c in v13 if c["choices"] and "content" in c["choices"][0]["delta"] and c is not v13[0])
    assert list(content["choices"][0]["delta"]) == ["content", "reasoning_content"]
    assert v13[-1]["choices"] == [] and list(v13[-1]["usage"]) == ["prompt_tokens", "total_tokens", "completion_tokens"]
    finish = v13[-2]["choices"][0]
    assert finish["finish_reason"] == "stop" and list(finish) == [
        "index",
        "delta",
        "logprobs",
        "finish_reason",
        "stop_reason",
        "token_ids",
    ]
    llama = lines("llamacpp")
    assert list(llama[0]) == ["choices", "created", "id", "model", "system_fingerprint", "object"]
    assert llama[0]["choices"][0]["delta"] == {"role": "assistant", "content": None}
    assert llama[-2]["choices"][0]["delta"] == {} and "timings" in llama[-1]
    ds = lines("deepseek")
    assert ds[0]["choices"][0]["delta"] == {"role": "assistant", "content": None, "reasoning_content": ""}
    assert ds[-1]["choices"][0]["finish_reason"] == "stop" and "usage" in ds[-1]
    sg = lines("sglang")
    assert sg[-2]["choices"][0]["delta"] == {"reasoning_content": None} and "matched_stop" in sg[-2]["choices"][0]
    assert "reasoning_tokens" in sg[-1]["usage"]
    oa = lines("openai")
    assert all("obfuscation" in c for c in oa)
    assert not any("reasoning" in json.dumps(c["choices"]) for c in oa)


def test_unknown_parameters_are_rejected_by_the_openai_flavour() -> None:
    with sim_url(fast_sim("openai")) as url:
        resp = chat(url, ask("hi", thinking=False))
    assert resp.completion.status == "transport_error"
    assert resp.http_status == 400 and resp.attempts == 1
    assert "chat_template_kwargs" in (resp.error or "")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("fault", ["429", "503", "drop", "malformed", "empty-choices"])
def test_faults_are_retried_in_every_flavour(server: tuple[str, str], fault: str, stream: bool) -> None:
    flavour, url = server
    resp = chat(url, ask(f"{QUESTION} {fault}", stream=stream), {"x-qualeval-sim": f"fault={fault},fault_times=1"})
    assert resp.attempts == 2 and resp.error is None, (flavour, resp.error)
    assert resp.completion.status == "ok" and resp.completion.content.strip()
