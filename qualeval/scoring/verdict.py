"""The one verdict: live runs, `rescore` and `score` decide an item here, from what a record keeps.

Inputs are the task, the sample, the split completion, the constraint record (which mode ran, the kind sent,
the follow-up's reply) and, where a model judge was asked, its grade. The constraint's answer is re-derived
from the stored text, so a rescore of a record reaches the verdict the live run reached.

A follow-up never overrides the content: the answer the content states is scored, and the follow-up only
confirms it or fills in one the ladder could not find that the content holds (qualeval.scoring.followup). Whether the
constraint held, and how the follow-up agrees, are judged here too, so a rescore judges them again.
"""

from __future__ import annotations

from dataclasses import dataclass

from qualeval.errors import InputError
from qualeval.reasoning import Completion
from qualeval.records import ANSWERED, ConstraintRecord, Grade, Score, Status, ToolAnswer, ToolsRecord
from qualeval.scoring.constrain import constraint_for, validate
from qualeval.scoring.extract import Extraction, echoes, extract, naive_extract, typed_value, unfinished_dropped
from qualeval.scoring.extract.echo import Turns, answers_after, unechoed
from qualeval.scoring.followup import reconcile
from qualeval.scoring.rules import reads_math, score
from qualeval.scoring.toolverdict import judge_tools
from qualeval.scoring.whole import WHOLE_ANSWER, score_whole
from qualeval.tasks import Sample, Task

__all__ = ["NOT_SCORED", "Verdict", "decide", "echoed", "prompt_of", "wants_model_judge"]

NOT_SCORED = ("transport_error", "content_filter", "unknown_question")
"""Statuses that carry no answer of the model's: never scored, never graded."""


@dataclass(frozen=True, slots=True)
class Verdict:
    extraction: Extraction
    score: Score
    naive_correct: bool | None
    rescue: Extraction | None = None
    rescue_correct: bool | None = None
    constraint: ConstraintRecord | None = None
    """The constraint record as judged: whether it held, its reply was valid, the follow-up agrees."""
    status: Status | None = None
    """The status as judged, where it is not the completion's: `echoed`."""
    tools: ToolsRecord | None = None
    """A tool-call item's calls as judged: their wire status, schema validity, what leaked markup held."""


def prompt_of(sample: Sample) -> Turns:
    """Every message the sample sends, with its role: what a response may echo. An assistant message is an
    example's answer (chat few-shot), whose closing sentence the model may rightly end with."""
    return tuple((m.role, m.content) for m in sample.messages)


def echoed(task: Task, sample: Sample, done: Completion) -> bool:
    """Whether the content is an echo of its prompt (qualeval.scoring.extract.echo): no answer is read from it and
    no follow-up is asked or used. Code and IFEval judge the whole content, which may rightly repeat the prompt
    (a function's signature, "repeat the request word for word, then answer"): never an echo there."""
    if done.status == "echoed":
        return True
    if done.status not in ANSWERED or not sample.scored or task.spec.scorer.kind in WHOLE_ANSWER:
        return False
    spec = task.spec
    prompt = prompt_of(sample)
    # a reply cut off after it answered the question it repeated ("Q: ... A: Paris") is judged as any other reply:
    # an echo only where nothing of its own is left that states an answer
    truncated = done.status == "answer_truncated" and not answers_after(done.content, prompt, sample.choices)
    math = reads_math(spec.scorer.kind)
    return echoes(done.content, spec.answer, sample.choices, prompt=prompt, truncated=truncated, math=math)


def _reply(task: Task, sample: Sample, constraint: ConstraintRecord) -> tuple[str | None, bool | None]:
    """The follow-up's answer, of the answer's type, and whether its reply satisfied the constraint sent."""
    follow = constraint.followup
    if follow is None or follow.status != "ok" or follow.error or not follow.content.strip():
        return None, None
    text = follow.content
    spec = task.spec
    valid: bool | None = None
    if constraint.kind is not None:
        valid, answer = validate(constraint_for(spec.answer, sample.choices), constraint.kind, text)
        if valid and answer is not None and (value := typed_value(answer, spec.answer, sample.choices)) is not None:
            return value, True
    got = extract(text, spec.answer, sample.choices, math=reads_math(spec.scorer.kind))
    return got.value, valid


def _answer(
    task: Task, sample: Sample, done: Completion, constraint: ConstraintRecord | None
) -> tuple[Extraction, ConstraintRecord | None]:
    """The answer to score, and the constraint record with what became of the constraint. The ladder never reads
    text that repeats the prompt, nor does a follow-up find its answer there, nor a number the budget may have cut
    (the digits a truncated answer ends on: `unfinished_dropped`)."""
    spec = task.spec
    math = reads_math(spec.scorer.kind)
    prompt = prompt_of(sample)
    content = unfinished_dropped(done.content) if done.status == "answer_truncated" else done.content
    if constraint is None or constraint.kind is None or constraint.mode == "off":
        return extract(content, spec.answer, sample.choices, math=math, prompt=prompt), constraint
    if constraint.mode == "single":
        if not content.strip():
            return extract(content, spec.answer, sample.choices, math=math), constraint
        satisfied, span = validate(constraint_for(spec.answer, sample.choices), constraint.kind, content)
        judged = constraint.model_copy(update={"held": satisfied, "valid": satisfied})
        if satisfied and span is not None and (value := typed_value(span, spec.answer, sample.choices)) is not None:
            return Extraction(value=value, rung="constraint", raw=span), judged
        return extract(content, spec.answer, sample.choices, math=math, prompt=prompt), judged
    found = extract(content, spec.answer, sample.choices, math=math, prompt=prompt)
    if constraint.followup is None:  # the main request brought no answer to follow up
        return found, constraint
    reply, valid = _reply(task, sample, constraint)
    own, _ = unechoed(content, prompt, sample.choices)
    scored, agreement = reconcile(found, reply, own, spec.answer, sample.choices, math=math)
    held = None if valid is None else bool(valid and agreement in ("agrees", "filled"))
    return scored, constraint.model_copy(update={"held": held, "valid": valid, "agreement": agreement})


