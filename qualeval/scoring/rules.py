"""Scorers: is an extracted answer the gold one? One plain function per scorer kind of the task format."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import orjson

from qualeval.records import AnswerSpec, ConstraintKind, Score, ScorerSpec, TaskSpec
from qualeval.scoring.aliases import alias_score
from qualeval.scoring.constrain import constraint_for
from qualeval.scoring.extract import Number, find_number, fmt_number, math_equal, normalize
from qualeval.tasks import Sample

__all__ = ["SCORERS", "ValueScorer", "constraint_cuts", "gold_is_number", "reads_math", "score"]


def gold_is_number(gold: str) -> bool:
    """Whether a numeric task's gold states one number: not empty, not a word, not a worked solution whose first
    number (the one the scorer reads) is not its result."""
    first = find_number(gold)
    return first is not None and first == find_number(gold, last=True)


def _numeric(value: str, sample: Sample, spec: ScorerSpec) -> Score:
    got, gold = find_number(value), find_number(sample.gold)
    if gold is None:
        return Score(correct=False, detail=f"gold '{sample.gold}' is not a number")
    if got is None:
        return Score(correct=False, detail="no number in the answer")
    return Score(correct=_exactly_close(got, gold, spec), detail=f"{fmt_number(got)} vs {fmt_number(gold)}")


def _exactly_close(got: Number, gold: Number, spec: ScorerSpec) -> bool:
    """Within the tolerance, compared exactly: 12345678901234567891 is not 12345678901234567890, though the two
    are one float; the tolerance is the decimal the task writes (1e-6), not its float."""
    tolerance = max(Fraction(repr(spec.tolerance)), Fraction(repr(spec.relative_tolerance)) * abs(gold.exact))
    return abs(got.exact - gold.exact) <= tolerance


def _math(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    correct, detail = math_equal(sample.gold, value)
    return Score(correct=correct, detail=detail)


def _regex(text: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    """Searched, not full-matched: a pattern names what the answer must say (`Answer:\\s*{gold}\\b`), wherever it
    says it; `^...$` anchors it to the whole text."""
    pattern = (spec.pattern or "").replace("{gold}", re.escape(sample.gold))
    return Score(correct=re.search(pattern, text.strip()) is not None, detail=f"/{pattern}/")


def constraint_cuts(spec: TaskSpec) -> ConstraintKind | None:
    """The constraint that would cut a regex-scored task's answer to a bare value its pattern cannot match
    (`Answer:\\s*{gold}` never matches the bare `42` a number constraint leaves), else None."""
    if spec.scorer.kind != "regex" or spec.scorer.pattern is None:
        return None
    made = constraint_for(spec.answer, ("first", "second"))
    bare = made.choices[0] if made.choices else "42"
    pattern = spec.scorer.pattern.replace("{gold}", re.escape(bare))
    said = (bare, orjson.dumps({"answer": bare}).decode())  # a text answer comes back as a JSON object
    return None if any(re.search(pattern, text) for text in said) else made.kind


def _choice(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    same = value.strip().lower() == sample.gold.strip().lower()
    return Score(correct=same, detail=f"{value} vs {sample.gold}")


def _exact(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    """After what the task ignores (lm-eval's regexes_to_ignore), then the answer spec's normalisation; any of
    several golds (lm-eval's list targets) will do."""
    for pattern in spec.ignore:
        value = re.sub(pattern, "", value)
    got = normalize(value, answer.normalize)
    same = any(got == normalize(gold, answer.normalize) for gold in (sample.gold, *sample.aliases))
    return Score(correct=same, detail=f"'{value[:40]}' vs '{sample.gold[:40]}'")


@dataclass(frozen=True, slots=True)
class ValueScorer:
    """One scorer kind of an extracted value: how it judges, and how the value is to be read for it."""

    judge: Callable[[str, Sample, ScorerSpec, AnswerSpec], Score]
    math: bool = False
    """The ladder reads the answer with math-verify over the whole content (a LaTeX expression, not a number)."""
    reads_text: bool = False
    """The scorer also judges the answer text (the content after the reasoning split), not only the value the
    ladder extracted from it: a regex names the words around the answer, which the ladder cuts off."""


SCORERS: dict[str, ValueScorer] = {
    "numeric": ValueScorer(lambda value, sample, spec, _: _numeric(value, sample, spec)),
    "alias_match": ValueScorer(alias_score),
    "math": ValueScorer(_math, math=True),
    "regex": ValueScorer(_regex, reads_text=True),
    "choice": ValueScorer(_choice),
    "exact": ValueScorer(_exact),
}
"""The scorers of an extracted value, by a task's `scorer.kind`; `code` and `ifeval` read the whole answer instead
(qualeval.scoring.whole.WHOLE_SCORERS)."""


def reads_math(kind: str) -> bool:
    """Whether the answer of a task scored by `kind` is read with the math ladder."""
    found = SCORERS.get(kind)
    return found is not None and found.math


def score(
    value: str | None, sample: Sample, scorer: ScorerSpec, answer: AnswerSpec, *, text: str | None = None
) -> Score:
    """Score an extracted value, and, for a scorer that reads it, the answer text `text` (never the reasoning):
    either being right is right. No value and no text is simply not correct; the status says why."""
    judge = SCORERS[scorer.kind]
    texts = [value] if value is not None else []
    if judge.reads_text and text is not None and text.strip() and text != value:
        texts.append(text)
    if not texts:
        return Score(correct=False, detail="nothing extracted")
    verdicts = [judge.judge(t, sample, scorer, answer) for t in texts]
    return next((v for v in verdicts if v.correct), verdicts[0])
