"""`tool_choice` contracts: whether the server honours what a tool task asks of it.

One small tool (get_weather(city)) and a message that clearly asks for it, sent with each tool_choice: `auto` may
call or not (it always holds; the line says what it did), `required` gives at least one call ending
`finish_reason: "tool_calls"`, `none` gives no call, and a named function gives a call of that function (OpenAI's
API ends such a reply with `stop`, so its finish reason is not checked). Each with thinking on and off through
the switch the probe saw work (the server's default alone when none did), and thinking on once per reasoning effort
the run sweeps (none sent when it sweeps none).

Requests are non-streamed at temperature 0: one reply decides, and a reply that said nothing at all (no thinking,
no answer, no call) is no verdict: it is asked again with the next seed, as the probe's question is
(qualeval.run.probing). A request the server refuses (HTTP 4xx: "tool_choice not supported") breaks the contract,
saying so; a failure of the endpoint or the probe's time leaves it inconclusive. Run only when asked (a run with a
tool task, `qualeval probe --tools`): a plain probe sends none of these.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from qualeval.records import BUDGET, SEED, TRUNCATED, ProbeResult, ThinkingSwitch, ToolContract, contract_of
from qualeval.run.probepace import Pace, is_late
from qualeval.tasks import Sample, Task
from qualeval.wire import THINKING_SWITCHES, ChatRequest, ChatResponse, ChatSender, Message, switch_params

__all__ = [
    "PROBE_TOOL",
    "TOOL_CHOICES",
    "TOOL_QUESTION",
    "broken_for",
    "check_tools",
    "probe_tools",
    "tool_tasks",
    "working_switch",
]

PROBE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}},
            "required": ["city"],
        },
    },
}
TOOL_QUESTION = "What is the weather in Paris right now? Use the get_weather tool."
TOOL_CHOICES: tuple[str | dict[str, Any], ...] = (
    "auto",
    "required",
    "none",
    {"type": "function", "function": {"name": "get_weather"}},
)
_TRIES = 4
"""Replies asked for at most while each says nothing (the probe's REPEATS)."""


def working_switch(found: ProbeResult | None) -> ThinkingSwitch | None:
    """The first thinking switch the probe saw work, in order of preference; None: none did."""
    verdicts = found.thinking_switch if found else {}
    return next((switch for switch in THINKING_SWITCHES if verdicts.get(switch) == "works"), None)


def _conditions(switch: ThinkingSwitch | None, efforts: Sequence[str]) -> list[tuple[bool | None, str | None]]:
    """(thinking, effort) to check each contract under: an effort means nothing with thinking off."""
    each: list[str | None] = list(efforts) or [None]
    if switch is None:
        return [(None, effort) for effort in each]
    on: list[tuple[bool | None, str | None]] = [(True, effort) for effort in each]
    return [*on, (False, None)]


def _request(
    model: str, choice: str | dict[str, Any], switch: ThinkingSwitch | None, at: tuple[bool | None, str | None]
) -> ChatRequest:
    thinking, effort = at
    body = switch_params(switch, thinking) if switch is not None and thinking is not None else {}
    return ChatRequest(
        model=model,
        messages=(Message(role="user", content=TOOL_QUESTION),),
        max_tokens=BUDGET,
        temperature=0.0,
        seed=SEED,
        stream=False,
        reasoning_effort=effort,
        tools=(PROBE_TOOL,),
        tool_choice=choice,
        extra_body=body,
    )


def _said_nothing(resp: ChatResponse) -> bool:
    done = resp.completion
    return resp.error is None and not resp.tool_calls and not done.reasoning.strip() and not done.content.strip()


def _did(resp: ChatResponse) -> str:
    """What came back: the calls, or the answer's start, and the finish reason."""
    calls = ", ".join(f"{c.name}({c.arguments[:40]})" for c in resp.tool_calls)
    answer = resp.completion.content.strip().replace("\n", " ")[:50]
    said = f"called {calls}" if calls else f"no call, answered {answer!r}" if answer else "no call, no answer"
    return f"{said}; finish_reason {resp.finish_reason}"


def judge(choice: str | Mapping[str, Any], resp: ChatResponse) -> tuple[bool | None, str]:
    """Whether one reply kept the contract `choice` asks for, and what was seen."""
    if resp.error is not None:
        if resp.http_status is not None and 400 <= resp.http_status < 500 and not is_late(resp):
            return False, f"refused: {resp.error[:100]}"
        return None, f"no verdict: {resp.error[:100]}"
    if _said_nothing(resp):
        return None, f"no verdict: no reply said anything in {_TRIES} tries"
    if resp.unknown_question:  # the reference server's own refusal: no model answered, so nothing was kept or broken
        return None, "no verdict: the reference server's answer key does not hold the probe's question"
    seen = _did(resp)
    calls = resp.tool_calls
    if not calls and resp.completion.status in TRUNCATED and not resp.completion.content.strip():
        return None, f"no verdict: cut off while thinking ({seen})"  # it may still have called: no sign either way
    contract = contract_of(choice)
    if contract == "required":
        return bool(calls) and resp.finish_reason == "tool_calls", seen
    if contract == "none":
        return not calls, seen
    if contract == "named":
        name = choice.get("function", {}).get("name") if isinstance(choice, Mapping) else None
        return bool(calls) and all(c.name == name for c in calls), seen
    return True, seen  # auto: a call or an answer, both kept it


async def _heard(client: ChatSender, pace: Pace, request: ChatRequest) -> ChatResponse:
    resp = await pace.send(client, request)
    for step in range(1, _TRIES):
        if not _said_nothing(resp):
            break
        resp = await pace.send(client, request.model_copy(update={"seed": SEED + step}))
    return resp


async def probe_tools(
    client: ChatSender,
    model: str,
    *,
    switch: ThinkingSwitch | None,
    efforts: Sequence[str] = (),
    seconds: float,
) -> list[ToolContract]:
    """Every contract under every (thinking, effort) condition, within `seconds`."""
    pace = Pace(seconds, client.config.concurrency)
    checks = [(choice, at) for at in _conditions(switch, efforts) for choice in TOOL_CHOICES]
    replies = await asyncio.gather(*(_heard(client, pace, _request(model, c, switch, at)) for c, at in checks))
    out = []
    for (choice, (thinking, effort)), resp in zip(checks, replies, strict=True):
        held, seen = judge(choice, resp)
        out.append(ToolContract(tool_choice=choice, thinking=thinking, effort=effort, held=held, seen=seen))
    return out


async def check_tools(
    client: ChatSender, model: str, found: ProbeResult, *, efforts: Sequence[str] = (), seconds: float
) -> None:
    """Add the tool_choice contracts to a probe's result, through the switch it saw work, within `seconds`; each
    set left without a verdict for one reason is one entry of its `inconclusive`, the reason said (a reference
    server's unknown question is no timeout): `tool_choice required (thinking on, effort none): cut off ...`."""
    found.tool_contracts = await probe_tools(
        client, model, switch=working_switch(found), efforts=efforts, seconds=max(seconds, 0.0)
    )
    why: dict[str, list[str]] = {}
    for c in found.tool_contracts:
        if c.held is None:
            why.setdefault(c.seen.removeprefix("no verdict: "), []).append(f"{c.contract} ({c.where()})")
    found.inconclusive += [f"tool_choice {', '.join(which)}: {reason}" for reason, which in why.items()]


def tool_tasks(work: Iterable[tuple[Task, Sequence[Sample]]]) -> dict[str, list[str | dict[str, Any] | None]]:
    """Each task that offers tools, with the tool_choice of each of its items that does (None: not sent)."""
    tooled = {task.name: [s.tool_choice for s in samples if s.tools] for task, samples in work}
    return {name: choices for name, choices in tooled.items() if choices}


def broken_for(tasks: Mapping[str, Iterable[str | Mapping[str, Any] | None]], found: ProbeResult | None) -> list[str]:
    """One line per tool task whose tool_choice the probe found broken: the task, the contract and where it broke.
    `tasks`: each tool task's tool_choice values (None: not sent, the server's default)."""
    broken = found.broken() if found else []
    lines = []
    for task, choices in tasks.items():
        asked = {contract_of(c) for c in choices if c is not None}
        for contract in sorted(asked):
            hit = [c for c in broken if c.contract == contract]
            if hit:
                where = "; ".join(f"{c.where()}: {c.seen}" for c in hit)
                lines.append(f"{task}: tool_choice {contract} is broken on this server ({where})")
    return lines
