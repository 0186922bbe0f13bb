"""Scorers: is an extracted answer the gold one? One plain function per scorer kind of the task format."""

from __future__ import annotations

import re

from pydantic import BaseModel

from qualeval.extract import find_number, math_timeout, normalize
from qualeval.models import Sample
from qualeval.tasks.spec import AnswerSpec, ScorerSpec

__all__ = ["Score", "score"]


class Score(BaseModel):
    correct: bool
    detail: str = ""


def _close(a: float, b: float, spec: ScorerSpec) -> bool:
    return abs(a - b) <= max(spec.tolerance, spec.relative_tolerance * abs(b))


def _numeric(value: str, sample: Sample, spec: ScorerSpec) -> Score:
    got, gold = find_number(value), find_number(sample.gold)
    if gold is None:
        return Score(correct=False, detail=f"gold '{sample.gold}' is not a number")
    if got is None:
        return Score(correct=False, detail="no number in the answer")
    return Score(correct=_close(got, gold, spec), detail=f"{got:g} vs {gold:g}")


def _alias(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    accepted = [sample.gold, *sample.aliases]
    norm = normalize(value, answer.normalize)
    for alias in accepted:
        if normalize(alias, answer.normalize) == norm:
            return Score(correct=True, detail=f"matches '{alias}'")
    got = find_number(value)
    # numeric tolerance only when both sides are plain numbers ("1945" vs "1945."), never inside words
    if got is not None and re.fullmatch(r"[-−$\d.,\s]+%?", value.strip()):
        for alias in accepted:
            gold = find_number(alias)
            if gold is not None and re.fullmatch(r"[-−$\d.,\s°CFK]+", alias.strip()) and _close(got, gold, spec):
                return Score(correct=True, detail=f"{got:g} within tolerance of '{alias}'")
    return Score(correct=False, detail=f"no alias matches '{value[:60]}'")


def _math(value: str, sample: Sample) -> Score:
    import math_verify

    timeout = math_timeout()
    gold = math_verify.parse(sample.gold, parsing_timeout=timeout)
    got = math_verify.parse(value, parsing_timeout=timeout)
    if not got:
        return Score(correct=False, detail="math-verify parsed nothing")
    return Score(correct=bool(math_verify.verify(gold, got, timeout_seconds=timeout)), detail="math-verify")


def score(value: str | None, sample: Sample, scorer: ScorerSpec, answer: AnswerSpec) -> Score:
    """Score an extracted value. No value is simply not correct; the status says why."""
    if value is None:
        return Score(correct=False, detail="nothing extracted")
    kind = scorer.kind
    if kind == "numeric":
        return _numeric(value, sample, scorer)
    if kind == "alias_match":
        return _alias(value, sample, scorer, answer)
    if kind == "math":
        return _math(value, sample)
    if kind == "regex":
        pattern = (scorer.pattern or "").replace("{gold}", re.escape(sample.gold))
        return Score(correct=re.fullmatch(pattern, value.strip()) is not None, detail=f"/{pattern}/")
    if kind == "choice":
        same = value.strip().lower() == sample.gold.strip().lower()
        return Score(correct=same, detail=f"{value} vs {sample.gold}")
    # exact: after the answer spec's normalisation
    same = normalize(value, answer.normalize) == normalize(sample.gold, answer.normalize)
    return Score(correct=same, detail=f"'{value[:40]}' vs '{sample.gold[:40]}'")
