"""Score responses produced elsewhere, with no endpoint: `qualeval score`.

Input, one JSON object per line:
  qualeval  {"id", "content", "reasoning"?, "finish_reason"?, "target"?, "choices"?}
            `id` is a sample id of the task (`gsm8k/test/0`, or just the last part, `0`); `target`, when
            given, overrides the gold and no dataset is needed (a choice task then needs `choices` on the line,
            or --data to read them from).
  lm-eval   lm-eval's samples_*.jsonl logs: `doc_id`, `doc`, `target`, `resps` (the raw model output).
Reasoning inside the content (`<think>`...) is split off first, exactly as for a live response: the same
formats, thinking switch and template-opened block. The verdict comes from the same judge as a live run's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from qualeval.accuracy import summarize
from qualeval.errors import InputError, validation_problem
from qualeval.formats import ReasoningFormat, resolve_formats
from qualeval.grader import grader_for
from qualeval.judge import Verdict, judge, wants_grade
from qualeval.models import Completion, Sample
from qualeval.records import ConstraintRecord, Grade, Outcome, Record, ScoredItem, TaskSummary, Timing, Usage
from qualeval.split import split_completion
from qualeval.tasks import Task, build_samples
from qualeval.tasks.samples import sample_from_doc
from qualeval.tasks.sources import jsonl_objects

__all__ = ["Scored", "SplitOptions", "score_file"]

Format = Literal["qualeval", "lm-eval"]


class _Line(BaseModel):
    id: str | int
    content: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    target: str | int | float | bool | None = None
    choices: list[str] | None = None


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


def _target_sample(task: Task, key: str, target: Any, choices: list[str] | None) -> Sample:
    gold = ("yes" if target else "no") if isinstance(target, bool) else str(target).strip()
    return Sample(id=key, task=task.name, messages=(), gold=gold, choices=tuple(choices or ()))


@dataclass(frozen=True, slots=True)
class SplitOptions:
    """How to split reasoning from the answer offline, as a live run would: `--thinking/--no-thinking`,
    `--thinking-opened`, `--reasoning-format FILE`."""

    formats: tuple[ReasoningFormat, ...] = ()
    """Inline formats; empty means every built-in one."""
    thinking: bool | None = None
    opened: bool = False


@dataclass(slots=True)
class Scored:
    """One line, judged: what `qualeval score` writes and reports."""

    item: ScoredItem
    sample: Sample
    done: Completion
    verdict: Verdict

    def record(self, task: str) -> Record:
        """The line as a run record, for the per-item browser of report.html: no request was sent, so there is
        no body, timing or usage, and no HTTP attempt."""
        return Record(
            sample_id=self.item.id,
            task=task,
            request={},
            reasoning=self.done.reasoning,
            content=self.done.content,
            reasoning_source=self.done.reasoning_source,
            status=self.done.status,
            finish_reason=None,
            usage=Usage(),
            timing=Timing(),
            attempts=0,
            constraint=ConstraintRecord(mode="off"),
            extraction=self.verdict.extraction,
            score=self.verdict.score,
            gold=self.sample.gold,
            meta=self.sample.meta,
        )


def _sample_of(task: Task, line: _Line, doc: dict[str, Any] | None, index: _Index, where: str) -> Sample:
    key = str(line.id)
    if doc is not None:
        sample = sample_from_doc(task, doc, key)
    elif line.target is None:
        sample = index.find(key, where)
    else:
        sample = _target_sample(task, key, line.target, line.choices)
        if task.spec.answer.type == "choice" and not sample.choices and index.data is not None:
            found = index.find(key, where)  # the line gives the gold; the data gives the options
            sample = sample.model_copy(update={"choices": found.choices, "meta": found.meta})
    if task.spec.answer.type == "choice" and not sample.choices:
        raise InputError(
            f"{where}: task {task.name} is multiple choice but item '{key}' has no choices: give \"choices\" on "
            "the line, or --data so they are read from the dataset"
        )
    return sample


def _completion(line: _Line, split: SplitOptions) -> Completion:
    field = ("reasoning", line.reasoning) if line.reasoning else None
    return split_completion(
        content=line.content,
        field=field,
        finish_reason=line.finish_reason,
        formats=split.formats or resolve_formats(None),
        thinking=split.thinking,
        opened=split.opened,
    ).completion


def _parse(obj: dict[str, Any], fmt: Format, where: str) -> tuple[_Line, dict[str, Any] | None]:
    if fmt == "lm-eval":
        return _from_lm_eval(obj, where)
    try:
        return _Line.model_validate(obj), None
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{where}: field '{problem.field or '(line)'}': {problem.message}") from None


def _item(sample: Sample, done: Completion, verdict: Verdict, grade: Grade | None = None) -> ScoredItem:
    return ScoredItem(
        id=sample.id,
        status=done.status,
        extracted=verdict.extraction.value,
        method=verdict.extraction.rung,
        correct=verdict.score.correct,
        gold=sample.gold,
        naive_correct=verdict.naive_correct,
        rescue=verdict.rescue.value if verdict.rescue else None,
        f1=verdict.score.f1,
        grade=grade,
    )


def judge_lines(
    task: Task,
    path: Path,
    *,
    data: Path | None = None,
    fmt: Format = "qualeval",
    rescue: bool = False,
    split: SplitOptions | None = None,
    allow_code: bool = False,
) -> list[Scored]:
    """Judge every response line against the task; one result per line, in file order.

    `allow_code`: the user's --allow-code-execution, without which a code task's line is refused.
    """
    split = split or SplitOptions()
    index = _Index(task, data)
    seen: dict[str, int] = {}
    out: list[Scored] = []
    for number, obj in _lines(path):
        where = f"{path}:{number}"
        line, doc = _parse(obj, fmt, where)
        sample = _sample_of(task, line, doc, index, where)
        if sample.id in seen:
            raise InputError(f"{where}: id '{line.id}' appears twice (first on line {seen[sample.id]})")
        seen[sample.id] = number
        done = _completion(line, split)
        verdict = judge(task, sample, done, rescue=rescue, allow_code=allow_code)
        out.append(Scored(_item(sample, done, verdict), sample, done, verdict))
    return out


async def _grade_all(
    task: Task, scored: list[Scored], base_url: str, model: str, rescue: bool, allow_code: bool
) -> None:
    async with grader_for(base_url, model) as grader:
        assert grader is not None
        wanted = [s for s in scored if wants_grade(task, s.done, s.verdict)]
        grades = await asyncio.gather(*(grader.grade(s.sample, s.done.content) for s in wanted))
    for entry, grade in zip(wanted, grades, strict=True):
        entry.verdict = judge(task, entry.sample, entry.done, rescue=rescue, grade=grade, allow_code=allow_code)
        entry.item = _item(entry.sample, entry.done, entry.verdict, grade)


def _outcome(entry: Scored) -> Outcome:
    verdict = entry.verdict
    return Outcome(
        status=entry.done.status,
        correct=verdict.score.correct,
        rung=verdict.extraction.rung,
        meta=entry.sample.meta,
        naive_correct=verdict.naive_correct,
        rescued=verdict.rescue is not None and verdict.rescue.value is not None,
        rescue_correct=bool(verdict.rescue_correct),
        measures=verdict.score.measures,
    )


def score_file(task: Task, path: Path, **options: Any) -> tuple[list[ScoredItem], TaskSummary]:
    """Judge every line; the options are score_lines'."""
    items, summary, _ = score_lines(task, path, **options)
    return items, summary


