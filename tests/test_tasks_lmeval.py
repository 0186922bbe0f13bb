"""lm-eval task imports as a new user meets them: the name lookup, GSM8K's gold and comparison, ARC's fields.

tests/data/lmeval/ mirrors the fields of lm-eval 0.4's gsm8k.yaml, arc_easy.yaml and the openllm group file; where
lm-eval itself is installed (the `lm-eval` extra), its own files are imported too.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from qualeval.judge import judge
from qualeval.models import Completion
from qualeval.tasks import build_samples, load_task
from qualeval.tasks.lmeval import find_task_file
from tests.conftest import ROOT, SHARED

MIRROR = ROOT / "tests" / "data" / "lmeval"
GSM8K_DIR = SHARED / "gsm8k"
needs_gsm8k = pytest.mark.skipif(not GSM8K_DIR.exists(), reason="shared GSM8K missing")
needs_lm_eval = pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="the lm-eval extra")


def test_the_lookup_takes_a_tasks_own_file_not_a_group_that_lists_it() -> None:
    # benchmarks/openllm.yaml sorts first and holds "  - task: gsm8k"; only a top-level `task:` line names a task
    assert find_task_file(MIRROR, "gsm8k") == MIRROR / "gsm8k" / "gsm8k.yaml"
    assert find_task_file(MIRROR, "arc_easy") == MIRROR / "arc" / "arc_easy.yaml"


@needs_gsm8k
def test_gsm8k_gold_is_the_number_and_perfect_answers_score_everything() -> None:
    task = load_task(f"lm_eval:{MIRROR / 'gsm8k' / 'gsm8k.yaml'}")
    samples = build_samples(task, data=GSM8K_DIR, limit=60)
    assert samples[0].gold == "18"
    # five worked examples from the train split as chat turns, each keeping its whole solution
    assert len(samples[0].messages) == 11 and "#### " in samples[0].messages[1].content
    assert '"#### <answer>"' in samples[0].messages[-1].content  # the marker the strict-match filter reads
    docs = [line for line in (GSM8K_DIR / "test.jsonl").read_text().splitlines()[:60]]
    import json

    for sample, line in zip(samples, docs, strict=True):
        solution = json.loads(line)["answer"]  # lm-eval's perfect answer: the reference solution itself
        assert judge(task, sample, Completion(content=solution)).score.correct, sample.id
        # what regexes_to_ignore strips from an answer: thousands commas, a dollar sign, a final full stop
        number = sample.gold
        spoken = f"${int(number):,}." if number.isdigit() else number
        assert judge(task, sample, Completion(content=f"Working...\n#### {spoken}")).score.correct, sample.id
    assert not judge(task, samples[0], Completion(content="#### 19")).score.correct


def test_arc_documents_keep_their_own_choices_field(tmp_path: Path) -> None:
    task = load_task(f"lm_eval:{MIRROR / 'arc' / 'arc_easy.yaml'}")
    samples = build_samples(task, data=MIRROR / "arc" / "test.jsonl")
    first, second = samples
    assert first.choices == ("a mirror", "the Sun", "the Moon's shadow", "a window") and first.gold == "B"
    assert second.gold == "C"  # label "3" is the third option: index 2, letter C
    # the prompt lists the options it asks about, lettered, and says how to answer
    prompt = first.messages[-1].content
    assert "A. a mirror\nB. the Sun\n" in prompt and '"Answer: X"' in prompt
    assert judge(task, first, Completion(content="The Sun gives light.\nAnswer: B")).score.correct


@needs_lm_eval
@needs_gsm8k
def test_the_installed_lm_eval_tasks_import() -> None:
    gsm8k = load_task("lm_eval:gsm8k")
    assert gsm8k.spec.name == "gsm8k" and gsm8k.spec.scorer.ignore
    sample = build_samples(gsm8k, data=GSM8K_DIR, limit=1)[0]
    assert sample.gold == "18"
    arc = load_task("lm_eval:arc_easy")
    assert build_samples(arc, data=MIRROR / "arc" / "test.jsonl")[0].gold == "B"
