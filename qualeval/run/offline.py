"""Score responses produced elsewhere, with no endpoint: `qualeval score`.

The file is read by qualeval.run.offline_read (qualeval's own JSONL, CSV, lm-eval's samples logs, OpenAI Batch
output); each line's id finds its sample through qualeval.run.offline_ids. Reasoning inside the content
(`<think>`...) is split off first, exactly as for a live response: the same formats, thinking switch and
template-opened block. The verdict comes from the same judge as a live run's; a line the endpoint failed (a Batch
line's error) is counted apart, as a live run's endpoint error is, never as a wrong answer.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from qualeval.errors import InputError
from qualeval.figures import summarize
from qualeval.reasoning import Completion, ReasoningFormat, resolve_formats, split_completion, split_inline
from qualeval.records import (
    ConstraintRecord,
    Grade,
    OfflineItem,
    Outcome,
    Record,
    SentBody,
    TaskSummary,
    Timing,
    Usage,
)
from qualeval.run.checks import check_not_episodes
from qualeval.run.offline_formats import Parsed, lm_eval_task_of
from qualeval.run.offline_gold import check_gold, line_choices, offered, read_target, target_kinds, target_sample
from qualeval.run.offline_ids import Index, load_id_map
from qualeval.run.offline_read import ReadOptions, read_responses
from qualeval.scoring import Verdict, check_scorers, decide, model_judge_for, wants_model_judge
from qualeval.tasks import Kinds, Sample, Task, load_task, sample_from_doc
from qualeval.wire import Message

__all__ = ["JudgedLine", "ReadOptions", "SplitOptions", "check_out", "score_file"]


@dataclass(frozen=True, slots=True)
class SplitOptions:
    """How to split reasoning from the answer offline, as a live run would: `--thinking/--no-thinking`,
    `--thinking-opened`, `--reasoning-format FILE`."""

    formats: tuple[ReasoningFormat, ...] = ()
    """Inline formats; empty means every built-in one."""
    thinking: bool | None = None
    opened: bool | None = None
    """True or False as the user said (--thinking-opened, --no-thinking-opened); None: inferred from the file's
    lines (offline._opened_by_template)."""


@dataclass(slots=True)
class JudgedLine:
    """One line, judged: what `qualeval score` writes and reports."""

    item: OfflineItem
    sample: Sample
    done: Completion
    verdict: Verdict
    error: str | None = None
    """The endpoint's reason, when the request failed (no answer: counted apart, never scored)."""

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
            error=self.error,
            tools=self.verdict.tools,
        )


def _sample_of(
    task: Task, parsed: Parsed, index: Index, others: Callable[[], Kinds], docs: list[dict[str, Any]]
) -> Sample:
    line, where = parsed.line, parsed.where
    key = str(line.id)
    if parsed.doc is not None:
        subsets = task.subsets()  # one subset (mmlu:anatomy): rendered, and named, as a live run does
        one = subsets[0] if len(subsets) == 1 else None
        sample = sample_from_doc(task, parsed.doc, key, subset=one, docs=docs)
        if index.at_hand:
            index.check_document(key, where, sample)
    elif line.target is None:
        sample = index.find(key, where, line.question, parsed.numbered)
    else:
        sample = target_sample(task, index.mapped(key, where), line.target, line_choices(task, parsed))
        if index.at_hand:
            sample = _with_data(task, sample, index, parsed)
        sample = read_target(task, sample, parsed, others)
    if parsed.prompt is not None:  # what was sent, not qualeval's rendering of the doc: what an echo repeats
        sample = sample.model_copy(update={"messages": (Message(role="user", content=parsed.prompt),)})
    if task.spec.answer.type == "choice" and not sample.choices:
        raise InputError(
            f"{where}: task {task.name} is multiple choice but item '{key}' has no choices: give \"choices\" on "
            "the line, or --data so they are read from the dataset"
        )
    check_gold(task, sample, parsed)
    return sample


