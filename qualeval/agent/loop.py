"""The agent's loop, as BFCL's multi-turn inference runs it (base_handler.inference_multi_turn_FC): each user turn
is sent with the history and the tools offered at that turn; each call that comes back is executed and returned
as a `tool` message with its call's id, and the request is sent again, until a response brings no call; then the
next turn. A turn whose calls go past `max_steps` steps is forced to quit, which fails the episode, as BFCL counts
it (the quit comes after the step that makes the count exceed the limit). An endpoint failure ends the episode
there: no answer of the model's, never a wrong one.

Earlier assistant turns carry their reasoning back as the passback mode says (qualeval.records.PassbackMode). Every
step is written as it ends (`on_step`), holding what it added to the history, so a run killed mid-episode
resumes by replaying the steps already written (`done`): their responses are not asked again, their calls are
executed again on a fresh environment to restore its state, and the loop goes on from there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, NamedTuple, Protocol

from qualeval.errors import InputError
from qualeval.records import (
    NOT_THE_MODELS,
    AppliedPassback,
    SentMessage,
    Status,
    StepRecord,
    ToolCall,
    ToolStatus,
)
from qualeval.wire import ChatRequest, ChatResponse, Message

__all__ = ["Episode", "EpisodeLike", "Stamp", "assistant_message", "run_episode"]


class EpisodeLike(Protocol):
    """What the loop reads of an episode's spec (qualeval.records.EpisodeSpec)."""

    @property
    def turns(self) -> Sequence[Sequence[Mapping[str, str]]]: ...
    @property
    def max_steps(self) -> int: ...
    def tools_at(self, turn: int) -> tuple[dict[str, Any], ...]:
        """The tools offered at a turn: the initial ones and every one added at this turn or before (miss_func)."""
        ...


class Stamp(NamedTuple):
    """Which request of the run an episode is: every step record carries it."""

    sample_id: str
    task: str
    repeat: int = 0
    level: str = ""
    session: str = ""


@dataclass
class Episode:
    """What the loop produced: every step (the replayed ones included), the calls per turn and step as the judge
    reads them, and how it ended."""

    steps: list[StepRecord] = field(default_factory=list)
    calls_by_turn: list[list[tuple[ToolCall, ...]]] = field(default_factory=list)
    forced_quit: bool = False
    stopped: StepRecord | None = None
    """The step at which no answer of the model's came back (the endpoint failed, or a reference server did not
    know the question): the episode has no verdict."""
    first: ChatRequest | None = None
    """The first request of the episode (as a record's `request`)."""


Send = Callable[[ChatRequest], Awaitable[ChatResponse]]
Execute = Callable[[ToolCall], str]
Judge = Callable[[ChatResponse, tuple[dict[str, Any], ...]], ToolStatus]
"""A step's wire status from its response and the tools offered (qualeval.scoring.wire_status's)."""


def assistant_message(content: str, reasoning: str, calls: tuple[ToolCall, ...], passback: AppliedPassback) -> Message:
    """An assistant turn as it is sent back, its reasoning where the passback mode puts it."""
    if not reasoning or passback == "none":
        return Message(role="assistant", content=content, tool_calls=calls)
    if passback == "inline":  # as MiniMax's template renders a kept thought
        return Message(role="assistant", content=f"<think>\n{reasoning}\n</think>\n\n{content}", tool_calls=calls)
    return Message(role="assistant", content=content, tool_calls=calls, **{passback: reasoning})


def _with_ids(calls: Sequence[ToolCall], turn: int, step: int) -> tuple[ToolCall, ...]:
    """The calls, each with an id its tool message can name (one made up where the server sent none)."""
    return tuple(c if c.id else c.model_copy(update={"id": f"call_{turn}_{step}_{i}"}) for i, c in enumerate(calls))


def _user(turn: Sequence[Mapping[str, str]]) -> list[Message]:
    return [Message(role=m["role"], content=m["content"]) for m in turn]


def _status(response: ChatResponse) -> Status:
    if response.unknown_question and response.completion.status != "transport_error":
        return "unknown_question"
    return response.completion.status


def _first_call_ms(response: ChatResponse) -> float | None:
    """When the first call was whole, in ms from the send: streamed, its last argument fragment; else the end."""
    if not response.tool_calls:
        return None
    timing = response.call_timing
    if timing is not None and timing.first_whole is not None:
        return timing.first_whole * 1000.0
    return response.timing.end