def _echo(task: Task, sample: Sample, done: Completion, constraint: ConstraintRecord | None) -> Verdict:
    """An echo's verdict: not correct, nothing read from it, and a follow-up (a run recorded before echoes were
    told apart asked one) neither used nor counted: it would have answered from the echoed options."""
    if constraint is not None and constraint.followup is not None:
        constraint = constraint.model_copy(update={"held": None, "valid": None, "agreement": None})
    return Verdict(
        Extraction(value=None, rung="none"),
        Score(correct=False, detail="echoed its prompt: no answer of its own"),
        _naive(task, sample, done),
        constraint=constraint,
        status="echoed",
    )


def _naive(task: Task, sample: Sample, done: Completion) -> bool | None:
    """Whether the naive extractor's reading is correct; None for free-text answers."""
    spec = task.spec
    if spec.answer.type == "text":  # "the last number anywhere" means nothing for free-text answers
        return None
    naive = naive_extract(done.reasoning, done.content, spec.answer, sample.choices)
    return score(naive, sample, spec.scorer, spec.answer).correct


def _tools(sample: Sample, answer: ToolAnswer, done: Completion, got: ToolsRecord, finish: str | None) -> Verdict:
    """A tool-call item: the calls returned, by BFCL's rules (qualeval.scoring.toolverdict)."""
    found, verdict, judged = judge_tools(
        answer, done, got, tools=sample.tools, tool_choice=sample.tool_choice, finish=finish
    )
    return Verdict(found, verdict, None, tools=judged)


def wants_model_judge(task: Task, done: Completion, verdict: Verdict) -> bool:
    """A model judge is asked only about a free-form answer that the rules did not accept."""
    return (
        task.spec.answer.type == "text"
        and task.spec.scorer.kind not in WHOLE_ANSWER
        and done.status not in NOT_SCORED
        and bool(done.content.strip())
        and not verdict.score.correct
        and verdict.status is None  # an echo repeats the question: a judge would grade the prompt
        and verdict.tools is None  # calls are judged by their rules alone
    )


def decide(
    task: Task,
    sample: Sample,
    done: Completion,
    constraint: ConstraintRecord | None = None,
    *,
    rescue: bool = False,
    grade: Grade | None = None,
    allow_code: bool = False,
    calls: ToolsRecord | None = None,
    finish: str | None = None,
) -> Verdict:
    """Extract and score one completion. Answers come from the final content (or the constraint's reply) only.

    A transport error or filtered response is never scored; an echo of the prompt is not correct, with status
    `echoed` (`Verdict.status`). `rescue` also reads the reasoning when the content
    is empty, counted apart. `grade`: a model judge's verdict, which can only turn a rejected answer correct.
    `allow_code`: the user's --allow-code-execution; without it a code task's answer is refused (InputError).
    `calls`: a tool-call item's response (its calls, their timing), judged with the response's `finish` reason.
    """
    spec = task.spec
    answer = sample.tool_answer
    if done.status in NOT_SCORED:
        kept = (
            None if answer is None else (calls or ToolsRecord()).model_copy(update={"expected": answer, "status": None})
        )
        return Verdict(
            Extraction(value=None, rung="none"),
            Score(correct=False, detail=f"not scored: {done.status}"),
            None,
            tools=kept,
        )
    if answer is not None:
        return _tools(sample, answer, done, calls or ToolsRecord(), finish)
    if spec.scorer.kind == "tool_call":
        raise InputError(f"{task.where}: item {sample.id} has no expected calls for the tool_call scorer")
    if not sample.scored:  # a workload's synthetic prompt: there is no right answer to find
        return Verdict(Extraction(value=None, rung="none"), Score(correct=False, detail="not scored: synthetic"), None)
    if spec.scorer.kind in WHOLE_ANSWER:  # code and IFEval judge the whole content: no ladder, no naive reading
        return Verdict(*score_whole(done.content, sample, spec.scorer, allow_code=allow_code), None)
    if echoed(task, sample, done):
        return _echo(task, sample, done, constraint)
    found, judged = _answer(task, sample, done, constraint)
    verdict = score(found.value, sample, spec.scorer, spec.answer, text=done.content)
    if grade is not None and grade.verdict == "correct" and not verdict.correct and done.content.strip():
        found = Extraction(value=found.value or done.content.strip()[:200], rung="judge", raw=found.raw)
        verdict = Score(correct=True, detail=f"model judge {grade.model}: correct", f1=verdict.f1)
    naive_correct = _naive(task, sample, done)
    if rescue and not done.content.strip() and done.reasoning.strip():
        saved = extract(done.reasoning, spec.answer, sample.choices)
        saved = Extraction(value=saved.value, rung="rescue", raw=saved.raw) if saved.value is not None else saved
        rescued = score(saved.value, sample, spec.scorer, spec.answer).correct
        return Verdict(found, verdict, naive_correct, saved, rescued, judged)
    return Verdict(found, verdict, naive_correct, constraint=judged)