def _with_data(task: Task, sample: Sample, index: Index, parsed: Parsed) -> Sample:
    """A line with its own target, when the dataset is at hand: the sample its id names gives the prompt (so an
    echo of it is masked, as in a live run), its values (what breakdowns group by) and, when the line has none,
    the options; the gold stays the line's. A line whose id names no sample keeps its target alone, unless the
    task needs options only --data has, or --id-map named that sample."""
    line = parsed.line
    needs_options = task.spec.answer.type == "choice" and not sample.choices
    try:
        found = index.find(str(line.id), parsed.where, line.question, parsed.numbered)
    except InputError:
        if (needs_options and index.data is not None) or index.id_map is not None:  # what was to name the sample
            raise
        return sample
    update: dict[str, Any] = {"messages": found.messages, "meta": found.meta}
    if index.id_map is not None:  # the map names the sample: its id, as for a line without a target
        update["id"] = found.id
    if needs_options:
        update["choices"] = found.choices
    return sample.model_copy(update=update)


def _check_log_name(task: Task, path: Path, parsed: list[Parsed], index: Index) -> None:
    """An lm-eval log whose file name names another task is refused when its documents cannot be checked
    against the task's own (no dataset at hand offline): each document would be scored under this task's ids."""
    named = lm_eval_task_of(path) if parsed[0].numbered else None
    if named is None or named == task.spec.name or index.at_hand:
        return
    raise InputError(
        f"{path}: the file's name says it is lm-eval's log of task {named}, not {task.spec.name}: score it with "
        f"--task lm_eval:{named}, or give --data so each document is checked against the task's"
    )


def _completion(parsed: Parsed, split: SplitOptions) -> Completion:
    line = parsed.line
    field = (line.reasoning_field, line.reasoning) if line.reasoning else None
    return split_completion(
        content=line.content,
        field=field,
        finish_reason=line.finish_reason,
        formats=split.formats or resolve_formats(None),
        thinking=split.thinking,
        opened=bool(split.opened),
        error=line.error,
        calls=bool(line.came_back().calls),  # a call is an answer, as on the live path (qualeval.wire.response)
    ).completion


_WHAT_SHOWS = {
    "inline:close-only": "only a closing marker",
    "inline:paired": "an opening and a closing marker",
    "inline:unclosed": "an opening marker that never closed",
}


def _opened_by_template(parsed: list[Parsed], split: SplitOptions) -> tuple[bool, str | None]:
    """Whether the chat template opened every line's thinking block (Qwen3.5, QwQ, DeepSeek-R1-0528: most lines
    `…</think>answer`), where the user did not say, and a sentence naming the lines the answer rests on.

    Each line's own markers split it whatever the answer: a close-only line at its close, a pair as a pair. The
    answer decides only the lines with no marker. Read as opened, they are thinking that never closed, so a line
    cut off there is reasoning cut off, never an answer read out of the thinking; read as not, they are plain
    answers. Opened needs most of the lines that can tell to show only a closing marker: a line cut off at the
    budget with no marker cannot tell (thinking cut short and an answer cut short look alike), and a stray tag
    on a few lines must not turn a file of plain answers into cut-off thinking."""
    if split.opened is not None:
        return split.opened, None
    if split.thinking is False:
        return False, None
    formats = split.formats or resolve_formats(None)
    shows: Counter[str] = Counter()
    cut = 0
    for entry in parsed:
        line = entry.line
        if line.reasoning or not line.content or line.error is not None:
            continue  # a reasoning field, or no text: nothing to split inline
        source = split_inline(line.content, formats).source
        if source == "none" and line.finish_reason == "length":
            cut += 1
        else:
            shows[source] += 1
    told = sum(shows.values())
    tagged = told - shows["none"]
    close = shows["inline:close-only"]
    apart = f" ({cut} more, cut off with no marker, cannot tell)" if cut else ""
    if close * 2 > told:
        return True, (
            f"{close} of {told} lines show only a closing thinking marker{apart}: the chat template opened the "
            f"block, so every line is read as --thinking-opened and a line with no marker is thinking that never "
            f"closed, with no answer (--no-thinking-opened reads such lines as answers)"
        )
    if not tagged:
        return False, None
    kinds = ", ".join(f"{n} {_WHAT_SHOWS.get(s, s)}" for s, n in sorted(shows.items()) if s != "none")
    return False, (
        f"{tagged} of {told + cut} lines show thinking markers ({kinds}), each split at its own; the lines with "
        f"no marker are plain answers (--thinking-opened if the chat template opened the block)"
    )


