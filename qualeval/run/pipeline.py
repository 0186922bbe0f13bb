"""Samples through the wire, the splitter, extraction and scoring: one record per sample.

Constraint modes:
  off       the prompt's instruction and the extraction ladder
  single    the constraint rides on the main request (reasoning servers apply it after the thinking)
  followup  the main request reasons freely; a second short request, thinking off, shows the model its response
            and asks which answer it gives, under the constraint (qualeval.scoring.followup). The content's own
            answer is scored; the follow-up confirms it or fills in one the content holds. Its timing and tokens
            are kept apart from the main request's.
  auto      single when the probe found a convention the endpoint enforces and the server returns reasoning
            apart from the answer; followup when it enforces one but reasoning comes inline (a constraint from
            the first token would silence the thinking); otherwise off
A response that only echoes its prompt gets status `echoed` and no follow-up (qualeval.scoring.verdict.echoed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from qualeval.errors import InputError
from qualeval.reasoning import Completion
from qualeval.records import (
    ANSWERED,
    SAMPLING,
    AppliedMode,
    ByThinking,
    CallTiming,
    ConstraintKind,
    ConstraintRecord,
    FollowupRecord,
    Grade,
    Mode,
    Record,
    SentBody,
    Style,
    ToolsRecord,
)
from qualeval.run.levels import RequestSettings
from qualeval.scoring import (
    FIRST_TOKEN,
    WHOLE_ANSWER,
    Constraint,
    ModelJudge,
    Verdict,
    constraint_cuts,
    constraint_for,
    decide,
    echoed,
    followup_prompt,
    request_params,
    runs_code,
    wants_model_judge,
)
from qualeval.tasks import Sample, Task, warn_once
from qualeval.wire import ChatRequest, ChatResponse, ChatSender, Message, build_body

__all__ = ["request_for", "resolve_mode", "run_one", "sampling_for"]


def sampling_for(task: Task, thinking: bool | None, sampling: ByThinking | None = None) -> dict[str, Any]:
    """The sampling settings a request of this task gets before the run's flags: the run's `sampling` for the
    request's thinking mode, over the task's for that mode, over the task's plain settings."""
    gen = task.spec.generation
    mode = thinking if thinking is not None else gen.thinking
    values = {name: getattr(gen, name) for name in SAMPLING if getattr(gen, name) is not None}
    values.update(gen.sampling.for_mode(mode))
    if sampling is not None:
        values.update(sampling.for_mode(mode))
    return values


def request_for(task: Task, sample: Sample, model: str, settings: RequestSettings | None = None) -> ChatRequest:
    """The request for a sample. Sampling, each setting from the first that gives it: a run's or level's setting
    (a flag), the run's `sampling` for the request's thinking mode, the task's for that mode, the task's plain
    settings."""
    settings = settings or RequestSettings()
    gen = task.spec.generation
    values: dict[str, Any] = {"max_tokens": gen.max_tokens, "thinking": gen.thinking, "stop": gen.stop}
    values.update(sampling_for(task, settings.thinking, settings.sampling))
    if sample.max_tokens:  # a workload item's own output length, and the keys that force it
        values["max_tokens"] = sample.max_tokens
    if sample.extra_body:
        values["extra_body"] = dict(sample.extra_body)
    if sample.tools:  # a tool-call item: the server's own parsers turn what the model writes into calls
        values["tools"] = sample.tools
        values["tool_choice"] = sample.tool_choice
    extra = {**values.get("extra_body", {}), **settings.extra_body}  # a level's, over an item's
    given = settings.model_dump(exclude={"sampling", "extra_body"})
    values.update({k: v for k, v in given.items() if v is not None})
    if extra:
        values["extra_body"] = extra
    return ChatRequest(model=model, messages=sample.messages, **values)


def _constrained(request: ChatRequest, constraint: Constraint, style: Style) -> tuple[ChatRequest, ConstraintKind]:
    kind, params = request_params(constraint, style)
    update: dict[str, Any] = {"extra_body": {**request.extra_body, **params}}
    if "response_format" in params:
        update = {
            "response_format": params["response_format"],
            "extra_body": {k: v for k, v in update["extra_body"].items() if k != "response_format"},
        }
    return request.model_copy(update=update), kind