def score_lines(
    task: Task,
    path: Path,
    *,
    data: Path | None = None,
    fmt: Format = "qualeval",
    rescue: bool = False,
    split: SplitOptions | None = None,
    judge_base_url: str | None = None,
    judge_model: str | None = None,
    allow_code: bool = False,
) -> tuple[list[ScoredItem], TaskSummary, list[Scored]]:
    """score_file, also returning each line's full judgement (for reports)."""
    scored = judge_lines(task, path, data=data, fmt=fmt, rescue=rescue, split=split, allow_code=allow_code)
    if judge_base_url and judge_model:
        asyncio.run(_grade_all(task, scored, judge_base_url, judge_model, rescue, allow_code))
    summary = summarize(task.name, (_outcome(s) for s in scored), task.spec.breakdowns)
    return [s.item for s in scored], summary, scored


def write_offline(
    out: Path, task: Task, responses: Path, items: list[ScoredItem], summary: TaskSummary, scored: list[Scored]
) -> None:
    """items.jsonl and summary.json, then report.md and report.html (a report that fails is a warning). No
    request was sent, so the reports say once that timing is not known and leave the speed sections out."""
    from qualeval._version import __version__
    from qualeval.records import RunSummary, TaskReport
    from qualeval.report import write_reports_or_warn
    from qualeval.speed import linked, speed
    from qualeval.store import RunStore

    out.mkdir(parents=True, exist_ok=True)
    with (out / "items.jsonl").open("wb") as handle:
        for item in items:
            handle.write(item.model_dump_json().encode() + b"\n")
    (out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    report = TaskReport(summary=summary, speed=speed([]), linked=linked([], None))
    run = RunSummary(
        model=f"offline: {responses.name}",
        base_url=str(responses),
        simulated=False,
        qualeval_version=__version__,
        records=len(items),
        tasks={task.name: report},
    )
    write_reports_or_warn(RunStore(out), run, (entry.record(task.name) for entry in scored), offline=True)