def _item(
    sample: Sample, done: Completion, verdict: Verdict, grade: Grade | None = None, error: str | None = None
) -> OfflineItem:
    return OfflineItem(
        id=sample.id,
        status=done.status,
        extracted=verdict.extraction.value,
        method=verdict.extraction.rung,
        correct=None if error is not None else verdict.score.correct,
        gold=sample.gold,
        naive_correct=verdict.naive_correct,
        rescue=verdict.rescue.value if verdict.rescue else None,
        f1=verdict.score.f1,
        grade=grade,
        error=error,
    )


def decide_lines(
    task: Task,
    path: Path,
    *,
    data: Path | None = None,
    read: ReadOptions | None = None,
    rescue: bool = False,
    split: SplitOptions | None = None,
    allow_code: bool = False,
    note: Callable[[str], None] | None = None,
) -> list[JudgedLine]:
    """Judge every response line against the task; one result per line, in file order.

    `read`: how to read the file and match its ids (`--format`, `--text-field`, `--match-by`...). `allow_code`:
    the user's --allow-code-execution, without which a code task's line is refused. `note` is told what was
    read, and how ids were matched when it was by their number.
    """
    check_scorers([task])
    check_not_episodes(task)
    read, split = read or ReadOptions(), split or SplitOptions()
    id_map = load_id_map(read.id_map) if read.id_map is not None else None
    parsed, said = read_responses(path, read)
    index = Index(task, data, read.match_by, id_map)
    _check_log_name(task, path, parsed, index)
    if parsed[0].doc is not None and not index.at_hand:
        said += "; each doc_id is taken as the task's document of that number, unchecked (--data checks them)"
    opened, inferred = _opened_by_template(parsed, split)
    split = replace(split, opened=opened)
    if inferred is not None:
        said += f"; {inferred}"
    seen: dict[str, str] = {}
    out: list[JudgedLine] = []
    others = target_kinds(task, parsed)
    docs = [entry.doc for entry in parsed if entry.doc is not None]
    for entry in parsed:
        sample = _sample_of(task, entry, index, others, docs)
        if sample.id in seen:
            first = seen[sample.id].rsplit(":", 1)[-1]
            named = "" if str(entry.line.id) == sample.id else f" names sample {sample.id}, which"
            raise InputError(
                f"{entry.where}: id '{entry.line.id}'{named} appears twice (first on line {first}); a run's "
                "records.jsonl holds an id once per level (--stream-parity, a sweep) and per sample: `qualeval "
                "rescore RUN` re-scores a run whole"
            )
        seen[sample.id] = entry.where
        done = _completion(entry, split)
        sample, calls = offered(sample, entry.line, entry.where)
        finish = entry.line.finish_reason
        verdict = decide(task, sample, done, rescue=rescue, allow_code=allow_code, calls=calls, finish=finish)
        done = done.model_copy(update={"status": verdict.status or done.status})  # an echo of its prompt
        error = entry.line.error
        out.append(JudgedLine(_item(sample, done, verdict, error=error), sample, done, verdict, error))
    if note is not None:
        if index.by_number:
            said += "; ids matched to samples by their number ('{}' is {})".format(*index.by_number)
        note(said)
    return out


async def _grade_all(
    task: Task, scored: list[JudgedLine], base_url: str, model: str, rescue: bool, allow_code: bool
) -> None:
    async with model_judge_for(base_url, model) as model_judge:
        assert model_judge is not None
        wanted = [s for s in scored if wants_model_judge(task, s.done, s.verdict)]
        grades = await asyncio.gather(*(model_judge.grade(s.sample, s.done.content) for s in wanted))
    for entry, grade in zip(wanted, grades, strict=True):
        entry.verdict = decide(task, entry.sample, entry.done, rescue=rescue, grade=grade, allow_code=allow_code)
        entry.item = _item(entry.sample, entry.done, entry.verdict, grade, entry.error)


