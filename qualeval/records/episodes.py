"""An agent's episode as a run keeps it (issue 34): steps.jsonl, one StepRecord per request of the loop, and the
EpisodeRecord an item's ordinary Record carries in its `episode` field. The Record's score is the episode's
verdict, so every paired figure (compare, board, gate, McNemar) reads episodes as it reads any item.

A step's record holds what was sent at that step beyond what the step before it sent (the assistant turn with its
reasoning as the passback mode put it, the tool results, the next turn's user messages), never the whole growing
history: the history is the steps' `sent` lists joined, so a resumed run rebuilds it from them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from qualeval.records.body import SentMessage
from qualeval.records.distribution import Distribution
from qualeval.records.passback import Passback
from qualeval.records.probe import ReasoningSource
from qualeval.records.statuses import ENDPOINT_FAILED, Status
from qualeval.records.toolcalls import CallTiming, ToolCall, ToolStatus
from qualeval.records.usage import Timing, Usage

__all__ = [
    "AppliedPassback",
    "EpisodeFigures",
    "EpisodeRecord",
    "PassbackMode",
    "StepRecord",
    "TurnAccuracy",
    "TurnRecord",
    "episode_steps",
    "step_digests",
]

PassbackMode = Literal["none", "reasoning", "reasoning_content", "inline", "auto"]
"""What earlier assistant turns carry back of their reasoning: nothing; the field vLLM >= 0.16 reads
(`reasoning`); the field llama.cpp, SGLang and DeepSeek read (`reasoning_content`); `<think>…</think>` before the
content (MiniMax self-hosted); or what the probe found the server consumes."""
AppliedPassback = Passback
"""The passback an episode applied (`auto` resolved): the probe's names for the ways reasoning goes back."""


class StepRecord(BaseModel):
    """One request of an episode's loop (a line of steps.jsonl)."""

    sample_id: str
    task: str
    repeat: int = 0
    level: str = ""
    session: str = ""
    turn: int
    step: int
    """The step within its turn, from 0."""
    passback: AppliedPassback
    sent: list[SentMessage] = Field(default_factory=list)
    """The messages added since the step before (turn 0's first step: the whole prompt)."""
    calls: tuple[ToolCall, ...] = ()
    """The calls that came back, each with the id its tool message answered (one made up where none came)."""
    results: tuple[str, ...] = ()
    """What executing each call returned (a raising call: the error text the model was shown)."""
    reasoning: str = ""
    reasoning_source: ReasoningSource = "none"
    content: str = ""
    finish_reason: str | None = None
    status: Status = "ok"
    tool_status: ToolStatus | None = None
    """The step's wire status, as a single tool-call response's (None: no answer of the model's came back)."""
    usage: Usage = Field(default_factory=Usage)
    timing: Timing = Field(default_factory=Timing)
    call_timing: CallTiming | None = None
    error: str | None = None
    attempts: int = 1
    retried: list[str] = Field(default_factory=list)
    """Fault class of every failed attempt of this step before its result (the record gathers its steps')."""
    sent_at: float | None = None
    loop_ms: float | None = None
    """The loop's own client time for the step beyond the request and the tools (building the messages and the
    request, recording): benchmarks/agent_loop.py holds it to 1 ms."""
    tools_ms: float | None = None
    """Time spent executing the step's calls."""
    first_call_ms: float | None = None
    """When the step's calls were whole, from its send: streamed, their last argument fragment (the first call's
    own end is not told apart from the others'); not streamed, the response's end. None: no call."""

    @property
    def failed(self) -> bool:
        """The endpoint failed this step: the episode ended there, and a resume sends it again."""
        return self.status in ENDPOINT_FAILED


def episode_steps(steps: Iterable[StepRecord]) -> list[StepRecord]:
    """An episode's steps as a resume replays them: in the order written, each (turn, step) once, the last write
    of it winning (a step that failed at the endpoint is sent again by the resume), up to the first that failed."""
    latest: dict[tuple[int, int], StepRecord] = {}
    for step in steps:
        latest[(step.turn, step.step)] = step
    kept: list[StepRecord] = []
    for key in sorted(latest):
        if latest[key].failed:
            break
        kept.append(latest[key])
    return kept


