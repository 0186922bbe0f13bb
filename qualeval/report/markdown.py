"""report.md from a run summary: accuracy (with the endpoint errors left out of it), statuses and extraction,
speed, load levels, speed and quality together, and the serving sections.

A section with nothing measured is left out rather than drawn as a table of dashes and zeros: offline scoring
(`qualeval score`) sends no request, so it has no timing; a workload's synthetic prompts (`TaskReport.scored`
false) have no right answer, so nothing derived from correctness is shown for them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from qualeval.figures import judged
from qualeval.records import LevelReport, RunSummary, TaskReport, TaskSummary
from qualeval.report.episode_sections import episode_markdown
from qualeval.report.frontier_sections import drop_markdown, frontier_markdown, per_level_note, truncation_line
from qualeval.report.linked import has_linked, linked_scope
from qualeval.report.numbers import EPISODE_SPEED, at_k, dist, num, pct, requests_cell
from qualeval.report.refusals import context_claimed, context_refused
from qualeval.report.repeats import cache_lines, identical_lines
from qualeval.report.serving_sections import serving_markdown
from qualeval.report.speed_rows import speed_rows
from qualeval.report.tool_sections import TOOL_SPEED_HEAD, has_tools, tool_markdown, tool_speed_cells

__all__ = [
    "OFFLINE",
    "cut_correct_line",
    "errors_again",
    "errors_cell",
    "markdown_report",
    "published_where",
    "timed",
]

Named = TypeVar("Named", bound=str)  # a closed set's names (statuses, rungs)

OFFLINE = (
    "Scored offline (qualeval score) from responses made elsewhere: no request was sent, so timing is not known "
    "and no speed is shown."
)


def timed(t: TaskReport) -> bool:
    """Whether any request of the task was timed (none is, offline or when the endpoint failed every one)."""
    return t.speed.requests > 0


def published_where(t: TaskReport) -> str:
    """Where the published figure falls: inside or outside the interval, per level where the levels asked
    differently (a model card's figure is of one setting, which is one of the levels at most)."""
    assert t.published is not None
    if t.summary.interval is not None:
        low, high = t.summary.interval
        return f"{'inside' if low <= t.published <= high else 'outside'} the interval"
    cells = {name: t.levels[name].accuracy for name in t.summary.per_level if name in t.levels}
    shares = {name: j for name, c in cells.items() if (j := judged(c)) is not None}
    inside = [name for name, (_, low, high) in shares.items() if low <= t.published <= high]
    outside = [name for name in shares if name not in inside]
    parts = [
        f"inside the interval at {', '.join(inside)}" if inside else "",
        f"outside at {', '.join(outside)}" if outside else "",
    ]
    return "; ".join(p for p in parts if p) or "no level answered"


def markdown_report(summary: RunSummary, *, offline: bool = False) -> str:
    """`offline`: scored by `qualeval score`, from responses made elsewhere (no timing)."""
    lines = _header(summary, offline) + drop_markdown(summary) + _accuracy(summary, offline)
    lines += _statuses(summary) + tool_markdown(summary) + episode_markdown(summary) + _faults(summary)
    lines += _speed(summary)
    lines += _repeats(summary) + serving_markdown(summary)
    return "\n".join(lines) + "\n"


def _repeats(summary: RunSummary) -> list[str]:
    """The prefix cache's share of the prompts, and identical outputs on identical input across load levels."""
    found = cache_lines(summary) + identical_lines(summary)
    return ["", "## Repeated inputs", "", *(f"- {line}" for line in found)] if found else []


def _header(summary: RunSummary, offline: bool) -> list[str]:
    where = (
        f"responses from **{summary.source}**"
        if offline
        else f"model **{summary.model}** at {summary.base_url} · started {summary.started or '?'}"
    )
    lines = [
        f"# qualeval report{' (rescored)' if summary.rescored else ''}",
        "",
        f"{where} · {summary.records} records · qualeval {summary.qualeval_version}",
        "",
    ]
    lines += [f"> **Note.** {note}" for note in summary.notes] + ([""] if summary.notes else [])
    if offline:
        lines += [f"> {OFFLINE}", ""]
    if summary.simulated:
        lines += [
            "> **Simulated server.** These results come from qualeval's reference server, a deterministic "
            "simulation of a reasoning model; they say nothing about any real model.",
            "",
        ]
    return lines


def _accuracy(summary: RunSummary, offline: bool) -> list[str]:
    """The accuracy table, then each task's notes: published figure, scorer's figures, judge, repeats."""
    lines = [
        "## Accuracy",
        "",
        "| task | items | accuracy | 95% interval | over answered | naive extractor | endpoint errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, t in summary.tasks.items():
        m = t.summary
        answered = pct(m.accuracy_answered) if m.accuracy_answered is not None else "–"
        errors = errors_cell(m.endpoint_errors, m.error_items)
        if not t.scored:  # a workload's synthetic prompts have no right answer
            lines.append(f"| {name} | {m.n} | not scored (synthetic prompts) | – | – | – | {errors} |")
            continue
        if not m.n:
            lines.append(f"| {name} | 0 | – (no item answered) | – | – | – | {errors} |")
            continue
        if m.interval is None:  # the levels asked differently: a row each, none pooled over them
            lines += [_level_row(f"{name} @ {level}", t.levels[level]) for level in m.per_level if level in t.levels]
            continue
        lines.append(
            f"| {name} | {m.n} | {pct(m.accuracy)} | {pct(m.interval[0])} – {pct(m.interval[1])} | "
            f"{answered} | {pct(m.naive_accuracy)} | {errors} |"
        )
    for name, t in summary.tasks.items():
        if t.summary.per_level:
            lines += ["", f"{name}: {per_level_note(t.levels)}"]
        lines += _errors(name, t, offline)
        unknown, cut = unknown_line(t.summary), cut_correct_line(t.summary)
        lines += ["", f"{name}: **{unknown}**."] if unknown else []
        lines += ["", f"{name}: {cut}."] if cut and t.scored else []
        if t.scored:  # a published figure, a judge, repeated samples: all accuracy, which synthetic prompts lack
            lines += _figures(name, t) + _judged(name, t) + _repeated(name, t)
    return lines


def _level_row(name: str, lv: LevelReport) -> str:
    c, errors = lv.accuracy, errors_cell(lv.endpoint_errors, 0)
    if not c.n:
        return f"| {name} | 0 | – (no item answered) | – | – | – | {errors} |"
    answered, naive = (pct(v) if v is not None else "–" for v in (lv.accuracy_answered, lv.naive_accuracy))
    return f"| {name} | {c.n} | {pct(c.accuracy)} | {pct(c.low)} – {pct(c.high)} | {answered} | {naive} | {errors} |"


def errors_cell(records: int, items: int) -> str:
    """Endpoint errors as a table cell: the requests that failed, and the items left with no answer at all."""
    if not records:
        return "0"
    return f"{records} ({items} items unanswered)" if items else str(records)


def cut_correct_line(m: TaskSummary) -> str | None:
    """How many answers cut off by the budget count as correct, said in every report; None when none was cut."""
    cut = m.statuses.get("answer_truncated", 0)
    if not cut:
        return None
    right, what = m.truncated_correct, "cut off by the budget (answer_truncated)"
    if cut == 1:
        verdict = "is counted correct: it states" if right else "is not counted correct: it does not state"
        return f"the 1 answer {what} {verdict} the right answer before the cut"
    if not right:
        who, verdict = f"none of the {cut} answers", "is counted correct: none states"
    elif right == cut:
        who, verdict = f"all {cut} answers", "are counted correct: each states"
    elif right == 1:
        who, verdict = f"1 of the {cut} answers", "is counted correct: it states"
    else:
        who, verdict = f"{right} of the {cut} answers", "are counted correct: each of them states"
    return f"{who} {what} {verdict} the right answer before the cut"


def unknown_line(m: TaskSummary) -> str | None:
    """What a reference server answered in the model's place, said in every report; None when it did not."""
    if not m.unknown_questions:
        return None
    return (
        f"{m.unknown_questions} of {m.records} answers came from a reference server that did not know the question: "
        "they are not the model's answers, and not in the accuracy"
    )


def errors_again(m: TaskSummary, offline: bool) -> str:
    """What to do about a task's endpoint errors, as it is true for the report: a run sends them again on a rerun,
    but for a prompt longer than the server's context; offline scoring sent nothing, and cannot."""
    if offline:
        return (
            "Scored offline, nothing was sent: to count them, make those requests again where the file was made "
            "and score the new file."
        )
    too_long = sum(count for reason, count in m.error_reasons.items() if context_refused(reason))
    claimed = sum(count for reason, count in m.error_reasons.items() if context_claimed(reason))
    said = (
        f"{claimed} of them the server refused as longer than its context though its own figures put them within"
        " it: its claim, not the prompts' length. "
        if claimed
        else ""
    )
    if not too_long:
        return said + "Rerunning with the same --out sends them again."
    # sending a prompt longer than the server's context again only fails again (as the CLI says)
    return (
        f"{too_long} of them are longer than the server's context and would fail again on a rerun: use a "
        "shorter length, or serve a longer context."
    ) + (" Rerunning with the same --out sends the others again." if too_long < m.endpoint_errors else "")


def _errors(name: str, t: TaskReport, offline: bool) -> list[str]:
    m = t.summary
    if not m.endpoint_errors:
        return []
    reasons = "; ".join(f"{count}× {reason}" for reason, count in m.error_reasons.items())
    unit = "episodes" if t.episodes else "requests"
    return [
        "",
        f"{name}: {m.endpoint_errors} {unit} failed at the endpoint and are left out of the accuracy, never "
        f"counted as wrong answers: {reasons}. {errors_again(m, offline)}",
    ]


def _judged(name: str, t: TaskReport) -> list[str]:
    if t.summary.accuracy_without_judge is None:
        return []
    judged = t.summary.rungs.get("judge", 0)
    return [
        "",
        f"{name}: a model judge accepted {judged} answers the rules rejected; by the rules alone, "
        f"accuracy {pct(t.summary.accuracy_without_judge)}",
    ]


def _repeated(name: str, t: TaskReport) -> list[str]:
    r = t.repeated
    if not r:
        return []
    unbiased = f"; unbiased {', '.join(f'pass@{k} {pct(v)}' for k, v in r.pass_at.items())}" if r.pass_at else ""
    return [
        "",
        f"{name}: {r.k} samples per item — mean {pct(r.mean)} ± {pct(r.mean_se)}, {at_k(r)} "
        f"(standard errors clustered by item){unbiased}",
    ]


def _statuses(summary: RunSummary) -> list[str]:
    """Completion statuses, extraction rungs and constraints per task, then each breakdown's table."""
    lines = [
        "",
        "## Completion statuses and extraction",
        "",
        "| task | statuses | extraction rungs | constraint | follow-up against the content |",
        "|---|---|---|---|---|",
    ]
    for name, t in summary.tasks.items():
        m = t.summary
        rungs = _pairs(m.rungs) if t.scored else "– (not scored)"  # nothing was looked for, so nothing missed
        lines.append(
            f"| {name} | {_pairs(m.statuses)} | {rungs} | {_pairs(m.constraint_held) or '–'} | "
            f"{_pairs(m.followup) or '–'} |"
        )
    for name, t in summary.tasks.items():
        for key, cells in (t.summary.breakdowns if t.scored else {}).items():
            lines += [
                "",
                f"### {name} by {key} (macro {pct(t.summary.macro_accuracy[key])})",
                "",
                f"| {key} | items | accuracy | 95% interval |",
                "|---|---:|---:|---:|",
            ]
            lines += [f"| {v} | {c.n} | {pct(c.accuracy)} | {pct(c.low)} – {pct(c.high)} |" for v, c in cells.items()]
    return lines


def _faults(summary: RunSummary) -> list[str]:
    """Every failed attempt per task by fault class, retried or final, as report.html shows it: a fault the
    retries absorbed left no endpoint error, but the server still faltered, and that belongs in the report."""
    lines = ["", "## Faults retried or final", ""]
    if any(t.retried for t in summary.tasks.values()):
        lines += ["A retried request's TTFT and latency count from its first attempt, the retries included.", ""]
    lines += ["| task | failed attempts by fault | requests retried |", "|---|---|---:|"]
    return lines + [f"| {name} | {_pairs(t.faults) or 'none'} | {t.retried} |" for name, t in summary.tasks.items()]


def _speed(summary: RunSummary) -> list[str]:
    """The speed table, then per task its load levels and speed and quality read together; nothing at all
    when no request was timed (offline scoring)."""
    if not any(timed(t) for t in summary.tasks.values()):
        return []
    tools = TOOL_SPEED_HEAD if has_tools(summary) else ()  # the calls' timing beside TTFT and first answer
    head = ("task", "requests", "TTFT", "first answer", "latency", "TPOT p50", "output tok/s", "requests/s", *tools)
    lines = [
        "",
        "## Speed",
        "",
        "Milliseconds, p50 / p90, warm-up excluded. First answer = the first token of the final answer, or the "
        "first tool-call delta where the answer is a call. Levels asked streamed and not have a row each.",
        "",
        "| " + " | ".join(head) + " |",
        "|---|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(tools),
    ]
    for label, p, at in (row for name, t in summary.tasks.items() for row in speed_rows(name, t)):
        tpot = num(p.tpot.p50) if p.tpot else "–"
        lines.append(
            f"| {label} | {requests_cell(p)} | {dist(p.ttft)} | {dist(p.first_answer)} | {dist(p.latency)} | "
            f"{tpot} | {num(p.output_throughput)} | {num(p.request_throughput)} |"
            + "".join(f" {c} |" for c in (tool_speed_cells(at) if tools else ()))
        )
    if any(t.episodes for t in summary.tasks.values()):
        lines += ["", EPISODE_SPEED]
    for name, t in summary.tasks.items():
        lines += _levels(name, t) + _linked(name, t)
    return lines + frontier_markdown(summary)


def _levels(name: str, t: TaskReport) -> list[str]:
    if len(t.levels) <= 1:
        return []
    accuracy = ("accuracy", "95% interval") if t.scored else ()
    head = ("level", *accuracy, "endpoint errors", "TTFT p50", "first answer p50", "output tok/s", "goodput")
    lines = [
        "",
        f"### {name} by load level",
        "",
        "| " + " | ".join(head) + " |",
        "|---" + "|---:" * (len(head) - 1) + "|",
    ]
    for level, lv in t.levels.items():
        c, p = lv.accuracy, lv.speed
        ttft = num(p.ttft.p50) if p.ttft else "–"
        first = num(p.first_answer.p50) if p.first_answer else "–"
        shown = (f"{pct(c.accuracy)} | {pct(c.low)} – {pct(c.high)} | " if c.n else "– | – | ") if t.scored else ""
        lines.append(
            f"| {level} | {shown}{lv.endpoint_errors} | {ttft} | {first} | "
            f"{num(p.output_throughput)} | {num(p.goodput)} |"
        )
    return lines


def _linked(name: str, t: TaskReport) -> list[str]:
    if not has_linked(t):
        return []
    k = t.linked
    return [
        "",
        f"### {name}: speed and quality together",
        "",
        *([scope, ""] if (scope := linked_scope(t)) else []),
        f"- correct answers per minute: {num(k.correct_per_minute)}; output tokens per correct answer: "
        f"{num(k.tokens_per_correct)}; seconds per correct answer: {num(k.seconds_per_correct)}",
        f"- {truncation_line(t)}",
        "- accuracy by reasoning tokens: "
        + ", ".join(f"{b} {pct(c.accuracy)} ({c.n} responses)" for b, c in k.accuracy_by_reasoning_length.items()),
    ]


_MEASURES = {
    "prompt_strict": "prompt-level strict",
    "instruction_strict": "instruction-level strict",
    "prompt_loose": "prompt-level loose",
    "instruction_loose": "instruction-level loose",
}


def _figures(name: str, t: TaskReport) -> list[str]:
    """The published figure beside the measured accuracy, and a scorer's own figures (IFEval's four)."""
    m, lines = t.summary, []
    if t.published is not None and m.interval is not None:
        low, high = m.interval
        where = "inside" if low <= t.published <= high else "outside"
        lines += [
            "",
            f"{name}: published {pct(t.published)}, measured {pct(m.accuracy)} (95% interval {pct(low)} – "
            f"{pct(high)}, n={m.n}): the published figure is {where} the interval",
        ]
    elif t.published is not None:
        lines += ["", f"{name}: published {pct(t.published)}, {published_where(t)}"]
    if m.measures:
        shown = ", ".join(
            f"{_MEASURES.get(k, k)} {pct(c.accuracy)} ({pct(c.low)} – {pct(c.high)}, n={c.n})"
            for k, c in m.measures.items()
        )
        lines += ["", f"{name}: {shown}"]
    return lines


def _pairs(counts: Mapping[Named, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
