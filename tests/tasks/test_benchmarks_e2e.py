"""Each model-card benchmark end to end against the reference server, which answers it (the right letter, a boxed
answer, GPT-4's IFEval responses, HumanEval's canonical programs), over real HTTP, with small limits."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

import qualeval
from qualeval.errors import InputError
from qualeval.run.options import load_config
from qualeval.sim import Behaviour
from tests.conftest import ROOT, SHARED, fast_sim, sim_url
from tests.tasks.test_benchmarks import MMLU_PRO_OUTPUTS, mmlu_pro_copy

HUMANEVAL = SHARED / "humaneval" / "HumanEval.jsonl"
MATH500 = SHARED / "math500" / "test.jsonl"
IFEVAL = SHARED / "ifeval"
RIGHT = Behaviour(accuracy=1.0, reasoning_tokens=30, trap_rate=0.0)
FAST = {"probe": False, "concurrency": 4, "warmup": 0, "max_retries": 0}


def run(url: str, tmp_path: Path, task: str, data: str | Path, limit: int, **options: object) -> qualeval.RunResult:
    return qualeval.evaluate(
        "sim", [task], base_url=url, out=tmp_path / task, data={task: str(data)}, limit=limit, **FAST, **options
    )


@pytest.mark.skipif(not MMLU_PRO_OUTPUTS.exists(), reason="shared MMLU-Pro outputs missing")
def test_mmlu_pro(tmp_path: Path) -> None:
    data = mmlu_pro_copy(tmp_path / "data")
    config = fast_sim(tasks=("mmlu_pro",), task_data={"mmlu_pro": data}, behaviour=RIGHT)
    with sim_url(config) as url:
        result = run(url, tmp_path, "mmlu_pro", data, 6, published={"mmlu_pro": 84.0})
    t = result.summary.tasks["mmlu_pro"]
    assert t.summary.accuracy == 1.0 and t.summary.n == 6 and t.published == pytest.approx(0.84)
    assert all(r.content.strip().startswith("The answer is (") for r in result.records)
    report = (result.root / "report.md").read_text()
    assert "mmlu_pro: published 84.0%, measured 100.0%" in report and "is inside the interval" in report
    assert "published <b>84.0%</b>" in (result.root / "report.html").read_text()


def test_gpqa_diamond_from_a_local_csv(tmp_path: Path) -> None:
    path = tmp_path / "gpqa_diamond.csv"
    rows = [["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3",
             "Record ID", "High-level domain", "Subdomain"]]  # fmt: skip
    rows += [[f"Invented question {i}?", f"yes {i}", f"no {i}", f"maybe {i}", f"never {i}", f"r{i}", "Biology", "G"]
             for i in range(5)]  # fmt: skip
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    config = fast_sim(tasks=("gpqa_diamond",), task_data={"gpqa_diamond": path}, behaviour=RIGHT)
    with sim_url(config) as url:
        result = run(url, tmp_path, "gpqa_diamond", path, 5)
    assert result.summary.tasks["gpqa_diamond"].summary.accuracy == 1.0
    assert {r.extraction.rung for r in result.records} == {"anchor"}


@pytest.mark.skipif(not MATH500.exists(), reason="shared MATH-500 missing")
def test_math500(tmp_path: Path) -> None:
    config = fast_sim(tasks=("math500",), task_data=MATH500, behaviour=RIGHT)
    with sim_url(config) as url:
        result = run(url, tmp_path, "math500", MATH500, 12)
    summary = result.summary.tasks["math500"].summary
    assert summary.accuracy == 1.0 and set(summary.breakdowns) == {"subject", "level"}


@pytest.mark.skipif(
    not IFEVAL.exists() or importlib.util.find_spec("lm_eval") is None, reason="IFEval data or the ifeval extra"
)
def test_ifeval_answered_with_gpt4s_responses(tmp_path: Path) -> None:
    answers = IFEVAL / "input_response_data_gpt4_20231107_145030.jsonl"
    config = fast_sim(answers=answers, behaviour=RIGHT)
    with sim_url(config) as url:
        result = run(url, tmp_path, "ifeval", IFEVAL / "input_data.jsonl", 20)
    summary = result.summary.tasks["ifeval"].summary
    assert set(summary.measures) == {"prompt_strict", "instruction_strict", "prompt_loose", "instruction_loose"}
    assert summary.measures["prompt_strict"].accuracy == summary.accuracy
    assert summary.measures["instruction_loose"].accuracy >= summary.measures["instruction_strict"].accuracy
    assert 0.5 < summary.accuracy <= 1.0 and {r.extraction.rung for r in result.records} == {"content"}
    assert all(r.constraint.mode == "off" for r in result.records)  # a whole response is never constrained
    assert "instruction-level strict" in (result.root / "report.md").read_text()


@pytest.mark.skipif(not HUMANEVAL.exists(), reason="shared HumanEval missing")
def test_humaneval_runs_the_answers_code_only_when_allowed(tmp_path: Path) -> None:
    config = fast_sim(tasks=("humaneval",), task_data=HUMANEVAL, behaviour=Behaviour(accuracy=0.6, reasoning_tokens=30))
    with sim_url(config) as url:
        with pytest.raises(InputError, match="allow-code-execution"):
            run(url, tmp_path / "refused", "humaneval", HUMANEVAL, 4)
        result = run(
            url, tmp_path, "humaneval", HUMANEVAL, 6, allow_code_execution=True, samples_per_item=3, temperature=0.7
        )
    t = result.summary.tasks["humaneval"]
    right = [r for r in result.records if r.score.correct]
    wrong = [r for r in result.records if not r.score.correct]
    assert right and wrong  # canonical programs pass; the sim's wrong answers fail their tests
    assert all("```python" in r.content for r in right) and all("failed" in r.score.detail for r in wrong)
    assert t.repeated is not None and set(t.repeated.pass_at) == {1, 2, 3}
    assert t.repeated.pass_at[1] == pytest.approx(t.summary.accuracy)


def test_the_model_card_profile_loads_with_its_published_figures() -> None:
    config = load_config(ROOT / "configs" / "model-card-reasoning.yaml", {"base_url": "http://h/v1", "out": "o"})
    assert config.thinking is True and config.max_tokens == [32768]  # one budget: every request, no level of its own
    assert set(config.published) == set(config.tasks) and config.published["ifeval"] == pytest.approx(0.833)
