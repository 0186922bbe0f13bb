"""Samples through the wire, the splitter, extraction and scoring: one record per sample.

Constraint modes:
  off       the prompt's instruction and the extraction ladder
  single    the constraint rides on the main request (reasoning servers apply it after the thinking)
  followup  the main request reasons freely; a second short request, thinking off, asks for the final answer
            only, under the constraint. Its timing and tokens are kept apart from the main request's.
  auto      single when the probe found a convention the endpoint enforces, otherwise off
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from qualeval.client import ChatClient, build_body
from qualeval.constrain import Constraint, ConstraintRecord, Mode, Style, constraint_for, request_params, validate
from qualeval.extract import Extraction, extract, naive_extract, typed_value
from qualeval.models import ChatRequest, ChatResponse, Completion, Message, Sample, Timing, Usage
from qualeval.score import Score, score
from qualeval.summary import Outcome
from qualeval.tasks.load import Task

__all__ = ["Record", "Verdict", "judge", "outcome_of", "request_for", "resolve_mode", "run_one", "run_samples"]

FOLLOWUP_PROMPT = "Now give only your final answer, with nothing else."


class Record(BaseModel):
    """One sample's request and everything it produced; the unit written to records.jsonl."""

    sample_id: str
    task: str
    attempt: int = 0
    """Which of K samples of the same item this is (0 when sampling once)."""
    level: str = ""
    """The load level it ran at (`c=16`, `rate=4`)."""
    warmup: bool = False
    """A warm-up request: scored, but kept out of speed figures."""
    session: str = ""
    """When the run invocation that sent it started: a resumed level spans sessions."""
    sent_at: float | None = None
    retried: list[str] = []
    """Fault class of every failed attempt before this result (none of them scored)."""
    final: bool = True
    request: dict[str, Any]
    """The JSON body sent, which never holds the API key."""
    reasoning: str
    content: str
    reasoning_source: str
    status: str
    finish_reason: str | None
    usage: Usage
    timing: Timing
    attempts: int
    """HTTP attempts it took (retries included)."""
    constraint: ConstraintRecord
    extraction: Extraction
    score: Score
    naive_correct: bool | None = None
    """Whether the naive extractor (last number anywhere in reasoning plus content) would be right."""
    rescue: Extraction | None = None
    """With rescue on and empty content: what the reasoning's anchors held. Never counted as correct."""
    rescue_correct: bool | None = None
    gold: str
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    meta: dict[str, Any]
    error: str | None = None

    def outcome(self) -> Outcome:
        return outcome_of(self.model_dump(mode="json"))


