"""Score responses produced elsewhere, with no endpoint: `qualeval score`.

Input, one JSON object per line:
  qualeval  {"id", "content", "reasoning"?, "finish_reason"?, "target"?, "choices"?}
            `id` is a sample id of the task (`gsm8k/test/0`, or just the last part, `0`, or an id ending in that
            number, `gsm8k-main-test-#0`); `target`, when given, overrides the gold and no dataset is needed (a
            choice task then needs `choices` on the line, or --data to read them from). Files from elsewhere name
            the text and the id otherwise (ZeroEval: `output`): the first of TEXT_FIELDS and ID_FIELDS that the
            first line has is read from every line, and a line without it is an error, never an empty answer.
  lm-eval   lm-eval's samples_*.jsonl logs: `doc_id`, `doc`, `target`, `resps` (the raw model output).
Reasoning inside the content (`<think>`...) is split off first, exactly as for a live response: the same
formats, thinking switch and template-opened block. The verdict comes from the same judge as a live run's.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from qualeval.errors import InputError, validation_problem
from qualeval.reasoning.completion import Completion
from qualeval.reasoning.formats import ReasoningFormat, resolve_formats
from qualeval.reasoning.split import split_completion
from qualeval.records import ConstraintRecord, Grade, OfflineItem, Outcome, Record, SentBody, TaskSummary, Timing, Usage
from qualeval.report.accuracy import summarize
from qualeval.scoring.modeljudge import model_judge_for
from qualeval.scoring.verdict import Verdict, decide, wants_model_judge
from qualeval.tasks import Task, build_samples
from qualeval.tasks.samples import sample_from_doc
from qualeval.tasks.sources import jsonl_objects
from qualeval.wire.models import Sample

__all__ = ["JudgedLine", "SplitOptions", "score_file"]

Format = Literal["qualeval", "lm-eval"]

TEXT_FIELDS = ("content", "output", "response", "completion", "generated_text", "generation", "text")
"""Where a line may hold the model's text, in the order looked for: qualeval's own name, ZeroEval's `output`, the
common `response` and `completion`, Hugging Face's `generated_text`, then the vaguer names. `answer` is not one:
ZeroEval and others use it for the gold."""
ID_FIELDS = ("id", "sample_id", "doc_id", "idx", "question_id", "task_id", "key")
"""Where a line may hold its item's id: qualeval's, then lm-eval's, MMLU-Pro's, HumanEval's, IFEval's names."""
_QUESTION_FIELDS = ("question", "problem")


class _Line(BaseModel):
    id: str | int
    content: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    target: str | int | float | bool | None = None
    choices: list[str] | None = None
    question: str | None = None
    """The question as the line gives it: checked against the sample an id was matched to by its number."""


@dataclass(frozen=True, slots=True)
class Fields:
    """The keys of a file's lines that hold the id and the response text."""

    id: str
    text: str


