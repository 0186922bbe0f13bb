"""The reference server's key finds a question however a task renders it: a built-in task's samples key an lm-eval
import of the same documents (other instructions, another option layout, few-shot turns), and the other way round;
whitespace and punctuation at a question's edges do not hide it."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualeval.sim.answerkey import AnswerKey, KeyEntry
from qualeval.tasks import build_samples, load_task
from qualeval.tasks.sample import Sample
from tests.conftest import GSM8K, SHARED, needs_gsm8k

MMLU = SHARED / "mmlu"
needs_mmlu = pytest.mark.skipif(not (MMLU / "test").exists(), reason="../shared/data/mmlu missing")


def _samples(ref: str, data: Path) -> list[Sample]:
    return list(build_samples(load_task(ref), data=data))


def _found(key: AnswerKey, ref: str, data: Path) -> tuple[int, int]:
    """How many of the task's prompts the key finds with their own gold (numbers compared without commas)."""
    samples = _samples(ref, data)
    hits = [key.find(s.messages[-1].content) for s in samples]
    right = sum(
        e is not None and e.answer.replace(",", "") == s.gold.replace(",", "")
        for e, s in zip(hits, samples, strict=True)
    )
    return right, len(samples)


@needs_mmlu
def test_a_built_in_mmlu_subject_keys_its_lm_eval_import_and_the_import_keys_itself() -> None:
    key = AnswerKey.from_samples(_samples("mmlu:anatomy", MMLU))
    right, n = _found(key, "lm_eval:mmlu_anatomy", MMLU)
    assert n > 100 and right == n
    own = AnswerKey.from_samples(_samples("lm_eval:mmlu_anatomy", MMLU))
    assert _found(own, "lm_eval:mmlu_anatomy", MMLU) == (n, n)
    assert _found(key, "mmlu:anatomy", MMLU) == (n, n)  # the built-in task still finds its own


@needs_gsm8k
def test_built_in_gsm8k_keys_the_lm_eval_chain_of_thought_import() -> None:
    data = GSM8K.parent
    key = AnswerKey.from_samples(_samples("gsm8k", data))
    right, n = _found(key, "lm_eval:gsm8k_cot_llama", data)
    assert n > 1000 and right == n
    assert _found(key, "gsm8k", data) == (n, n)


def test_whitespace_and_punctuation_at_the_edges_do_not_hide_a_question() -> None:
    key = AnswerKey([KeyEntry(question="Name the largest planet.", answer="Jupiter"), KeyEntry("Spell 'cat'", "c")])
    found = key.find("Question: name the\n  largest   planet\nAnswer:")
    assert found is not None and found.answer == "Jupiter"
    assert key.find("Question: Spell 'cat'? Answer:") is not None
    assert key.find("Name the smallest planet.") is None