def outcome_of(row: dict[str, Any]) -> Outcome:
    """The summary's view of a record, read from its JSON form (as stored in records.jsonl)."""
    rescue = row.get("rescue")
    return Outcome(
        status=row["status"],
        correct=row["score"]["correct"],
        rung=row["extraction"]["rung"],
        meta=row.get("meta") or {},
        naive_correct=row.get("naive_correct"),
        held=(row.get("constraint") or {}).get("held"),
        rescued=bool(rescue and rescue.get("value") is not None),
        rescue_correct=bool(row.get("rescue_correct")),
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    extraction: Extraction
    score: Score
    naive_correct: bool | None
    rescue: Extraction | None = None
    rescue_correct: bool | None = None


def judge(task: Task, sample: Sample, done: Completion, *, held: str | None = None, rescue: bool = False) -> Verdict:
    """Extract and score one completion. `held`: the answer a validated constraint delivered.

    Answers come from the final content only. A transport error or filtered response is never scored.
    """
    spec = task.spec
    if done.status in ("transport_error", "content_filter"):
        return Verdict(
            Extraction(value=None, rung="none"), Score(correct=False, detail=f"not scored: {done.status}"), None
        )
    found = None
    if held is not None and (value := typed_value(held, spec.answer, sample.choices)) is not None:
        found = Extraction(value=value, rung="constraint", raw=held)
    if found is None:
        found = extract(done.content, spec.answer, sample.choices, math=spec.scorer.kind == "math")
    verdict = score(found.value, sample, spec.scorer, spec.answer)
    naive_correct = None
    if spec.answer.type != "text":  # "the last number anywhere" means nothing for free-text answers
        naive = naive_extract(done.reasoning, done.content, spec.answer, sample.choices)
        naive_correct = score(naive, sample, spec.scorer, spec.answer).correct
    if rescue and not done.content.strip() and done.reasoning.strip():
        saved = extract(done.reasoning, spec.answer, sample.choices)
        saved = Extraction(value=saved.value, rung="rescue", raw=saved.raw) if saved.value is not None else saved
        return Verdict(
            found, verdict, naive_correct, saved, score(saved.value, sample, spec.scorer, spec.answer).correct
        )
    return Verdict(found, verdict, naive_correct)


def request_for(task: Task, sample: Sample, model: str, **overrides: Any) -> ChatRequest:
    """The request for a sample: the task's generation defaults, then any override that is not None."""
    gen = task.spec.generation
    values: dict[str, Any] = {
        "max_tokens": gen.max_tokens,
        "temperature": gen.temperature,
        "thinking": gen.thinking,
        "stop": gen.stop,
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ChatRequest(model=model, messages=sample.messages, **values)


def _constrained(request: ChatRequest, constraint: Constraint, style: Style) -> tuple[ChatRequest, str]:
    kind, params = request_params(constraint, style)
    update: dict[str, Any] = {"extra_body": {**request.extra_body, **params}}
    if "response_format" in params:
        update = {
            "response_format": params["response_format"],
            "extra_body": {k: v for k, v in update["extra_body"].items() if k != "response_format"},
        }
    return request.model_copy(update=update), kind


def _check(constraint: Constraint, kind: str, response: ChatResponse) -> tuple[bool | None, str | None]:
    content = response.completion.content
    if response.error is not None or not content.strip():
        return None, None  # nothing came back to judge the constraint by
    return validate(constraint, kind, content)


async def _followup(
    client: ChatClient, request: ChatRequest, first: ChatResponse, constraint: Constraint, style: Style | None
) -> tuple[ConstraintRecord, str | None]:
    """Ask, thinking off, for the final answer alone; validate it. Never mixed into the main figures."""
    messages = (
        *request.messages,
        Message(role="assistant", content=first.completion.content),
        Message(role="user", content=FOLLOWUP_PROMPT),
    )
    ask = request.model_copy(update={"messages": messages, "thinking": False, "max_tokens": 256, "stop": ()})
    kind = constraint.kind
    if style is not None:
        ask, kind = _constrained(ask, constraint, style)
    second = await client.chat(ask)
    held, answer = _check(constraint, kind, second)
    record = ConstraintRecord(
        mode="followup",
        kind=kind,
        style=style,
        held=held,
        followup={
            "content": second.completion.content,
            "status": second.completion.status,
            "error": second.error,
            "timing": second.timing.model_dump(),
            "usage": second.usage.model_dump(),
            "attempts": second.attempts,
        },
    )
    if answer is None and second.completion.status == "ok":
        answer = second.completion.content  # unconstrained or broken: the ladder reads it
    return record, answer


async def run_one(
    client: ChatClient,
    task: Task,
    sample: Sample,
    *,
    model: str,
    mode: Mode,
    style: Style | None,
    rescue: bool = False,
    attempt: int = 0,
    level: str = "",
    warmup: bool = False,
    session: str = "",
    **overrides: Any,
) -> Record:
    """One sample, one attempt: request (constrained as `mode` says), judge, record."""
    request = request_for(task, sample, model, **overrides)
    constraint = constraint_for(task.spec.answer, sample.choices)
    sent = request
    kind = None
    if mode == "single" and style is not None:
        sent, kind = _constrained(request, constraint, style)
    response = await client.chat(sent)
    done = response.completion
    held_answer = None
    if mode == "single" and kind is not None:
        held, held_answer = _check(constraint, kind, response)
        info = ConstraintRecord(mode="single", kind=kind, style=style, held=held)
    elif mode == "followup" and done.status in ("ok", "answer_truncated"):
        info, held_answer = await _followup(client, request, response, constraint, style)
    else:
        info = ConstraintRecord(mode=mode)
    verdict = judge(task, sample, done, held=held_answer, rescue=rescue)
    return Record(
        sample_id=sample.id,
        task=task.name,
        attempt=attempt,
        level=level,
        warmup=warmup,
        session=session,
        sent_at=response.sent_at,
        retried=response.retried,
        request=build_body(sent, client.config),
        reasoning=done.reasoning,
        content=done.content,
        reasoning_source=done.reasoning_source,
        status=done.status,
        finish_reason=response.finish_reason,
        usage=response.usage,
        timing=response.timing,
        attempts=response.attempts,
        constraint=info,
        extraction=verdict.extraction,
        score=verdict.score,
        naive_correct=verdict.naive_correct,
        rescue=verdict.rescue,
        rescue_correct=verdict.rescue_correct,
        gold=sample.gold,
        choices=sample.choices,
        aliases=sample.aliases,
        meta=sample.meta,
        error=response.error,
    )


def resolve_mode(mode: Mode, styles: Sequence[Style]) -> tuple[Mode, Style | None]:
    """The mode actually used and its convention: `auto` is `single` when something is enforced."""
    style = styles[0] if styles else None
    if mode == "auto":
        return ("single" if style else "off"), style
    return mode, style


async def run_samples(
    client: ChatClient,
    task: Task,
    samples: Sequence[Sample],
    *,
    model: str,
    constraint_mode: Mode = "auto",
    styles: Sequence[Style] = (),
    rescue: bool = False,
    **overrides: Any,
) -> list[Record]:
    """Send every sample (the client bounds concurrency) and judge what comes back, in sample order.

    `styles`: the constraint conventions the endpoint enforces, best first (`ProbeResult.styles()`).
    """
    mode, style = resolve_mode(constraint_mode, styles)
    return list(
        await asyncio.gather(
            *(
                run_one(client, task, s, model=model, mode=mode, style=style, rescue=rescue, **overrides)
                for s in samples
            )
        )
    )