@dataclass
class _Loop:
    send: Send
    execute: Execute
    request: ChatRequest
    passback: AppliedPassback
    stamp: Stamp
    on_step: Callable[[StepRecord], None] | None
    replay: list[StepRecord]
    judge: Judge | None = None
    history: list[Message] = field(default_factory=list)
    pending: list[Message] = field(default_factory=list)
    episode: Episode = field(default_factory=Episode)

    async def step(self, turn: int, step: int, tools: tuple[dict[str, Any], ...]) -> StepRecord:
        """One request and its calls executed: the step's record, written unless it is replayed."""
        began = perf_counter()
        added, self.pending = self.pending, []
        self.history.extend(added)
        replayed = self.replay.pop(0) if self.replay else None
        if replayed is not None:
            return self._replayed(replayed, added)
        request = self.request.model_copy(update={"messages": tuple(self.history), "tools": tools})
        self.episode.first = self.episode.first or request
        built = perf_counter()
        response = await self.send(request)
        back = perf_counter()
        status = _status(response)
        calls = _with_ids(response.tool_calls, turn, step) if status not in NOT_THE_MODELS else ()
        results, tools_ms = self._answer(response.completion.content, response.completion.reasoning, calls)
        record = StepRecord(
            **self.stamp._asdict(),
            turn=turn,
            step=step,
            passback=self.passback,
            sent=[SentMessage.model_validate(m.as_body()) for m in added],
            calls=calls,
            results=results,
            reasoning=response.completion.reasoning,
            reasoning_source=response.completion.reasoning_source,
            content=response.completion.content,
            finish_reason=response.finish_reason,
            status=status,
            tool_status=self.judge(response, tools) if self.judge and status not in NOT_THE_MODELS else None,
            usage=response.usage,
            timing=response.timing,
            call_timing=response.call_timing,
            error=response.error,
            attempts=response.attempts,
            retried=response.retried,
            sent_at=response.sent_at,
            tools_ms=tools_ms,
            first_call_ms=_first_call_ms(response),
        )
        record.loop_ms = ((built - began) + (perf_counter() - back)) * 1000.0 - tools_ms
        if self.on_step is not None:
            self.on_step(record)
        return record

    def _answer(self, content: str, reasoning: str, calls: tuple[ToolCall, ...]) -> tuple[tuple[str, ...], float]:
        """Execute the calls, and queue the assistant turn and the tool results for the next request."""
        began = perf_counter()
        results = tuple(self.execute(c) for c in calls)
        took = (perf_counter() - began) * 1000.0
        self.pending.append(assistant_message(content, reasoning, calls, self.passback))
        answers = zip(calls, results, strict=True)
        self.pending.extend(Message(role="tool", content=r, tool_call_id=c.id) for c, r in answers)
        return results, took

    def _replayed(self, recorded: StepRecord, added: list[Message]) -> StepRecord:
        """A step a killed session wrote: its response as recorded, its calls executed again (the environment's
        state is rebuilt), nothing written again. The history must be what it sent: otherwise the run changed."""
        sent = [SentMessage.model_validate(m.as_body()) for m in added]
        if sent != recorded.sent:
            raise InputError(
                f"{recorded.sample_id}: turn {recorded.turn} step {recorded.step} of steps.jsonl does not replay: "
                "the messages rebuilt differ from those it sent (the task or the passback changed?)"
            )
        results, _ = self._answer(recorded.content, recorded.reasoning, recorded.calls)
        return recorded.model_copy(update={"results": results})


async def run_episode(
    send: Send,
    request: ChatRequest,
    spec: EpisodeLike,
    execute: Execute,
    *,
    passback: AppliedPassback,
    stamp: Stamp,
    on_step: Callable[[StepRecord], None] | None = None,
    done: Sequence[StepRecord] = (),
    judge: Judge | None = None,
) -> Episode:
    """One episode. `request`: turn 0's request as a single-turn item's would be (its messages turn 0's user
    messages); `send`: the wire client's `chat`; `execute`: a call against the episode's environment, its result as
    the model is shown it; `done`: the steps a killed session wrote (qualeval.records.episode_steps); `judge`: each
    step's wire status."""
    loop = _Loop(send, execute, request, passback, stamp, on_step, list(done), judge)
    episode = loop.episode
    for turn, users in enumerate(spec.turns):
        loop.pending.extend(request.messages if turn == 0 else _user(users))
        tools, calls = spec.tools_at(turn), list[tuple[ToolCall, ...]]()
        episode.calls_by_turn.append(calls)
        for step in range(spec.max_steps + 1):
            record = await loop.step(turn, step, tools)
            episode.steps.append(record)
            if record.status in NOT_THE_MODELS:
                episode.stopped = record
                return episode
            calls.append(record.calls)
            if not record.calls:
                break
        else:  # BFCL: the step that takes the count of executed steps past the limit forces the quit
            episode.forced_quit = True
            return episode
    return episode
