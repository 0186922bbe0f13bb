"""The real llama-server captures (../shared/data/captures/llamacpp-b11434, INDEX.md there) through the client's
parsing and split path, and the extraction after it: each chat completion's status, reasoning/content split and
extracted answer, against what the server itself said.

tests/sim/test_replay.py holds the reference server to the captures' shapes, and tests/wire/test_transport.py
replays a few for timing and token counts; here every 200 chat completion goes through ChatClient over a real
socket (test_transport's replaying server), and every row of the three truncation scans through ChatClient's
reading of a whole body.

The truth is the server's own split: its `reasoning_content` and `content`. Where it did not split (a request
with `reasoning_format: none`) the truth is the same generation split by the server in its twin capture; where
llama-server cut the reply inside the opening tag (its `<think>` quirk, INDEX.md) nothing was said yet.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from qualeval.records import ClientConfig
from qualeval.scoring import decide
from qualeval.tasks import Sample, load_task
from qualeval.wire import ChatClient, ChatResponse
from tests.conftest import ask
from tests.wire.test_transport import CAPTURES, capture, replay

NOTHING = "nothing"
"""The reply was cut inside `<think>`: no reasoning and no answer yet."""

# capture: (status, extracted answer, whose split is the truth: "server" for its own, NOTHING, or a twin capture)
CHAT: dict[str, tuple[str, str | None, str]] = {
    "auto__json_schema_nonstream": ("ok", "314", "server"),
    "auto__nothink_answer_nonstream": ("ok", "4", "server"),
    "auto__nothink_but_think_grammar_nonstream": ("ok", "42", "server"),  # thinking off: the raw block stays
    "auto__reasoning_effort_none_nonstream": ("ok", "4", "server"),
    "auto__req_reasoning_format_legacy_nonstream": ("ok", "148", "server"),
    "auto__req_reasoning_format_legacy_stream": ("ok", "148", "server"),
    "auto__req_reasoning_format_none_nonstream": ("ok", "148", "auto__think_nonstream"),
    "auto__think_nonstream": ("ok", "148", "server"),
    "auto__think_stream": ("ok", "148", "server"),
    "auto__trunc_in_reasoning_nonstream": ("reasoning_truncated", None, "server"),
    "auto__trunc_mt1_nonstream": ("reasoning_truncated", None, NOTHING),
    "auto__trunc_mt1_stream": ("reasoning_truncated", None, NOTHING),
    "deepseek__err_grammar_and_schema": ("answer_truncated", None, "server"),  # '{"answe' and the budget ended
    "deepseek__err_unknown_model": ("answer_truncated", None, "server"),  # gibberish up to max_tokens
    "deepseek__json_schema_nonstream": ("ok", "314", "server"),
    "deepseek__json_schema_nothink_nonstream": ("ok", "8", "server"),
    "deepseek__json_schema_seed1_nonstream": ("reasoning_truncated", None, "server"),
    "deepseek__json_schema_seed2_nonstream": ("ok", "6", "server"),
    "deepseek__json_schema_seed2_stream": ("ok", "6", "server"),
    "deepseek__json_schema_stream": ("ok", "314", "server"),
    # gibberish cut by max_tokens, its last line ending '4,{"r…': the last-number rung reads 4, a cut answer
    "deepseek__no_grammar_nonstream": ("answer_truncated", "4", "server"),
    "deepseek__no_grammar_stream": ("answer_truncated", "4", "server"),
    "deepseek__nothink_answer_nonstream": ("ok", "4", "server"),
    "deepseek__nothink_answer_stream": ("ok", "4", "server"),
    "deepseek__nothink_but_think_grammar_nonstream": ("ok", "42", "server"),
    "deepseek__req_reasoning_format_none_nonstream": ("ok", "802", "deepseek__think_nonstream"),
    "deepseek__req_reasoning_format_none_stream": ("ok", "802", "deepseek__think_stream"),
    "deepseek__stream_no_include_usage": ("ok", "802", "server"),
    "deepseek__think_nonstream": ("ok", "802", "server"),
    "deepseek__think_stream": ("ok", "802", "server"),
    "deepseek__think_tight_nonstream": ("ok", "0", "server"),
    "deepseek__think_tight_stream": ("ok", "0", "server"),
    "deepseek__trunc_in_reasoning_nonstream": ("reasoning_truncated", None, "server"),
    "deepseek__trunc_in_reasoning_stream": ("reasoning_truncated", None, "server"),
    "deepseek__trunc_mt1_nonstream": ("reasoning_truncated", None, NOTHING),
    "deepseek__trunc_mt1_stream": ("reasoning_truncated", None, NOTHING),
    "deepseek__trunc_mt2_stream": ("reasoning_truncated", None, NOTHING),
    "deepseek__trunc_mt3_stream": ("reasoning_truncated", None, "server"),
    "forcedopen_deepseek__fo_json_schema_nonstream": ("reasoning_truncated", None, "server"),
    "forcedopen_deepseek__fo_no_grammar_nonstream": ("reasoning_truncated", None, "server"),
    "forcedopen_deepseek__fo_nothink_answer_nonstream": ("ok", "4", "server"),
    "forcedopen_deepseek__fo_req_reasoning_format_none_nonstream": (
        "ok",
        "6",
        "forcedopen_deepseek__fo_think_nonstream",
    ),
    "forcedopen_deepseek__fo_think_nonstream": ("ok", "6", "server"),
    "forcedopen_deepseek__fo_think_stream": ("ok", "6", "server"),
    "forcedopen_deepseek__fo_trunc_in_reasoning_nonstream": ("reasoning_truncated", None, "server"),
    "forcedopen_deepseek__fo_trunc_in_reasoning_stream": ("reasoning_truncated", None, "server"),
}
SCANS = (
    "deepseek__trunc_scan_G_THINK",
    "deepseek__trunc_scan_G_THINK_TIGHT",
    "forcedopen_deepseek__trunc_scan_G_FORCED",
)


def _present(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} missing: the capture tests read ../shared/data/captures")


def _server_split(body: bytes, streamed: bool) -> tuple[str, str, str | None]:
    """(reasoning, content, finish_reason) as the server sent them, joined over a stream's deltas."""
    if not streamed:
        choice = json.loads(body)["choices"][0]
        message = choice["message"]
        return message.get("reasoning_content") or "", message.get("content") or "", choice["finish_reason"]
    reasoning, content, finish = [], [], None
    for event in body.split(b"\n\n"):
        if not event.startswith(b"data: {"):
            continue
        for choice in json.loads(event[6:])["choices"]:
            reasoning.append(choice["delta"].get("reasoning_content") or "")
            content.append(choice["delta"].get("content") or "")
            finish = choice.get("finish_reason") or finish
    return "".join(reasoning), "".join(content), finish