async def _followup(
    client: ChatSender, request: ChatRequest, sample: Sample, task: Task, first: ChatResponse, style: Style | None
) -> ConstraintRecord:
    """Ask, thinking off, which answer the response gives (qualeval.scoring.followup), under the constraint where there
    is a convention for it. Its timing and tokens are kept apart from the main request's."""
    spec = task.spec.answer
    text = followup_prompt(sample, first.completion.content, spec)
    ask = request.model_copy(
        update={"messages": (Message(role="user", content=text),), "thinking": False, "max_tokens": 256, "stop": ()}
    )
    constraint = constraint_for(spec, sample.choices)
    kind: ConstraintKind = constraint.kind  # what was sent: _constrained may send another kind than the constraint's
    if style is not None:
        ask, kind = _constrained(ask, constraint, style)
    second = await client.chat(ask)
    return ConstraintRecord(
        mode="followup",
        kind=kind,
        style=style,
        followup=FollowupRecord(
            request=SentBody.model_validate(build_body(ask, client.config)),
            content=second.completion.content,
            status=second.completion.status,
            error=second.error,
            timing=second.timing,
            usage=second.usage,
            attempts=second.attempts,
        ),
    )


async def _ask(
    client: ChatSender, task: Task, sample: Sample, request: ChatRequest, mode: AppliedMode, style: Style | None
) -> tuple[ChatRequest, ChatResponse, ConstraintRecord]:
    """Send the request under the constraint `mode` asks for: what was sent, what came back, what happened to
    the constraint (a follow-up request included); the judge decides whether it held."""
    if task.spec.scorer.kind in WHOLE_ANSWER:  # a program or an IFEval response, never a JSON `answer` field
        mode = "off"
    if not sample.scored or sample.tool_answer is not None:  # a synthetic prompt, or calls: no answer to constrain
        mode = "off"
    if mode == "single" and (cut := constraint_cuts(task.spec)) is not None:
        warn_once(
            f"regex-constraint:{task.name}",
            f"{task.where}: the regex scorer's pattern '{task.spec.scorer.pattern}' cannot match the bare "
            f"{task.spec.answer.type} a '{cut}' constraint leaves, so task {task.name} runs without a constraint",
        )
        mode = "off"
    sent, kind = request, None
    if mode == "single" and style is not None:
        sent, kind = _constrained(request, constraint_for(task.spec.answer, sample.choices), style)
    response = await client.chat(sent)
    if mode == "single" and kind is not None:
        return sent, response, ConstraintRecord(mode="single", kind=kind, style=style)
    done = response.completion
    # an echo's follow-up would answer from the options it repeats
    if mode == "followup" and done.status in ANSWERED and done.content.strip() and not echoed(task, sample, done):
        return sent, response, await _followup(client, request, sample, task, response, style)
    return sent, response, ConstraintRecord(mode=mode)


def _calls_of(response: ChatResponse, sample: Sample) -> ToolsRecord | None:
    """What a tool-call item's response brought back, before it is judged: its calls and when they arrived."""
    if sample.tool_answer is None:
        return None
    return ToolsRecord(
        calls=response.tool_calls,
        timing=response.call_timing or CallTiming(),
        delta_without_index=response.delta_without_index,
    )


async def _judged(
    task: Task,
    sample: Sample,
    response: ChatResponse,
    info: ConstraintRecord,
    rescue: bool,
    model_judge: ModelJudge | None,
    allow_code: bool,
) -> tuple[Verdict, Grade | None]:
    """The verdict on an answer, and the model judge's grade where the rules rejected a free-form one."""
    done = _answer_of(response, sample)
    calls, finish = _calls_of(response, sample), response.finish_reason
    if runs_code(task.spec.scorer.kind):  # the program runs for seconds: off the event loop that streams the rest
        verdict = await asyncio.to_thread(decide, task, sample, done, info, rescue=rescue, allow_code=allow_code)
    else:
        verdict = decide(task, sample, done, info, rescue=rescue, allow_code=allow_code, calls=calls, finish=finish)
    if model_judge is None or not wants_model_judge(task, done, verdict):
        return verdict, None
    grade = await model_judge.grade(sample, done.content)
    return decide(task, sample, done, info, rescue=rescue, grade=grade, allow_code=allow_code), grade


def _answer_of(response: ChatResponse, sample: Sample) -> Completion:
    """The completion as the run records it: a reference server's answer to a question it did not know is no
    answer of the model's, whatever its text (the server says so in a header: UNKNOWN_QUESTION). Only an answer
    is re-marked: a synthetic prompt has no right answer to miss, and a reply cut off or failed keeps its status."""
    if not (response.unknown_question and sample.scored and response.completion.status in ANSWERED):
        return response.completion
    return response.completion.model_copy(update={"status": "unknown_question"})


