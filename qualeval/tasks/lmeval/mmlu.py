"""lm-eval's MMLU tasks read from the original MMLU release, the CSV folder the built-in `mmlu` task reads.

lm-eval's MMLU files load the hub's `cais/mmlu`, whose documents are `question`, `subject`, `choices` (four) and
`answer` (an index); the original release holds the same rows as `test/<subject>_test.csv` (`dev/`, `val/`), with
no header row: the question, the four options, the answer letter. The subject is the task's `dataset_name`
(`mmlu_anatomy` and `mmlu_flan_cot_fewshot_anatomy` both read `anatomy`). A row becomes the hub's document here,
so lm-eval's own templates render it; a document that already has the hub's shape (a JSONL export) is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qualeval.errors import InputError

__all__ = ["MMLU_NOTE", "mmlu_local"]

_HUB = frozenset({"cais/mmlu", "hails/mmlu_no_train"})
_OPTIONS = ("A", "B", "C", "D")
_COLUMNS = ("question", *_OPTIONS, "answer")
_SPLITS = {"test": "test", "dev": "dev", "validation": "val"}
"""The hub's split -> the release's folder (and file suffix)."""
MMLU_NOTE = (
    "A --data folder is read as the original MMLU release (test/<subject>_test.csv, dev/<subject>_dev.csv, "
    "val/<subject>_val.csv), its rows given the hub's shape."
)

Docs = list[dict[str, Any]]


def _hub_shape(subject: str, where: str) -> Callable[[Docs], Docs]:
    def convert(docs: Docs) -> Docs:
        out = []
        for index, doc in enumerate(docs):
            if "choices" in doc or not all(key in doc for key in _COLUMNS):
                out.append(doc)
                continue
            letter = str(doc["answer"]).strip().upper()
            if letter not in _OPTIONS:
                raise InputError(f"{where}: MMLU row {index} of {subject}: answer '{doc['answer']}' is not A-D")
            choices = [doc[key] for key in _OPTIONS]
            out.append(
                {"question": doc["question"], "subject": subject, "choices": choices, "answer": _OPTIONS.index(letter)}
            )
        return out

    return convert


def mmlu_local(cfg: dict[str, Any], where: str) -> tuple[dict[str, Any], Callable[[Docs], Docs]] | None:
    """For a task on the hub's MMLU: the spec keys that name the release's files of its subject, and the
    conversion of their rows; None for any other task."""
    subject = cfg.get("dataset_name")
    if cfg.get("dataset_path") not in _HUB or not isinstance(subject, str) or not subject:
        return None
    files = {split: f"{folder}/{subject}_{folder}.csv" for split, folder in _SPLITS.items()}
    return {"data_files": files, "columns": list(_COLUMNS)}, _hub_shape(subject, where)
