"""Whether a server takes an earlier turn's reasoning back in, and under which field: `probe --passback`.

The same second turn is sent four times: a first question, the assistant's turn (a known reasoning text of a few
hundred tokens, a short answer and a call of the probe's tool), the tool's result, then a second question. The
reasoning goes back under `reasoning`, under `reasoning_content`, inline as `<think>...</think>` before the
content, and not at all. `usage.prompt_tokens` against the turn sent without it says which the server consumed
(the prompt grew by about the reasoning's size) and which it dropped without a word (it did not); a 4xx says it
rejected the turn (DeepSeek refuses a tool-call turn without its `reasoning_content`): an endpoint error, never a
silent pass. No judge and no answer are needed: a few tokens are generated, the prompt count decides.

The assistant turn comes before the last user message, where a chat template decides whether earlier reasoning is
kept (llama.cpp's `--reasoning-preserve`, Kimi's `preserve_thinking`); most templates keep the reasoning of turns
after it anyway.
"""

from __future__ import annotations

import asyncio

from qualeval.records import PASSBACK_FIELDS as SENT
from qualeval.records import SEED, PassbackCheck, PassbackSent, ProbeResult, ToolCall
from qualeval.run.probepace import Pace, is_late
from qualeval.run.probetools import PROBE_TOOL, TOOL_QUESTION
from qualeval.wire import ChatRequest, ChatResponse, ChatSender, Message

__all__ = [
    "PASSBACK_REASONING",
    "add_passback",
    "check_passback",
    "judge_passback",
    "passback_messages",
    "probe_passback",
]

PASSBACK_REASONING = " ".join(
    (
        "The user wants the current weather in Paris, and the get_weather tool can tell me.",
        "Before calling it I should make sure the arguments are right: the tool takes one argument, city, a string",
        "such as Paris. There is no country argument, so I pass the bare city name and nothing else. Paris is in",
        "France; there are other places called Paris, for instance Paris in Texas and Paris in Ontario, but a user",
        "who says Paris with no other detail almost always means the French capital, so I will not ask which one.",
        "The weather changes through the day, so an answer from memory would be stale: the tool is the right source.",
        "Once the result comes back I should report the temperature in degrees Celsius, since the user did not ask",
        "for Fahrenheit, and say what the sky looks like, cloudy, clear or rainy, in a single short sentence. If the",
        "tool fails I should say so plainly rather than guess a figure. If the user asks a follow-up question about",
        "clothing or plans, I can reason from the temperature and the sky: below ten degrees calls for a coat, light",
        "rain for an umbrella, and a clear warm day for light clothes. I will keep the answer brief and avoid",
        "repeating the question back to the user. Step one: call get_weather with city set to Paris. Step two: read",
        "the temperature and the sky from the result. Step three: answer in one sentence with both figures.",
    )
)
"""The known reasoning of the assistant's turn: a few hundred tokens in any tokenizer, so that the prompt grows by
far more than a template's markers when the server takes it in."""
_ANSWER = "Let me check the current weather in Paris."
_CALL = ToolCall(name="get_weather", arguments='{"city": "Paris"}', id="call_passback_probe")
_RESULT = '{"city": "Paris", "temperature_c": 18, "sky": "cloudy"}'
_FOLLOW_UP = "Thanks. What should I wear there today? Answer in one sentence."
_TOKENS = 16
"""Tokens generated per variant: the prompt count decides, the answer is not read."""
THRESHOLD = len(PASSBACK_REASONING) // 12
"""Prompt tokens over the baseline that mean the reasoning was taken in: a third of its size at four characters a
token, far above the few tokens of markers a template adds or leaves out."""