async def run_one(
    client: ChatSender,
    task: Task,
    sample: Sample,
    *,
    model: str,
    mode: AppliedMode,
    style: Style | None,
    rescue: bool = False,
    repeat: int = 0,
    level: str = "",
    warmup: bool = False,
    session: str = "",
    model_judge: ModelJudge | None = None,
    allow_code: bool = False,
    settings: RequestSettings | None = None,
) -> Record:
    """One sample (its `repeat`-th): request (constrained as `mode` says), judge (and grade), record. `allow_code`:
    the run's --allow-code-execution (a code task's program may run); `settings`: over the task's."""
    request = request_for(task, sample, model, settings)
    sent, response, info = await _ask(client, task, sample, request, mode, style)
    verdict, grade = await _judged(task, sample, response, info, rescue, model_judge, allow_code)
    done = _answer_of(response, sample)
    return Record(
        sample_id=sample.id,
        task=task.name,
        repeat=repeat,
        level=level,
        warmup=warmup,
        session=session,
        sent_at=response.sent_at,
        retried=response.retried,
        request=SentBody.model_validate(build_body(sent, client.config)),
        reasoning=done.reasoning,
        content=done.content,
        reasoning_source=done.reasoning_source,
        status=verdict.status or done.status,
        finish_reason=response.finish_reason,
        usage=response.usage,
        timing=response.timing,
        attempts=response.attempts,
        constraint=verdict.constraint or info,
        extraction=verdict.extraction,
        score=verdict.score,
        naive_correct=verdict.naive_correct,
        rescue=verdict.rescue,
        rescue_correct=verdict.rescue_correct,
        gold=sample.gold,
        choices=sample.choices,
        aliases=sample.aliases,
        meta=sample.meta,
        scored=sample.scored,
        shape=sample.shape,
        error=response.error,
        server_timings=response.server_timings,
        grade=grade,
        endpoint=response.endpoint,
        tools=verdict.tools,
    )


def resolve_mode(
    mode: Mode,
    styles: Sequence[Style],
    *,
    inline: str | None = None,
    thinking: bool | None = None,
    bare: bool = False,
    unknown: str = "",
) -> tuple[AppliedMode, Style | None, str | None]:
    """The mode actually used, its convention, and a one-line note where that is not simply what was asked.

    `styles`: conventions the endpoint enforces, best first. A constraint on the main request rides after the
    thinking only where there is a reasoning channel apart from the answer: the server returns reasoning apart
    (`inline` is None; otherwise where it goes, `inline:paired`, `none`..., or why it is not known) and thinking
    is not off. Without one
    it binds from the first token, so it is used there only when the task's prompt asks for the answer alone
    (`bare`): otherwise it would take away the working the prompt asks for, and the content is read as written,
    with a follow-up to confirm it. `unknown`: why there are no styles. Single or followup with no convention to
    send is an InputError, before any request.
    """
    if mode == "off":
        return "off", None, None
    if not styles:
        why = unknown or "none is enforced"
        if mode == "auto":
            return "off", None, f"constraint off: no structured-output convention to use ({why})"
        raise InputError(
            f"--constraint {mode}: no structured-output convention is known to work on this endpoint ({why}); "
            "use --constraint off, or force one with --constraint-style NAME"
        )
    if mode == "followup":
        return "followup", styles[0], None
    after = [s for s in styles if s not in FIRST_TOKEN]  # where there is a reasoning channel, these bind after it
    missing = (
        "thinking is off"
        if thinking is False
        else (f"no reasoning comes back apart from the answer ({inline})" if inline else None)
    )
    if missing is None and after:
        return "single", after[0], None
    why = missing or f"{styles[0]} binds from the first token"
    if mode == "single" and bare:
        return "single", styles[0], f"--constraint single: {why}: the constraint binds from the first token"
    if mode == "single":
        return (
            "followup",
            styles[0],
            (
                f"--constraint single: {why}, so a constraint would bind from the first token and take away the "
                f"working the prompt asks for: the content is read as written, and a follow-up via {styles[0]} "
                "confirms it"
            ),
        )
    return "followup", styles[0], f"constraint: followup via {styles[0]}, not on the main request: {why}"
