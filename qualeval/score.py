"""Scorers: is an extracted answer the gold one? One plain function per scorer kind of the task format."""

from __future__ import annotations

import re

from qualeval.extract import find_number, math_equal, normalize, token_f1, words_to_digits
from qualeval.models import Sample
from qualeval.records import Score
from qualeval.tasks.spec import AnswerSpec, ScorerSpec

__all__ = ["Score", "score"]

_PLAIN_NUMBER = re.compile(r"[-−$\d.,\s]+%?")
_DIGITS = re.compile(r"\d+")
_PLAIN_GOLD_NUMBER = re.compile(r"[-−$\d.,\s°CFK]+")


def _close(a: float, b: float, spec: ScorerSpec) -> bool:
    return abs(a - b) <= max(spec.tolerance, spec.relative_tolerance * abs(b))


def _numeric(value: str, sample: Sample, spec: ScorerSpec) -> Score:
    got, gold = find_number(value), find_number(sample.gold)
    if gold is None:
        return Score(correct=False, detail=f"gold '{sample.gold}' is not a number")
    if got is None:
        return Score(correct=False, detail="no number in the answer")
    return Score(correct=_close(got, gold, spec), detail=f"{got:g} vs {gold:g}")


def _contains(outer: str, inner: str) -> bool:
    return bool(inner) and f" {inner} " in f" {outer} "


def _hedged(got: str, alias: str) -> bool:
    """An answer that holds the alias and also another number, or offers alternatives: "1945 or 1946"."""
    return bool(set(_DIGITS.findall(got)) - set(_DIGITS.findall(alias))) or " or " in f" {got} "


def _alias_hit(got: str, alias: str) -> str | None:
    """How a normalised answer matches a normalised alias: exactly, or one holds the other as whole words.

    An answer inside the alias must not be a bare number or a lone word of a longer name ("1" in "1 million").
    """
    if got == alias:
        return "matches"
    if _contains(got, alias) and not _hedged(got, alias):
        return "contains"
    if _contains(alias, got) and not got.replace(" ", "").isdigit() and len(got.split()) * 2 >= len(alias.split()):
        return "is within"
    return None


def _alias(value: str, sample: Sample, spec: ScorerSpec, answer: AnswerSpec) -> Score:
    accepted = [sample.gold, *sample.aliases]
    norm = words_to_digits(normalize(value, answer.normalize))
    forms = [(alias, words_to_digits(normalize(alias, answer.normalize))) for alias in accepted]
    f1 = max((token_f1(norm, form) for _, form in forms), default=0.0)
    for alias, form in forms:
        if how := _alias_hit(norm, form):
            return Score(correct=True, detail=f"{how} '{alias}'", f1=f1)
    got = find_number(value)
    # numeric tolerance only when both sides are plain numbers ("1945" vs "1945."), never inside words
    if got is not None and _PLAIN_NUMBER.fullmatch(value.strip()):
        for alias in accepted:
            gold = find_number(alias)
            if gold is not None and _PLAIN_GOLD_NUMBER.fullmatch(alias.strip()) and _close(got, gold, spec):
                return Score(correct=True, detail=f"{got:g} within tolerance of '{alias}'", f1=f1)
    return Score(correct=False, detail=f"no alias matches '{value[:60]}'", f1=f1)


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
        correct, detail = math_equal(sample.gold, value)
        return Score(correct=correct, detail=detail)
    if kind == "regex":
        pattern = (scorer.pattern or "").replace("{gold}", re.escape(sample.gold))
        return Score(correct=re.fullmatch(pattern, value.strip()) is not None, detail=f"/{pattern}/")
    if kind == "choice":
        same = value.strip().lower() == sample.gold.strip().lower()
        return Score(correct=same, detail=f"{value} vs {sample.gold}")
    # exact: after what the task ignores (lm-eval's regexes_to_ignore), then the answer spec's normalisation;
    # any of several golds (lm-eval's list targets) will do
    for pattern in scorer.ignore:
        value = re.sub(pattern, "", value)
    got = normalize(value, answer.normalize)
    same = any(got == normalize(gold, answer.normalize) for gold in (sample.gold, *sample.aliases))
    return Score(correct=same, detail=f"'{value[:40]}' vs '{sample.gold[:40]}'")
