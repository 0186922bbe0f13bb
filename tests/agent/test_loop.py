"""The agent's loop against a scripted sender and a tiny environment: what each request carries (history, tools,
the reasoning passed back), when a turn and an episode end, and how a killed episode is replayed."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from qualeval.agent import Episode, Stamp, run_episode
from qualeval.errors import InputError
from qualeval.reasoning import Completion
from qualeval.records import AppliedPassback, StepRecord, Timing, ToolCall, Usage, episode_steps
from qualeval.run.episodic import step_judge
from qualeval.wire import ChatRequest, ChatResponse, Message

TOOL = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
LATER = {"type": "function", "function": {"name": "reset", "parameters": {"type": "object"}}}


@dataclass(frozen=True)
class Spec:
    turns: tuple[tuple[dict[str, str], ...], ...] = (
        ({"role": "user", "content": "add 1"},),
        ({"role": "user", "content": "and now?"},),
    )
    tools: tuple[dict[str, Any], ...] = (TOOL,)
    added: dict[int, tuple[dict[str, Any], ...]] = field(default_factory=lambda: {1: (LATER,)})
    max_steps: int = 20

    def tools_at(self, turn: int) -> tuple[dict[str, Any], ...]:
        return (*self.tools, *(t for at in sorted(self.added) if at <= turn for t in self.added[at]))


class Counter:
    """The environment: a total that `add` moves."""

    def __init__(self) -> None:
        self.total = 0

    def execute(self, call: ToolCall) -> str:
        if call.name != "add":
            return f"Error during execution: no function {call.name}"
        self.total += 1
        return str(self.total)


def reply(content: str = "", calls: Sequence[ToolCall] = (), reasoning: str = "", status: Any = "ok") -> ChatResponse:
    return ChatResponse(
        completion=Completion(content=content, reasoning=reasoning, status=status),
        tool_calls=tuple(calls),
        usage=Usage(reasoning_tokens=3, answer_tokens=2),
        timing=Timing(end=10.0),
        error="HTTP 400: unknown field reasoning" if status == "transport_error" else None,
    )


class Script:
    """A sender that answers from a list, keeping what it was sent."""

    def __init__(self, replies: list[ChatResponse]) -> None:
        self.replies = list(replies)
        self.sent: list[ChatRequest] = []

    async def __call__(self, request: ChatRequest) -> ChatResponse:
        self.sent.append(request)
        return self.replies.pop(0)


ADD = ToolCall(name="add", arguments="{}", id="c1")
FIRST = ChatRequest(model="m", messages=(Message(role="user", content="add 1"),), tools=(TOOL,))


def run(
    script: Script,
    env: Counter,
    passback: AppliedPassback = "reasoning_content",
    spec: Spec | None = None,
    done: Sequence[StepRecord] = (),
    written: list[StepRecord] | None = None,
) -> Episode:
    return asyncio.run(
        run_episode(
            script,
            FIRST,
            spec or Spec(),
            env.execute,
            passback=passback,
            stamp=Stamp("item-1", "t"),
            on_step=None if written is None else written.append,
            done=done,
        )
    )


def two_turns() -> list[ChatResponse]:
    return [reply(calls=[ADD], reasoning="I add."), reply("1", reasoning="Done."), reply("still 1")]


def test_calls_are_executed_and_sent_back_with_their_ids_until_an_answer_then_the_next_turn() -> None:
    script, env, written = Script(two_turns()), Counter(), list[StepRecord]()
    episode = run(script, env, written=written)
    assert env.total == 1 and len(script.sent) == 3 and episode.stopped is None and not episode.forced_quit
    second = [m.as_body() for m in script.sent[1].messages]
    assert second[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}],
        "reasoning_content": "I add.",
    }
    assert second[2] == {"role": "tool", "content": "1", "tool_call_id": "c1"}
    third = script.sent[2]
    assert [m.role for m in third.messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert third.tools == (TOOL, LATER) and script.sent[0].tools == (TOOL,)  # the tool added at turn 1
    assert episode.calls_by_turn == [[(ADD,), ()], [()]]
    # each step holds what it added, never the whole history
    assert [[m.role for m in s.sent] for s in written] == [["user"], ["assistant", "tool"], ["assistant", "user"]]
    assert [(s.turn, s.step) for s in written] == [(0, 0), (0, 1), (1, 0)] and written[0].results == ("1",)


@pytest.mark.parametrize(
    ("passback", "expected"),
    [
        ("none", {"content": ""}),
        ("reasoning", {"content": "", "reasoning": "I add."}),
        ("reasoning_content", {"content": "", "reasoning_content": "I add."}),
        ("inline", {"content": "<think>\nI add.\n</think>\n\n"}),
    ],
)
def test_the_passback_puts_the_reasoning_where_it_says(passback: AppliedPassback, expected: dict[str, Any]) -> None:
    script = Script(two_turns())
    run(script, Counter(), passback)
    sent = script.sent[1].messages[1].as_body()
    assert {k: v for k, v in sent.items() if k not in ("role", "tool_calls")} == expected


def test_a_call_without_an_id_gets_one_its_tool_message_names() -> None:
    script = Script([reply(calls=[ADD.model_copy(update={"id": None})]), reply("1"), reply("ok")])
    run(script, Counter())
    bodies = [m.as_body() for m in script.sent[1].messages]
    assert bodies[1]["tool_calls"][0]["id"] == bodies[2]["tool_call_id"] == "call_0_0_0"


def test_a_turn_past_its_step_limit_is_forced_to_quit_as_bfcl_counts_it() -> None:
    script = Script([reply(calls=[ADD]) for _ in range(10)])
    episode = run(script, Counter(), spec=Spec(max_steps=2))
    # BFCL quits once the steps executed exceed the limit: the third step of calls
    assert episode.forced_quit and len(script.sent) == 3 and episode.calls_by_turn == [[(ADD,)] * 3]


def test_an_endpoint_error_ends_the_episode_without_a_verdict() -> None:
    script = Script([reply(calls=[ADD]), reply(status="transport_error")])
    episode = run(script, Counter())
    assert episode.stopped is not None and episode.stopped.status == "transport_error"
    assert "HTTP 400" in (episode.stopped.error or "") and len(episode.steps) == 2


def test_a_killed_episode_replays_its_steps_on_a_fresh_environment_and_sends_only_the_rest() -> None:
    whole, written = Script(two_turns()), list[StepRecord]()
    run(whole, Counter(), written=written)
    resumed, env, again = Script(two_turns()[2:]), Counter(), list[StepRecord]()
    episode = run(resumed, env, done=episode_steps(written[:2]), written=again)
    assert env.total == 1  # the replayed call rebuilt the state
    assert [(s.turn, s.step) for s in again] == [(1, 0)]  # no step written twice
    assert resumed.sent[0].messages == whole.sent[2].messages  # the history as an unbroken run sent it
    assert len(episode.steps) == 3 and episode.calls_by_turn == [[(ADD,), ()], [()]]


def test_a_step_that_failed_at_the_endpoint_is_sent_again_on_resume() -> None:
    first, written = Script([reply(calls=[ADD]), reply(status="transport_error")]), list[StepRecord]()
    run(first, Counter(), written=written)
    assert [s.step for s in episode_steps(written)] == [0]
    resumed = Script(two_turns()[1:])
    episode = run(resumed, Counter(), done=episode_steps(written))
    assert len(resumed.sent) == 2 and episode.stopped is None


def test_a_replay_whose_history_differs_is_refused() -> None:
    written = list[StepRecord]()
    run(Script(two_turns()), Counter(), written=written)
    with pytest.raises(InputError, match="does not replay"):
        run(Script(two_turns()[2:]), Counter(), passback="inline", done=written[:2])


def test_each_step_records_its_wire_status() -> None:
    mismatch = reply("1").model_copy(update={"finish_reason": "tool_calls"})  # says calls, brings none
    written = list[StepRecord]()
    asyncio.run(
        run_episode(
            Script([reply(calls=[ADD]), mismatch, reply("still 1")]), FIRST, Spec(), Counter().execute,
            passback="none", stamp=Stamp("item-1", "t"), on_step=written.append, judge=step_judge("auto"),
        )
    )  # fmt: skip
    assert [s.tool_status for s in written] == ["ok", "finish_reason_mismatch", "ok"]