def _truth(name: str, source: str) -> tuple[str, str]:
    if source == NOTHING:
        return "", ""
    request, _, body = capture(source if source != "server" else name)
    reasoning, content, _ = _server_split(body, bool(request.get("stream")))
    return reasoning, content


def _thinking(request: dict[str, Any]) -> bool | None:
    """What a user sends as --no-thinking to get the request the capture made."""
    off = request.get("chat_template_kwargs", {}).get("enable_thinking") is False
    return False if off or request.get("reasoning_effort") == "none" else None


def _extracted(response: ChatResponse) -> str | None:
    task = load_task("gsm8k")  # a numeric answer, read by the same ladder as every number task
    sample = Sample(id="capture", task=task.name, messages=(), gold="0")
    return decide(task, sample, response.completion).extraction.value


def test_every_chat_completion_capture_is_held() -> None:
    _present(CAPTURES)
    chats = set()
    for path in CAPTURES.glob("*__*.txt"):
        raw = path.read_bytes()
        status = b"".join(raw.partition(b"### RESPONSE")[2].split(b"\n", 2)[1:2])
        if raw.startswith(b"### SCENARIO") and b"POST /v1/chat/completions" in raw[:200] and b" 200 " in status:
            chats.add(path.stem)
    assert chats == set(CHAT)