def _outcome(entry: JudgedLine) -> Outcome:
    verdict = entry.verdict
    return Outcome(
        status=entry.done.status,
        correct=bool(verdict.score.correct),
        rung=verdict.extraction.rung,
        meta=entry.sample.meta,
        naive_correct=verdict.naive_correct,
        rescued=verdict.rescue is not None and verdict.rescue.value is not None,
        rescue_correct=bool(verdict.rescue_correct),
        measures=verdict.score.measures,
        error=entry.error,
    )


def score_file(task: Task | str, path: Path | str, **options: Any) -> tuple[list[OfflineItem], TaskSummary]:
    """Judge every line; the options are score_lines'. `task` is a Task or what `evaluate` takes (a built-in
    name, a task YAML path, `lm_eval:NAME`); `path` and `data` may be plain strings."""
    loaded = load_task(task) if isinstance(task, str) else task
    if isinstance(options.get("data"), str):
        options["data"] = Path(options["data"])
    items, summary, _ = score_lines(loaded, Path(path), **options)
    return items, summary


def score_lines(
    task: Task,
    path: Path,
    *,
    data: Path | None = None,
    read: ReadOptions | None = None,
    rescue: bool = False,
    split: SplitOptions | None = None,
    judge_base_url: str | None = None,
    judge_model: str | None = None,
    allow_code: bool = False,
    note: Callable[[str], None] | None = None,
) -> tuple[list[OfflineItem], TaskSummary, list[JudgedLine]]:
    """score_file, also returning each line's full judgement (for reports)."""
    scored = decide_lines(
        task, path, data=data, read=read, rescue=rescue, split=split, allow_code=allow_code, note=note
    )
    if judge_base_url and judge_model:
        asyncio.run(_grade_all(task, scored, judge_base_url, judge_model, rescue, allow_code))
    summary = summarize(task.name, (_outcome(s) for s in scored), task.spec.breakdowns)
    return [s.item for s in scored], summary, scored


def check_out(out: Path, writes: str = "the offline scoring") -> None:
    """`--out` must be a new folder, or an earlier offline scoring, whose every file is replaced: writing over a
    run directory (a run's, or its rescore's) would leave its manifest and records beside files of other items.
    `writes`: what the command writes there, for the message (`board`, `compare` and `gate` check their --out
    too)."""
    from qualeval.records import RunStore, RunSummary

    store = RunStore(out)
    if (out / "manifest.json").exists() or store.records_path.exists():
        raise InputError(f"--out {out}: holds a run directory; give a new folder for {writes}")
    summary = out / "summary.json"
    if not summary.exists():
        return
    try:
        source = RunSummary.model_validate_json(summary.read_bytes()).source
    except (OSError, ValueError):
        raise InputError(f"--out {out}: holds a summary.json that is not qualeval score's; give a new folder") from None
    if source is None:
        raise InputError(f"--out {out}: holds a run's summary.json; give a new folder for {writes}")


def write_offline(
    out: Path, task: Task, responses: Path, items: list[OfflineItem], summary: TaskSummary, scored: list[JudgedLine]
) -> None:
    """items.jsonl and summary.json (a RunSummary, as a run writes, with this one task), then report.md and
    report.html (a report that fails is a warning). No request was sent, so the reports say once that timing is
    not known and leave the speed sections out."""
    from qualeval.figures import offline_summary, tools_by_task, write_summary_json
    from qualeval.records import RunStore
    from qualeval.report import write_reports_or_warn

    store = RunStore(out)  # every file through the store, each moved into place whole
    store.write_lines("items.jsonl", (item.model_dump_json().encode() for item in items))
    records = [entry.record(task.name) for entry in scored]
    run = offline_summary(summary, responses, len(items))
    # a tool-call task's figures (wire statuses, leaked markup judged apart, schema validity) as a run has them
    run.tasks[summary.task].tools = tools_by_task(records).get(task.name)
    write_summary_json(store, run)
    write_reports_or_warn(store, run, records, offline=True)