def _digest(parts: Iterable[str]) -> str:
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def _without_ids(message: dict[str, Any]) -> dict[str, Any]:
    """A sent message but for the calls' ids: servers make them up at random, they are no part of what the model
    was asked (two runs sending the same turns back under other ids sent the same input)."""
    out = {k: v for k, v in message.items() if k != "tool_call_id"}
    if isinstance(calls := out.get("tool_calls"), list):
        out["tool_calls"] = [{k: v for k, v in c.items() if k != "id"} if isinstance(c, dict) else c for c in calls]
    return out


def step_digests(step: StepRecord) -> tuple[str, str]:
    """A step's digests: of what it added to the history (calls' ids aside), and of what the model put out
    (reasoning, content, each call's name and arguments), for the identical-input figures of an episode."""
    sent = [json.dumps(_without_ids(m.model_dump(mode="json")), sort_keys=True) for m in step.sent]
    said = [step.reasoning, step.content, *(part for c in step.calls for part in (c.name, c.arguments))]
    return _digest(sent), _digest(said)


class TurnRecord(BaseModel):
    """One user turn of an episode: its steps, its calls, its tokens and time, and its own verdict."""

    steps: int = 0
    calls: int = 0
    passed: bool | None = None
    """BFCL's check of this turn alone (None: a turn whose ground truth is empty, or not reached)."""
    reasoning_tokens: int = 0
    answer_tokens: int = 0
    ms: float = 0.0
    """The turn's requests end to end, summed."""
    step_ms: tuple[float, ...] = ()
    """Each step's request, end to end."""
    first_call_ms: tuple[float | None, ...] = ()
    """Each step: when its first call was whole (its arguments complete), from the step's send (None: no call)."""


class EpisodeRecord(BaseModel):
    """What became of one episode: a Record's `episode`."""

    passback: AppliedPassback
    """The passback applied."""
    asked: PassbackMode = "none"
    """The passback asked for (`auto` is resolved into `passback`)."""
    note: str = ""
    """Why the applied passback is not what was asked, in one line."""
    turns: list[TurnRecord] = Field(default_factory=list)
    steps: int = 0
    calls: int = 0
    reasoning_tokens: int = 0
    answer_tokens: int = 0
    ms: float = 0.0
    forced_quit: bool = False
    """A turn went past its step limit: the episode fails (BFCL's force_terminated)."""
    failed_turn: int | None = None
    error_type: str = ""
    """BFCL's: empty_turn_model_response, instance_state_mismatch, execution_response_mismatch,
    force_terminated ("" when it passed, or no verdict: an endpoint error)."""
    ended: Literal["done", "forced_quit", "endpoint_error"] = "done"
    digests: tuple[tuple[str, str], ...] | None = None
    """Per step, in order: the digests of what it sent and of what the model said (step_digests), so that two
    runs' greedy answers to the same input are paired step by step without steps.jsonl. None: a record written
    before they were kept (a rescore fills them in)."""
    retried: int = 0
    """Steps sent more than once (a fault retried): the summary's "requests retried" counts these, each step
    being a request."""
    truncated: int = 0
    """Steps cut off by the token budget (finish `length`); the record's status is the first one's."""
    longest: int | None = None
    """The most completion tokens of one step: what a max_tokens budget bounds (the budget suggestion reads it)."""


class TurnAccuracy(BaseModel):
    """The turns at one index, each judged on its own: does accuracy decay with depth?"""

    turn: int
    n: int
    """Episodes whose turn at this index was judged (its ground truth has calls, and the episode reached it)."""
    right: int
    share: float | None = None


class EpisodeFigures(BaseModel):
    """A task's episodes (summary.json): how they ended, accuracy by turn index, and per episode and per step
    their steps, calls, tokens and times. Accuracy itself is the task's (each episode one item)."""

    episodes: int
    ended: dict[str, int] = Field(default_factory=dict)
    """Episodes by how they ended: done, forced_quit, endpoint_error."""
    passback: dict[str, int] = Field(default_factory=dict)
    """Episodes by the passback applied."""
    error_types: dict[str, int] = Field(default_factory=dict)
    """Failed episodes by BFCL's error type."""
    by_turn: list[TurnAccuracy] = Field(default_factory=list)
    steps: Distribution | None = None
    """Per episode: its requests."""
    calls: Distribution | None = None
    reasoning_tokens: Distribution | None = None
    answer_tokens: Distribution | None = None
    episode_ms: Distribution | None = None
    """Per episode: its requests end to end, summed."""
    step_ms: Distribution | None = None
    """Per step: the request end to end."""
    first_call_ms: Distribution | None = None
    """Per step with a call: when its calls were whole, from the step's send."""
