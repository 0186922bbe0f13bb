"""The real-output corpora and how each is scored: through `qualeval score`'s own code (score_file), with a task a
user would write for those outputs, the prompt the model really saw wherever the outputs carry it.

    gsm/<model>       ZeroEval GSM8K, 8 models: tests/data/real_outputs/zeroeval_gsm.yaml, ZeroEval's prompt,
                      --data the result file itself (question and gold beside each output)
    math/<model>      ZeroEval MATH level 5, 4 models: zeroeval_math_l5.yaml (math-verify), the same way
    mmlu_pro/<model>  MMLU-Pro 5-shot CoT, 3 models: the built-in mmlu_pro task, gold and options on each line
                      (the published outputs do not carry the five-shot prompt)
    bbh/<task>        BIG-Bench-Hard CoT by code-davinci-002, 6 tasks: bbh_<task>.yaml, --data the outputs folder,
                      whose `input` is the whole three-shot prompt
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from qualeval.run import score_file
from tests.conftest import DATA, SHARED

OUTPUTS = SHARED / "model_outputs"
TASKS = DATA / "real_outputs"
VERDICTS = TASKS / "verdicts"


@dataclass(frozen=True)
class Family:
    """One published corpus: where its files are and how a row becomes a line of `qualeval score`."""

    name: str
    folder: str
    suffix: str
    members: tuple[str, ...]
    """The models (or BBH tasks) gated: a file of the folder not named here fails test_every_file_is_gated."""
    text: str
    """The field holding the model's output."""
    line: Callable[[int, dict[str, Any]], dict[str, Any]]
    task: Callable[[str], str]
    data: Callable[[Path], Path | None]


def _zeroeval(task: str) -> dict[str, Any]:
    return {
        "suffix": ".jsonl",
        "text": "output",
        "line": lambda _, row: {"id": str(row["id"]), "content": row["output"]},
        "task": lambda _: str(TASKS / f"{task}.yaml"),
        "data": lambda source: source,
    }


FAMILIES = {
    family.name: family
    for family in (
        Family(
            name="gsm",
            folder="zeroeval_gsm",
            members=(
                "Meta-Llama-3.1-8B-Instruct",
                "Mistral-Nemo-Instruct-2407",
                "Mixtral-8x7B-Instruct-v0.1",
                "Qwen2-7B-Instruct",
                "Yi-1.5-9B-Chat",
                "command-r",
                "gemma-2-9b-it",
                "gpt-3.5-turbo-0125",
            ),
            **_zeroeval("zeroeval_gsm"),
        ),
        Family(
            name="math",
            folder="zeroeval_math_l5",
            members=("Meta-Llama-3.1-8B-Instruct", "Phi-3.5-mini-instruct", "Qwen2.5-7B-Instruct", "Yi-1.5-9B-Chat"),
            **_zeroeval("zeroeval_math_l5"),
        ),
        Family(
            name="mmlu_pro",
            folder="mmlu_pro_cot",
            suffix=".jsonl",
            members=("Meta-Llama-3_1-8B-Instruct", "Mistral-7B-Instruct-v0.2", "Qwen1.5-7B-Chat"),
            text="generated_text",
            line=lambda _, row: {
                "id": str(row["question_id"]),
                "content": row["generated_text"],
                "target": row["answer"],
                "choices": row["options"],
            },
            task=lambda _: "mmlu_pro",
            data=lambda _: None,
        ),
        Family(
            name="bbh",
            folder="bbh_davinci_cot",
            suffix=".json",
            members=(
                "boolean_expressions",
                "causal_judgement",
                "date_understanding",
                "logical_deduction_five_objects",
                "navigate",
                "sports_understanding",
            ),
            text="prediction",
            line=lambda index, row: {"id": index, "content": row["prediction"]},
            task=lambda member: str(TASKS / f"bbh_{member}.yaml"),
            data=lambda source: source.parent,
        ),
    )
}


@dataclass(frozen=True)
class Corpus:
    family: Family
    member: str

    @property
    def key(self) -> str:
        return f"{self.family.name}/{self.member}"

    @property
    def source(self) -> Path:
        return OUTPUTS / self.family.folder / f"{self.member}{self.family.suffix}"

    @property
    def snapshot(self) -> Path:
        return VERDICTS / self.family.name / f"{self.member}.jsonl"

    def __str__(self) -> str:
        return self.key


CORPORA = {c.key: c for f in FAMILIES.values() for c in (Corpus(f, m) for m in f.members)}


@dataclass(frozen=True)
class Verdict:
    """One item as the gate holds it: what `qualeval score` decided, and the output it decided on."""

    id: str
    correct: bool
    extracted: str | None
    status: str
    text: str

    def held(self) -> tuple[str, bool, str | None, str]:
        """What the snapshot keeps (never the output itself)."""
        return self.id, self.correct, self.extracted, self.status


def rows(corpus: Corpus) -> list[dict[str, Any]]:
    """The corpus's published rows; skips (a failure under CI) when ../shared does not hold them."""
    if not corpus.source.exists():
        pytest.skip(f"{corpus.source} missing: the real-output gate reads ../shared/data/model_outputs")
    raw = corpus.source.read_text(encoding="utf-8")
    if corpus.family.suffix == ".json":
        return list(json.loads(raw)["outputs"])
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


@functools.cache
def scored(key: str) -> tuple[Verdict, ...]:
    """Every item of the corpus through `qualeval score`'s code path, once per process."""
    corpus = CORPORA[key]
    family, published = corpus.family, rows(corpus)
    lines = [family.line(index, row) for index, row in enumerate(published)]
    with tempfile.TemporaryDirectory() as folder:
        responses = Path(folder) / "responses.jsonl"
        responses.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        items, _ = score_file(family.task(corpus.member), responses, data=family.data(corpus.source))
    assert len(items) == len(published), f"{key}: {len(items)} items scored from {len(published)} rows"
    return tuple(
        Verdict(item.id, item.correct, item.extracted, item.status, row[family.text])
        for item, row in zip(items, published, strict=True)
    )