def passback_messages(sent: PassbackSent) -> tuple[Message, ...]:
    """The second turn with the earlier reasoning sent back as `sent` says."""
    content = f"<think>{PASSBACK_REASONING}</think>{_ANSWER}" if sent == "inline" else _ANSWER
    assistant = Message(
        role="assistant",
        content=content,
        tool_calls=(_CALL,),
        reasoning=PASSBACK_REASONING if sent == "reasoning" else None,
        reasoning_content=PASSBACK_REASONING if sent == "reasoning_content" else None,
    )
    return (
        Message(role="user", content=TOOL_QUESTION),
        assistant,
        Message(role="tool", content=_RESULT, tool_call_id=_CALL.id),
        Message(role="user", content=_FOLLOW_UP),
    )


def _request(model: str, sent: PassbackSent) -> ChatRequest:
    return ChatRequest(
        model=model,
        messages=passback_messages(sent),
        max_tokens=_TOKENS,
        temperature=0.0,
        seed=SEED,
        stream=False,
        tools=(PROBE_TOOL,),
    )


def _failed(sent: PassbackSent, resp: ChatResponse) -> PassbackCheck:
    error = (resp.error or "")[:120]
    status = resp.http_status
    if status is not None and 400 <= status < 500 and not is_late(resp):
        return PassbackCheck(sent=sent, verdict="rejected", detail=f"HTTP {status}: {error}")
    return PassbackCheck(sent=sent, verdict="inconclusive", detail=error)


def judge_passback(sent: PassbackSent, resp: ChatResponse, baseline: PassbackCheck | None) -> PassbackCheck:
    """What one variant's reply says, counted against the baseline's check (None: this is the baseline)."""
    if resp.error is not None:
        return _failed(sent, resp)
    tokens = resp.usage.prompt_tokens
    if tokens is None:
        return PassbackCheck(sent=sent, verdict="inconclusive", detail="the server reported no usage.prompt_tokens")
    if baseline is None:
        return PassbackCheck(sent=sent, verdict="baseline", prompt_tokens=tokens, detail=f"{tokens} prompt tokens")
    if baseline.prompt_tokens is None:
        if baseline.verdict == "rejected":  # taken only with it: the server needs this field, so it reads it
            why = f"{tokens} prompt tokens; the server rejects the turn without it"
            return PassbackCheck(sent=sent, verdict="consumed", prompt_tokens=tokens, detail=why)
        return PassbackCheck(sent=sent, verdict="inconclusive", prompt_tokens=tokens, detail="no baseline count")
    added = tokens - baseline.prompt_tokens
    verdict = "consumed" if added >= THRESHOLD else "dropped"
    detail = f"{tokens} prompt tokens, {added:+d} over none"
    return PassbackCheck(sent=sent, verdict=verdict, prompt_tokens=tokens, added=added, detail=detail)


async def probe_passback(client: ChatSender, model: str, *, seconds: float) -> list[PassbackCheck]:
    """Every variant, sent together within `seconds`, the baseline first in the list."""
    pace = Pace(seconds, client.config.concurrency)
    replies = await asyncio.gather(*(pace.send(client, _request(model, sent)) for sent in SENT))
    baseline = judge_passback("none", replies[0], None)
    return [baseline] + [judge_passback(s, r, baseline) for s, r in zip(SENT[1:], replies[1:], strict=True)]


async def check_passback(client: ChatSender, model: str, found: ProbeResult, *, seconds: float) -> None:
    """Add the passback checks to a probe's result, within `seconds` (add_passback)."""
    add_passback(found, await probe_passback(client, model, seconds=max(seconds, 0.0)))


def add_passback(found: ProbeResult, checks: list[PassbackCheck]) -> None:
    """Put the passback checks in a probe's result: each one left without a verdict is an entry of its
    `inconclusive` (`passback reasoning: no baseline count`), each field dropped silently a note."""
    found.passback = checks
    for check in checks:
        if check.verdict == "inconclusive":
            found.inconclusive.append(f"passback {check.sent}: {check.detail}")
        elif check.verdict == "dropped" and check.sent != "inline":
            found.notes.append(f"the server drops earlier reasoning sent under `{check.sent}` without an error")
