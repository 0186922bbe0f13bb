"""An imported lm-eval task sends lm-eval's own prompt: compared, message by message, with what lm-eval itself
renders (`ConfigurableTask.fewshot_context` with a chat template, few-shot examples as turns) from the same local
data (../shared/data), with nothing of qualeval's added. lm-eval renders without torch; its hub loads are pointed
at the local files.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from qualeval.tasks import build_samples, load_task
from qualeval.tasks.sample import Sample
from tests.conftest import SHARED

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="the lm-eval extra"),
    pytest.mark.skipif(not (SHARED / "bbh").exists(), reason="shared data missing"),
]


@pytest.fixture(scope="module")
def manager() -> Any:
    from lm_eval.tasks import TaskManager

    return TaskManager()


def lm_eval_messages(manager: Any, name: str, files: dict[str, str], shots: int, **kwargs: Any) -> list[dict[str, str]]:
    """lm-eval's chat messages for the first test document of task `name`, its data read from `files`."""
    from lm_eval.api.task import ConfigurableTask

    cfg = manager._factory._load_full_config(manager._entry(name), None)
    cfg = {**cfg, "dataset_path": "json", "dataset_name": None, "dataset_kwargs": {"data_files": files, **kwargs}}
    task = ConfigurableTask(config=cfg)
    doc = task.test_docs()[0]
    return task.fewshot_context(  # type: ignore[no-any-return]
        doc,
        shots,
        apply_chat_template=True,
        fewshot_as_multiturn=True,
        chat_template=lambda messages, add_generation_prompt: messages,
        gen_prefix=task.doc_to_prefix(doc),
    )


def as_chat(sample: Sample) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in sample.messages]


def test_bbh_fewshot_turns_are_lm_evals_and_carry_no_instruction(manager: Any) -> None:
    data = SHARED / "bbh" / "web_of_lies.json"
    sample = build_samples(load_task("lm_eval:bbh_cot_fewshot_web_of_lies"), data=data, limit=1)[0]
    theirs = lm_eval_messages(manager, "bbh_cot_fewshot_web_of_lies", {"test": str(data)}, 3, field="examples")
    assert as_chat(sample) == theirs
    assert not any("Answer:" in m.content or "answer is <" in m.content for m in sample.messages if m.role == "user")


def test_gsm8k_cot_llama_states_its_format_once(manager: Any) -> None:
    data = SHARED / "gsm8k"
    sample = build_samples(load_task("lm_eval:gsm8k_cot_llama"), data=data, limit=1)[0]
    theirs = lm_eval_messages(manager, "gsm8k_cot_llama", {"test": str(data / "test.jsonl")}, 8)
    assert as_chat(sample) == theirs
    assert sample.messages[-1].content.count("The final answer is") == 1
    assert sample.gold == "18"


def test_humaneval_instruct_is_lm_evals_prompt_with_its_gen_prefix_closing_the_user_turn(manager: Any) -> None:
    data = SHARED / "humaneval" / "HumanEval.jsonl"
    sample = build_samples(load_task("lm_eval:humaneval_instruct"), data=data, limit=1)[0]
    # lm-eval's task cannot be built here (its module loads a metric from the hub at import): its own templates,
    # rendered by its own apply_template, are the user turn and the start of the model's turn
    from lm_eval.utils import apply_template

    cfg = manager._entry("humaneval_instruct").cfg
    doc = json.loads(data.read_text(encoding="utf-8").splitlines()[0])
    question, prefix = apply_template(cfg["doc_to_text"], doc), apply_template(cfg["gen_prefix"], doc)
    # a chat request ends with the user turn, so the gen_prefix lm-eval starts the model's turn with closes it
    assert as_chat(sample) == [{"role": "user", "content": question + prefix}]
    # lm-eval's two fences (the question's, the gen_prefix's), none of qualeval's
    assert sample.messages[-1].content.count("```python") == 2
    assert "Complete the following Python function" not in sample.messages[-1].content


def test_lm_eval_mmlu_reads_the_mmlu_csv_folder(manager: Any, tmp_path: Path) -> None:
    folder = SHARED / "mmlu"
    task = load_task("lm_eval:mmlu_anatomy")
    samples = build_samples(task, data=folder, num_fewshot=5)
    with (folder / "test" / "anatomy_test.csv").open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert len(samples) == len(rows) and [s.gold for s in samples] == [r[5] for r in rows]
    # lm-eval renders the same rows in the hub's shape (question, choices, answer index) identically
    files = {}
    for split in ("test", "dev"):
        with (folder / split / f"anatomy_{split}.csv").open(encoding="utf-8") as handle:
            docs = [
                {"question": r[0], "subject": "anatomy", "choices": r[1:5], "answer": "ABCD".index(r[5])}
                for r in csv.reader(handle)
            ]
        files[split] = str(tmp_path / f"{split}.jsonl")
        Path(files[split]).write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    assert as_chat(samples[0]) == lm_eval_messages(manager, "mmlu_anatomy", files, 5)
    assert "Answer: X" not in samples[0].messages[-1].content  # the question ends in lm-eval's own "Answer:"


@pytest.mark.parametrize("prefix", ["The answer:", "lead"])  # a template; a field of the document (lm-eval's rule)
def test_gen_prefix_starts_each_fewshot_answer_and_closes_the_question(tmp_path: Path, prefix: str) -> None:
    from lm_eval.api.task import ConfigurableTask

    docs = [{"q": "What is 3+3?", "a": 6, "lead": "So:"}]
    (tmp_path / "test.jsonl").write_text(json.dumps(docs[0]) + "\n", encoding="utf-8")
    shots = [{"q": "What is 1+1?", "a": 2, "lead": "Hence"}, {"q": "What is 2+2?", "a": 4, "lead": "Thus"}]
    cfg = {
        "task": "prefixed",
        "output_type": "generate_until",
        "test_split": "test",
        "doc_to_text": "Q: {{ q }}",
        "doc_to_target": "{{ a }}",
        "gen_prefix": prefix,
        "target_delimiter": "~",
        "num_fewshot": 2,
        "fewshot_config": {"sampler": "first_n", "samples": shots},
        "generation_kwargs": {"until": ["\n\n"]},
        "metric_list": [{"metric": "exact_match"}],
    }
    (tmp_path / "prefixed.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    sample = build_samples(load_task(f"lm_eval:{tmp_path / 'prefixed.yaml'}"), data=tmp_path / "test.jsonl")[0]
    files = {"data_files": {"test": str(tmp_path / "test.jsonl")}}
    task = ConfigurableTask(config={**cfg, "dataset_path": "json", "dataset_kwargs": files})
    doc = task.test_docs()[0]
    theirs = task.fewshot_context(
        doc,
        2,
        apply_chat_template=True,
        fewshot_as_multiturn=True,
        chat_template=lambda messages, add_generation_prompt: messages,
        gen_prefix=task.doc_to_prefix(doc),
    )
    # lm-eval's turns up to the question; its last turn, the gen_prefix, closes the question after the delimiter
    assert as_chat(sample)[:-1] == theirs[:-2]
    assert as_chat(sample)[-1] == {"role": "user", "content": theirs[-2]["content"] + "~" + theirs[-1]["content"]}
    assert sample.messages[1].content.endswith(" 2")  # the few-shot answer follows its gen_prefix
