"""Score responses produced elsewhere, with no endpoint: `qualeval score`.

Input, one JSON object per line:
  qualeval  {"id", "content", "reasoning"?, "finish_reason"?, "target"?}
            `id` is a sample id of the task (`gsm8k/test/0`, or just the last part, `0`); `target`, when
            given, overrides the gold and no dataset is needed.
  lm-eval   lm-eval's samples_*.jsonl logs: `doc_id`, `doc`, `target`, `resps` (the raw model output).
Reasoning inside the content (`<think>`...) is split off first, as for a live response.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from qualeval.errors import InputError, validation_problem
from qualeval.formats import resolve_formats
from qualeval.models import Sample
from qualeval.runner import judge
from qualeval.split import split_completion
from qualeval.summary import Outcome, TaskSummary, summarize
from qualeval.tasks import Task, build_samples
from qualeval.tasks.samples import sample_from_doc
from qualeval.tasks.sources import jsonl_objects

__all__ = ["ScoredItem", "score_file"]

Format = Literal["qualeval", "lm-eval"]


class _Line(BaseModel):
    id: str | int
    content: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    target: str | int | float | bool | None = None


class ScoredItem(BaseModel):
    id: str
    status: str
    extracted: str | None
    method: str
    """The extraction rung that produced the answer."""
    correct: bool
    gold: str
    naive_correct: bool | None = None
    rescue: str | None = None


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read responses ({exc.strerror})") from None
    count = 0
    for number, obj in jsonl_objects(raw, path):
        count += 1
        yield number, obj
    if count == 0:
        raise InputError(f"{path}: no responses in the file")


def _from_lm_eval(obj: dict[str, Any], where: str) -> tuple[_Line, dict[str, Any] | None]:
    if "doc_id" not in obj or "resps" not in obj:
        raise InputError(f"{where}: not an lm-eval sample log line (needs 'doc_id' and 'resps')")
    resps = obj["resps"]
    while isinstance(resps, list) and resps:
        resps = resps[0]
    content = resps if isinstance(resps, str) else None
    doc = obj.get("doc") if isinstance(obj.get("doc"), dict) else None
    target = obj.get("target")
    return _Line(id=obj["doc_id"], content=content, target=None if doc else target), doc


class _Index:
    """Sample lookup by full id or by its last part, built only when some line needs the dataset."""

    def __init__(self, task: Task, data: Path | None) -> None:
        self.task, self.data = task, data
        self._by_id: dict[str, Sample] | None = None
        self._short: dict[str, Sample | None] = {}

    def find(self, key: str, where: str) -> Sample:
        if self._by_id is None:
            samples = build_samples(self.task, data=self.data)
            self._by_id = {s.id: s for s in samples}
            for s in samples:
                short = s.id.rsplit("/", 1)[-1]
                self._short[short] = None if short in self._short else s  # None marks an ambiguous short id
        hit = self._by_id.get(key) or self._short.get(key)
        if hit is None:
            example = next(iter(self._by_id), "?")
            raise InputError(
                f"{where}: id '{key}' is not a sample of task {self.task.name} (ids look like '{example}')"
            )
        return hit


def _target_sample(task: Task, key: str, target: Any) -> Sample:
    gold = ("yes" if target else "no") if isinstance(target, bool) else str(target).strip()
    return Sample(id=key, task=task.name, messages=(), gold=gold)


def score_file(
    task: Task, path: Path, *, data: Path | None = None, fmt: Format = "qualeval", rescue: bool = False
) -> tuple[list[ScoredItem], TaskSummary]:
    """Judge every response line against the task; one item per line, in file order."""
    formats = resolve_formats(None)
    index = _Index(task, data)
    seen: dict[str, int] = {}
    items: list[ScoredItem] = []
    outcomes: list[Outcome] = []
    for number, obj in _lines(path):
        where = f"{path}:{number}"
        doc = None
        if fmt == "lm-eval":
            line, doc = _from_lm_eval(obj, where)
        else:
            try:
                line = _Line.model_validate(obj)
            except ValidationError as exc:
                problem = validation_problem(exc)
                raise InputError(f"{where}: field '{problem.field or '(line)'}': {problem.message}") from None
        key = str(line.id)
        if doc is not None:
            sample = sample_from_doc(task, doc, key)
        elif line.target is not None:
            sample = _target_sample(task, key, line.target)
        else:
            sample = index.find(key, where)
        if sample.id in seen:
            raise InputError(f"{where}: id '{key}' appears twice (first on line {seen[sample.id]})")
        seen[sample.id] = number
        field = ("reasoning", line.reasoning) if line.reasoning else None
        done = split_completion(
            content=line.content, field=field, finish_reason=line.finish_reason or "stop", formats=formats
        ).completion
        verdict = judge(task, sample, done, rescue=rescue)
        items.append(
            ScoredItem(
                id=sample.id,
                status=done.status,
                extracted=verdict.extraction.value,
                method=verdict.extraction.rung,
                correct=verdict.score.correct,
                gold=sample.gold,
                naive_correct=verdict.naive_correct,
                rescue=verdict.rescue.value if verdict.rescue else None,
            )
        )
        outcomes.append(
            Outcome(
                status=done.status,
                correct=verdict.score.correct,
                rung=verdict.extraction.rung,
                meta=sample.meta,
                naive_correct=verdict.naive_correct,
                rescued=verdict.rescue is not None and verdict.rescue.value is not None,
                rescue_correct=bool(verdict.rescue_correct),
            )
        )
    return items, summarize(task.name, outcomes, task.spec.breakdowns)
