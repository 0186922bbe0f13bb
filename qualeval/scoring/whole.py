"""Scorers that judge the whole answer rather than a value extracted from it: `code` (HumanEval) and `ifeval`.

The judge hands them the final content (never the reasoning); each lives in a module of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from qualeval.errors import InputError
from qualeval.records import Score, ScorerSpec, TaskSpec
from qualeval.scoring.extract import Extraction
from qualeval.tasks import Sample, Task

__all__ = [
    "WHOLE_ANSWER",
    "WHOLE_SCORERS",
    "WholeScorer",
    "check_scorers",
    "runs_code",
    "score_whole",
    "scorer_problem",
]


def _code(content: str, sample: Sample, scorer: ScorerSpec, allow_code: bool) -> tuple[Extraction, Score]:
    """`allow_code`: whether a code answer's program may run (--allow-code-execution); it is refused otherwise."""
    from qualeval.scoring.code import answer_code, score_code

    code = answer_code(content, sample.meta.get("entry_point"))
    if code is None:
        return Extraction(value=None, rung="none"), Score(correct=False, detail="no code in the answer")
    return Extraction(value=code, rung="code"), score_code(code, sample, scorer, allow_code=allow_code)


def _ifeval(content: str, sample: Sample, scorer: ScorerSpec, allow_code: bool) -> tuple[Extraction, Score]:
    from qualeval.scoring.ifeval import score_ifeval

    if not content.strip():
        return Extraction(value=None, rung="none"), Score(correct=False, detail="empty answer")
    return Extraction(value=content[:200], rung="content"), score_ifeval(content, sample)


@dataclass(frozen=True, slots=True)
class WholeScorer:
    """One scorer kind of the whole content: how it judges, and what scoring it takes."""

    judge: Callable[[str, Sample, ScorerSpec, bool], tuple[Extraction, Score]]
    runs_code: bool = False
    """Scoring runs the answer as a program: only with --allow-code-execution, and off the event loop."""


WHOLE_SCORERS: dict[str, WholeScorer] = {"code": WholeScorer(_code, runs_code=True), "ifeval": WholeScorer(_ifeval)}
"""Scorers of the whole content, by a task's `scorer.kind`: no extraction ladder, no constraint, no naive
extractor."""
WHOLE_ANSWER = frozenset(WHOLE_SCORERS)
"""The kinds that judge the whole answer: being in this table is that flag."""


def runs_code(kind: str) -> bool:
    """Whether scoring a task of this kind runs its answers as programs."""
    found = WHOLE_SCORERS.get(kind)
    return found is not None and found.runs_code


def scorer_problem(spec: TaskSpec) -> str | None:
    """What keeps a task's scorer from judging its answers, or None. A scorer of this table judges the content
    as written, so the task must take its answer as text (no typed value, no constraint of a number or a choice)."""
    if spec.scorer.kind in WHOLE_SCORERS and spec.answer.type != "text":
        return f"the {spec.scorer.kind} scorer reads the whole answer: it needs answer.type 'text'"
    return None


def check_scorers(tasks: Iterable[Task]) -> None:
    """Refuse, naming the task file, a task whose scorer cannot judge its answers: before anything is sent or
    read. The task format (qualeval.records) names the kinds; which of them read the whole answer is this table's."""
    for task in tasks:
        if (problem := scorer_problem(task.spec)) is not None:
            raise InputError(f"{task.where}: field 'scorer': {problem}")


def score_whole(
    content: str, sample: Sample, scorer: ScorerSpec, *, allow_code: bool = False
) -> tuple[Extraction, Score]:
    """The whole-answer scorer of the task's kind on the final content (never the reasoning)."""
    return WHOLE_SCORERS[scorer.kind].judge(content, sample, scorer, allow_code)