@pytest.mark.parametrize("name", sorted(CHAT))
def test_a_captured_chat_completion_splits_and_extracts_as_the_server_said(name: str) -> None:
    _present(CAPTURES / f"{name}.txt")
    status, extracted, source = CHAT[name]
    request, _, _ = capture(name)
    response = replay(name, thinking=_thinking(request))[0]
    done = response.completion
    reasoning, content = _truth(name, source)
    if source == "server":  # the server split it: the client keeps its fields to the byte
        assert (done.reasoning, done.content) == (reasoning, content)
        assert done.reasoning_source == ("field:reasoning_content" if reasoning else "none")
    else:  # the client split the raw text itself: the same split, whitespace at the edges aside
        assert (done.reasoning.strip(), done.content.strip()) == (reasoning.strip(), content.strip())
    assert (done.status, _extracted(response)) == (status, extracted)


def _scan_rows(name: str) -> list[tuple[int, bytes]]:
    text = (CAPTURES / f"{name}.txt").read_bytes()
    return [(int(b), body) for b, body in re.findall(rb"### max_tokens=(\d+) HTTP 200\n([^\n]*)", text)]


def _through_the_client(body: bytes, budget: int) -> ChatResponse:
    def answer(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"Content-Type": "application/json; charset=utf-8"})

    async def go() -> ChatResponse:
        config = ClientConfig(base_url="http://llama.invalid/v1", api_key=None, max_retries=0)
        async with ChatClient(config, transport=httpx.MockTransport(answer)) as client:
            return await client.chat(ask("What is 2+3? Think, then answer as 'Answer: N'.", max_tokens=budget))

    return asyncio.run(go())


def _scan_truth(budget: int, body: bytes) -> tuple[str, str, str, str | None]:
    """(reasoning, content, status, extracted) as the server's reply says."""
    reasoning, content, finish = _server_split(body, streamed=False)
    if content in ("<think>", "<think>\n") and not reasoning:  # the quirk: cut inside the opening tag
        content = ""
    status = "ok" if finish == "stop" else "answer_truncated" if content else "reasoning_truncated"
    if finish == "stop" and json.loads(body)["usage"]["completion_tokens"] == budget:
        # a stop at exactly max_tokens is read as the budget's cut, by design (wire/response.py, _finish: some
        # budget enforcers answer so); llama-server counts the grammar's closing token, and its stop is a stop
        status = "answer_truncated"
    number = re.search(r"Answer: (\d+)", content)
    if status == "answer_truncated" and re.search(r"\d\.?\Z", content):
        number = None  # cut where the number may go on ("Answer: 14" of 148): no answer is read off it
    return reasoning, content, status, str(int(number.group(1))) if number else None


@pytest.mark.parametrize("name", SCANS)
def test_each_budget_of_a_truncation_scan_has_the_status_split_and_answer_the_server_gave(name: str) -> None:
    """One generation cut at every max_tokens from 1 up: inside the opening tag, in the thinking, while
    `</think>` is spelt, in the answer, and whole. Status follows where the budget ran out; a cut answer that
    ends on its number is read for none ("Answer: 14" of 148: the cut may have fallen inside it). Edge
    whitespace aside: cut right after `<think>\\n`, the client keeps that newline as the thinking so far."""
    _present(CAPTURES / f"{name}.txt")
    rows = _scan_rows(name)
    assert len(rows) > 25
    wrong = []
    for budget, body in rows:
        reasoning, content, status, extracted = _scan_truth(budget, body)
        response = _through_the_client(body, budget)
        done = response.completion
        got = (done.reasoning.strip(), done.content.strip(), done.status, _extracted(response))
        if got != (reasoning.strip(), content.strip(), status, extracted):
            wrong.append(f"max_tokens={budget}: {got} where the server says {(reasoning, content, status, extracted)}")
    assert not wrong, f"{name}:\n" + "\n".join(wrong)