def _fields_of(obj: dict[str, Any], fmt: Format, where: str) -> Fields:
    """The first of the known names the first line has; none of them is an error naming what the line holds."""
    if fmt == "lm-eval":
        return Fields("doc_id", "resps")
    has = ", ".join(sorted(obj)) or "nothing"
    found = []
    for names, what in ((ID_FIELDS, "id"), (TEXT_FIELDS, "response text")):
        name = next((n for n in names if n in obj), None)
        if name is None:
            raise InputError(f"{where}: no {what} on the line: none of {', '.join(names)} (the line has {has})")
        found.append(name)
    return Fields(*found)


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
        self.by_number: tuple[str, str] | None = None
        """The first id matched to a sample by its number, and that sample's id: said in the note."""

    def find(self, key: str, where: str, question: str | None = None) -> Sample:
        if self._by_id is None:
            samples = build_samples(self.task, data=self.data)
            self._by_id = {s.id: s for s in samples}
            for s in samples:
                short = s.id.rsplit("/", 1)[-1]
                self._short[short] = None if short in self._short else s  # None marks an ambiguous short id
        hit = self._by_id.get(key) or self._short.get(key)
        if hit is None:
            hit = self._by_number(key, where, question)
        if hit is None:
            example = next(iter(self._by_id), "?")
            raise InputError(
                f"{where}: id '{key}' is not a sample of task {self.task.name} (ids look like '{example}')"
            )
        return hit

    def _by_number(self, key: str, where: str, question: str | None) -> Sample | None:
        """An id of another tool's making that ends in the sample's number (ZeroEval's `gsm8k-main-test-#0`,
        HumanEval's `HumanEval/0`): a guess, so a question on the line must be the sample's."""
        number = re.search(r"(\d+)$", key)
        hit = self._short.get(str(int(number.group(1)))) if number else None
        if hit is None:
            return None
        if question is not None and _words(question) not in _words(hit.messages[-1].content if hit.messages else ""):
            raise InputError(
                f"{where}: id '{key}' ends in the number of sample {hit.id}, but the line's question is not that "
                f"sample's: give the task's own ids ('{hit.id}')"
            )
        self.by_number = self.by_number or (key, hit.id)
        return hit


def _words(text: str) -> str:
    return " ".join(text.split())


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
class JudgedLine:
    """One line, judged: what `qualeval score` writes and reports."""

    item: OfflineItem
    sample: Sample
    done: Completion
    verdict: Verdict

    def record(self, task: str) -> Record:
        """The line as a run record, for the per-item browser of report.html: no request was sent, so there is
        no body, timing or usage, and no HTTP attempt."""
        return Record(
            sample_id=self.item.id,
            task=task,
            request=SentBody(),
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
            scored=self.sample.scored,
            shape=self.sample.shape,
        )


def _sample_of(task: Task, line: _Line, doc: dict[str, Any] | None, index: _Index, where: str) -> Sample:
    key = str(line.id)
    if doc is not None:
        sample = sample_from_doc(task, doc, key)
    elif line.target is None:
        sample = index.find(key, where, line.question)
    else:
        sample = _target_sample(task, key, line.target, line.choices)
        if task.spec.answer.type == "choice" and not sample.choices and index.data is not None:
            found = index.find(key, where, line.question)  # the line gives the gold; the data gives the options
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


def _parse(obj: dict[str, Any], fmt: Format, fields: Fields, where: str) -> tuple[_Line, dict[str, Any] | None]:
    if fmt == "lm-eval":
        return _from_lm_eval(obj, where)
    for name, what in ((fields.id, "id"), (fields.text, "response text")):
        if name not in obj:  # a line without the text is not an empty answer: it would be scored wrong unseen
            empty = f'; a response with no text is "{name}": null' if what != "id" else ""
            raise InputError(f"{where}: no '{name}' field (the file's {what}, as on its first line){empty}")
    question = next((obj[n] for n in _QUESTION_FIELDS if isinstance(obj.get(n), str)), None)
    values = {**obj, "id": obj[fields.id], "content": obj[fields.text], "question": question}
    try:
        return _Line.model_validate(values), None
    except ValidationError as exc:
        problem = validation_problem(exc)
        field = {"id": fields.id, "content": fields.text}.get(problem.field, problem.field)
        raise InputError(f"{where}: field '{field or '(line)'}': {problem.message}") from None


