"""The one judge: live runs, `rescore` and `score` decide an item here, from what a record keeps.

Inputs are the task, the sample, the split completion, the constraint record (which mode ran, the kind sent,
the follow-up's reply) and, where a model judge was asked, its grade. The constraint's answer is re-derived
from the stored text, so a rescore of a record reaches the verdict the live run reached.
"""

from __future__ import annotations

from dataclasses import dataclass

from qualeval.constrain import ConstraintRecord, constraint_for, validate
from qualeval.extract import Extraction, extract, naive_extract, typed_value
from qualeval.models import Completion, Grade, Sample
from qualeval.score import Score, score
from qualeval.scorers import WHOLE_ANSWER, judge_whole
from qualeval.tasks.task import Task

__all__ = ["NOT_SCORED", "Verdict", "constraint_answer", "judge", "wants_grade"]

NOT_SCORED = ("transport_error", "content_filter")
"""Statuses that carry no answer of the model's: never scored, never graded."""


@dataclass(frozen=True, slots=True)
class Verdict:
    extraction: Extraction
    score: Score
    naive_correct: bool | None
    rescue: Extraction | None = None
    rescue_correct: bool | None = None


def constraint_answer(
    task: Task, sample: Sample, done: Completion, constraint: ConstraintRecord | None
) -> tuple[str | None, str | None]:
    """(the answer a held constraint delivered, the follow-up's reply to read when its constraint broke)."""
    if constraint is None or constraint.kind is None or constraint.mode not in ("single", "followup"):
        return None, None
    if constraint.mode == "followup":
        follow = constraint.followup or {}
        if follow.get("status") != "ok" or follow.get("error"):
            return None, None
        text = str(follow.get("content") or "")
    else:
        text = done.content
    if not text.strip():
        return None, None
    held, answer = validate(constraint_for(task.spec.answer, sample.choices), constraint.kind, text)
    if held and answer is not None:
        return answer, None
    return None, (text if constraint.mode == "followup" else None)


def _answer(task: Task, sample: Sample, done: Completion, constraint: ConstraintRecord | None) -> Extraction:
    spec = task.spec
    held, followup = constraint_answer(task, sample, done, constraint)
    if held is not None and (value := typed_value(held, spec.answer, sample.choices)) is not None:
        return Extraction(value=value, rung="constraint", raw=held)
    math = spec.scorer.kind == "math"
    if followup is not None:  # asked for the final answer alone, the reply is the clearest statement of it
        got = extract(followup, spec.answer, sample.choices, math=math)
        if got.value is not None:
            return Extraction(value=got.value, rung="followup", raw=got.raw)
    return extract(done.content, spec.answer, sample.choices, math=math)


def wants_grade(task: Task, done: Completion, verdict: Verdict) -> bool:
    """A model judge is asked only about a free-form answer that the rules did not accept."""
    return (
        task.spec.answer.type == "text"
        and task.spec.scorer.kind not in WHOLE_ANSWER
        and done.status not in NOT_SCORED
        and bool(done.content.strip())
        and not verdict.score.correct
    )


def judge(
    task: Task,
    sample: Sample,
    done: Completion,
    constraint: ConstraintRecord | None = None,
    *,
    rescue: bool = False,
    grade: Grade | None = None,
    allow_code: bool = False,
) -> Verdict:
    """Extract and score one completion. Answers come from the final content (or the constraint's reply) only.

    A transport error or filtered response is never scored. `rescue` also reads the reasoning when the content
    is empty, counted apart. `grade`: a model judge's verdict, which can only turn a rejected answer correct.
    `allow_code`: the user's --allow-code-execution; without it a code task's answer is refused (InputError).
    """
    spec = task.spec
    if done.status in NOT_SCORED:
        return Verdict(
            Extraction(value=None, rung="none"), Score(correct=False, detail=f"not scored: {done.status}"), None
        )
    if sample.meta.get("scored") is False:  # a workload's synthetic prompt: there is no right answer to find
        return Verdict(Extraction(value=None, rung="none"), Score(correct=False, detail="not scored: synthetic"), None)
    if spec.scorer.kind in WHOLE_ANSWER:  # code and IFEval judge the whole content: no ladder, no naive reading
        return Verdict(*judge_whole(done.content, sample, spec.scorer, allow_code=allow_code), None)
    found = _answer(task, sample, done, constraint)
    verdict = score(found.value, sample, spec.scorer, spec.answer)
    if grade is not None and grade.verdict == "correct" and not verdict.correct and done.content.strip():
        found = Extraction(value=found.value or done.content.strip()[:200], rung="judge", raw=found.raw)
        verdict = Score(correct=True, detail=f"model judge {grade.model}: correct", f1=verdict.f1)
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