def _item(sample: Sample, done: Completion, verdict: Verdict, grade: Grade | None = None) -> OfflineItem:
    return OfflineItem(
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


def decide_lines(
    task: Task,
    path: Path,
    *,
    data: Path | None = None,
    fmt: Format = "qualeval",
    rescue: bool = False,
    split: SplitOptions | None = None,
    allow_code: bool = False,
    note: Callable[[str], None] | None = None,
) -> list[JudgedLine]:
    """Judge every response line against the task; one result per line, in file order.

    `allow_code`: the user's --allow-code-execution, without which a code task's line is refused. `note` is told
    which fields were read, and how ids were matched when it was by their number.
    """
    split = split or SplitOptions()
    index = _Index(task, data)
    seen: dict[str, int] = {}
    out: list[JudgedLine] = []
    fields: Fields | None = None
    for number, obj in _lines(path):
        where = f"{path}:{number}"
        fields = fields or _fields_of(obj, fmt, where)
        line, doc = _parse(obj, fmt, fields, where)
        sample = _sample_of(task, line, doc, index, where)
        if sample.id in seen:
            raise InputError(f"{where}: id '{line.id}' appears twice (first on line {seen[sample.id]})")
        seen[sample.id] = number
        done = _completion(line, split)
        verdict = decide(task, sample, done, rescue=rescue, allow_code=allow_code)
        done = done.model_copy(update={"status": verdict.status or done.status})  # an echo of its prompt
        out.append(JudgedLine(_item(sample, done, verdict), sample, done, verdict))
    if note is not None and fields is not None:
        note(_fields_note(path, fields, index.by_number))
    return out


def _fields_note(path: Path, fields: Fields, by_number: tuple[str, str] | None) -> str:
    text = f"{path.name}: read the response text from '{fields.text}' and the ids from '{fields.id}'"
    if by_number:
        text += f"; ids matched to samples by their number ('{by_number[0]}' is {by_number[1]})"
    return text


async def _grade_all(
    task: Task, scored: list[JudgedLine], base_url: str, model: str, rescue: bool, allow_code: bool
) -> None:
    async with model_judge_for(base_url, model) as model_judge:
        assert model_judge is not None
        wanted = [s for s in scored if wants_model_judge(task, s.done, s.verdict)]
        grades = await asyncio.gather(*(model_judge.grade(s.sample, s.done.content) for s in wanted))
    for entry, grade in zip(wanted, grades, strict=True):
        entry.verdict = decide(task, entry.sample, entry.done, rescue=rescue, grade=grade, allow_code=allow_code)
        entry.item = _item(entry.sample, entry.done, entry.verdict, grade)


def _outcome(entry: JudgedLine) -> Outcome:
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


def score_file(task: Task, path: Path, **options: Any) -> tuple[list[OfflineItem], TaskSummary]:
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
    note: Callable[[str], None] | None = None,
) -> tuple[list[OfflineItem], TaskSummary, list[JudgedLine]]:
    """score_file, also returning each line's full judgement (for reports)."""
    scored = decide_lines(task, path, data=data, fmt=fmt, rescue=rescue, split=split, allow_code=allow_code, note=note)
    if judge_base_url and judge_model:
        asyncio.run(_grade_all(task, scored, judge_base_url, judge_model, rescue, allow_code))
    summary = summarize(task.name, (_outcome(s) for s in scored), task.spec.breakdowns)
    return [s.item for s in scored], summary, scored


def write_offline(
    out: Path, task: Task, responses: Path, items: list[OfflineItem], summary: TaskSummary, scored: list[JudgedLine]
) -> None:
    """items.jsonl and summary.json (a RunSummary, as a run writes, with this one task), then report.md and
    report.html (a report that fails is a warning). No request was sent, so the reports say once that timing is
    not known and leave the speed sections out."""
    from qualeval._version import __version__
    from qualeval.records import RunSummary, TaskReport
    from qualeval.records.store import RunStore
    from qualeval.report.html import write_reports_or_warn
    from qualeval.report.speed import linked, speed

    store = RunStore(out)  # every file through the store, each moved into place whole
    store.write_lines("items.jsonl", (item.model_dump_json().encode() for item in items))
    report = TaskReport(summary=summary, speed=speed([]), linked=linked([], None))
    run = RunSummary(
        model=f"offline: {responses.name}",
        base_url=str(responses),
        simulated=False,
        qualeval_version=__version__,
        records=len(items),
        tasks={task.name: report},
    )
    store.write_json("summary.json", run.model_dump(mode="json"))
    write_reports_or_warn(store, run, (entry.record(task.name) for entry in scored), offline=True)
