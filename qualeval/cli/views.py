"""The terminal views of the commands' results: rich tables on stdout, one-line notes on stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table

from qualeval.cli.compare_view import print_comparison
from qualeval.cli.output import note, stdout

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console

    from qualeval.records import (
        Cell,
        LevelReport,
        ProbeResult,
        RunSummary,
        Speed,
        TaskSummary,
    )
    from qualeval.tasks import Sample

__all__ = [
    "print_below",
    "print_comparison",
    "print_flavours",
    "print_probe",
    "print_run",
    "print_sample",
    "print_speed",
    "print_summary",
    "print_task_scores",
    "print_tasks",
]

_SIMULATED = "  [SIMULATED server]"


def _cell_text(cell: Cell, count: str) -> str:
    """A share with its interval and `count`; a dash where nothing was judged (n = 0), never 0.0%."""
    from qualeval.figures import judged

    shares = judged(cell)
    if shares is None:
        return "– (no item answered)"
    accuracy, low, high = shares
    return f"{accuracy:.1%}  [{low:.1%}, {high:.1%}]  ({count})"


def _accuracy_rows(summary: TaskSummary, levels: Mapping[str, LevelReport]) -> list[tuple[str, str]]:
    """The accuracy, or where the levels asked differently one per level and none pooled over them."""
    if not summary.n:
        return [("accuracy (95% Wilson)", "– (no item answered)")]
    if summary.accuracy is None or summary.interval is None:
        cells = {name: levels[name].accuracy for name in summary.per_level if name in levels}
        return [
            (f"accuracy at {name} (95% Wilson)", _cell_text(c, f"{c.correct:g}/{c.n}")) for name, c in cells.items()
        ]
    low, high = summary.interval
    return [
        ("accuracy (95% Wilson)", f"{summary.accuracy:.1%}  [{low:.1%}, {high:.1%}]  ({summary.correct:g}/{summary.n})")
    ]


def _level_shares(summary: TaskSummary, levels: Mapping[str, LevelReport]) -> list[tuple[str, str]]:
    """Where the accuracy is per level, so are the accuracy over answered items and the naive extractor's."""
    at = [(name, levels[name]) for name in summary.per_level if name in levels]
    return [
        (f"{what} at {name}", f"{value:.1%}")
        for attr, what in (("accuracy_answered", "over answered"), ("naive_accuracy", "naive extractor"))
        for name, lv in at
        if (value := getattr(lv, attr)) is not None
    ]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _heading(summary: TaskSummary) -> str:
    """`task: 30 items, 21 with a response (9 lost to endpoint errors)`: every item asked, then how many the
    accuracy is over (`n`); the requests only where they are not one per item (a sweep, several samples)."""
    items = summary.n + summary.error_items
    head = f"{summary.task}: {_plural(items, 'item')}"
    if summary.error_items:
        lost = "an endpoint error" if summary.error_items == 1 else "endpoint errors"
        head += f", {summary.n} with a response ({summary.error_items} lost to {lost})"
    if summary.records and summary.records != items:
        head += f" ({_plural(summary.records, 'request')})"
    return head


def print_summary(summary: TaskSummary, levels: Mapping[str, LevelReport] | None = None) -> None:
    """The terminal view of one task's summary; `levels` gives the accuracy where the levels asked differently."""
    table = Table("measure", "value", title=_heading(summary), title_justify="left")
    for row in _accuracy_rows(summary, levels or {}):
        table.add_row(*row)
    if summary.endpoint_errors:
        # every distinct reason with its count: one shown alone would hide the others
        reason = "; ".join(f"{n}× {why}" for why, n in summary.error_reasons.items()) or "no reason given"
        unanswered = f", {summary.error_items} items unanswered" if summary.error_items else ""
        table.add_row(
            "endpoint errors (not in the accuracy)", f"{summary.endpoint_errors} requests{unanswered}: {reason}"
        )
    from qualeval.report import cut_correct_line, unknown_line

    unknown, cut = unknown_line(summary), cut_correct_line(summary)
    if unknown:
        table.add_row("not the model's answers", unknown)
    if cut and summary.n:
        table.add_row("answers cut off", cut)
    if summary.accuracy_answered is not None:
        table.add_row("accuracy over answered items", f"{summary.accuracy_answered:.1%}")
    for row in _level_shares(summary, levels or {}):
        table.add_row(*row)
    for name, cell in summary.measures.items():
        table.add_row(name.replace("_", "-level ", 1), _cell_text(cell, f"n={cell.n}"))
    if summary.accuracy_without_judge is not None:
        judged = summary.rungs.get("judge", 0)
        table.add_row(f"by the rules alone (a model judge accepted {judged})", f"{summary.accuracy_without_judge:.1%}")
    if summary.naive_accuracy is not None:
        table.add_row("naive extractor (last number/letter anywhere)", f"{summary.naive_accuracy:.1%}")
    table.add_row("statuses", ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())))
    table.add_row("extraction rungs", ", ".join(f"{k} {v}" for k, v in sorted(summary.rungs.items())))
    if summary.constraint_held:
        table.add_row("constraint", ", ".join(f"{k} {v}" for k, v in sorted(summary.constraint_held.items())))
    if summary.followup:
        table.add_row(
            "follow-up against the content", ", ".join(f"{k} {v}" for k, v in sorted(summary.followup.items()))
        )
    if summary.rescued:
        table.add_row("rescued from reasoning (not counted)", f"{summary.rescued} ({summary.rescue_correct} right)")
    for name, macro in summary.macro_accuracy.items():
        cells = summary.breakdowns[name]
        shown = ", ".join(
            f"{k} {'–' if c.accuracy is None else f'{c.accuracy:.0%}'}" for k, c in list(cells.items())[:8]
        )
        more = f" (+{len(cells) - 8} more)" if len(cells) > 8 else ""
        table.add_row(f"by {name} (macro {macro:.1%})", shown + more)
    stdout().print(table)


def print_run(summary: RunSummary) -> None:
    """Each task of a finished run (`print_task_scores`), then its speed, frontier and notes."""
    print_task_scores(summary)
    print_speed(summary)
    from qualeval.cli.frontier import print_frontier

    print_frontier(summary)
    from qualeval.report import cache_lines, identical_lines, terminal_lines

    for line in [*cache_lines(summary), *identical_lines(summary), *terminal_lines(summary)]:
        note(line)


def print_task_scores(summary: RunSummary) -> None:
    """Each task's summary (per level where the levels asked differently), how it stands against the published
    figure, its faults: what a run and a rescore of it both print."""
    for report in summary.tasks.values():
        if not report.scored:  # a workload's synthetic prompts: nothing to score, speed is the point
            note(f"{report.summary.task}: {report.summary.n} synthetic prompts, not scored")
            continue
        print_summary(report.summary, report.levels)
        from qualeval.cli.tool_line import tool_line

        if (line := tool_line(report.summary.task, report)) is not None:  # the answers' statuses say none of it
            stdout().print(line, highlight=False, soft_wrap=True)
        if report.published is not None:
            from qualeval.report import published_where

            note(f"{report.summary.task}: published {report.published:.1%}, {published_where(report)}")
        if report.faults:
            faults = ", ".join(f"{k} {v}" for k, v in sorted(report.faults.items()))
            note(f"{report.summary.task}: failed attempts by fault: {faults}{_retried(report.retried)}")


def print_below(summary: RunSummary, share: float, tasks: list[str], errors: int) -> None:
    """What --fail-under held to `share`, naming the figure: the accuracy line (every item with a response, one
    cut off before its answer counted wrong), not the accuracy over answered items beside it in the table."""
    shown = []
    for name in tasks:
        report = summary.tasks.get(name)
        accuracy = report.summary.accuracy if report is not None else None
        shown.append(name if accuracy is None else f"{name} {accuracy:.1%}")
    left_out = f"; {_plural(errors, 'request')} with endpoint errors left out" if errors else ""
    note(
        f"accuracy below {share:.0%}: {', '.join(shown)} (--fail-under holds the accuracy line, over every item "
        f"with a response: one cut off before its answer counts as wrong{left_out})"
    )


def _retried(count: int) -> str:
    """Retried means another attempt was sent at once (`attempts` > 1): with --max-retries 0, or faults that are never
    retried (a 4xx), a fault ends its request, and saying "retried" would hide that it failed."""
    if not count:
        return "; no request was retried (--max-retries 0, or faults never retried, such as a 4xx)"
    return (
        f"; {count} request{' was' if count == 1 else 's were'} retried (an answered one's TTFT and latency count "
        "from its first attempt, the retries included)"
    )


def _speed_row(label: str, p: Speed) -> list[str]:
    from qualeval.report import dist, num, requests_cell

    first = num(p.first_answer.p50) if p.first_answer else "–"
    latency = num(p.latency.p50) if p.latency else "–"
    return [label, requests_cell(p), dist(p.ttft), first, latency, num(p.output_throughput), num(p.request_throughput)]


def print_speed(summary: RunSummary) -> None:
    """One compact table of every task's speed, per load level when there are several (the pooled figures
    have no throughput then); a task with no timed request has no row, rather than a row of zeros. One task
    names itself in the title, so its rows need only the level and the table fits an 80-column terminal."""
    one = len(summary.tasks) == 1
    title = f"{next(iter(summary.tasks))}: speed" if one else "speed"
    title += " (ms, warm-up excluded; answer: first token or tool call)"
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("level" if one else "task", overflow="fold")  # a narrow terminal folds a label, never cuts it
    for column in ("requests", "TTFT p50/p90", "answer p50", "latency p50", "tok/s", "req/s"):
        table.add_column(column, justify="right")
    untimed = False
    for name, report in summary.tasks.items():
        levels = report.levels if len(report.levels) > 1 else {next(iter(report.levels), ""): None}
        for level, at in levels.items():
            label = level if one else f"{name} @ {level}" if at else name
            p = at.speed if at else report.speed
            if p.requests:
                table.add_row(*_speed_row(label or name, p))
                untimed = untimed or p.duration_s is None
    if table.row_count:
        stdout().print(table)
    if untimed:
        note(
            "tok/s and req/s are – where the timed requests have no one duration: a resumed run's span sessions "
            "(the pause between them would count), a merge's span shards"
        )


def _yes_no(found: bool | None, no: str) -> str:
    return "inconclusive" if found is None else "yes" if found else no  # None: no finished request decided it


def print_probe(result: ProbeResult) -> None:
    title = f"{result.base_url}  model {result.model}" + (_SIMULATED if result.simulated else "")
    table = Table("capability", "found", title=title, title_justify="left")
    unsure = set(result.inconclusive)
    table.add_row("reasoning (non-stream)", "inconclusive" if "reasoning" in unsure else result.reasoning_source)
    table.add_row(
        "reasoning (stream)", "inconclusive" if "stream reasoning" in unsure else result.stream_reasoning_source
    )
    table.add_row("reasoning fields seen", ", ".join(result.reasoning_fields) or "none")
    table.add_row("hidden reasoning (count only)", _yes_no(result.hidden_reasoning, "no"))
    table.add_row("usage in stream", _yes_no(result.streaming_usage, "no"))
    table.add_row("reasoning tokens reported", _yes_no(result.reasoning_tokens_reported, "no (estimated)"))
    for switch, verdict in result.thinking_switch.items():
        table.add_row(f"thinking off via {switch}", verdict)
    for mode, check in result.structured_outputs.items():
        table.add_row(f"structured: {mode}", check.verdict)
    for contract in result.tool_contracts or ():
        held = "inconclusive" if contract.held is None else "held" if contract.held else "BROKEN"
        table.add_row(f"tool_choice {contract.contract} ({contract.where()})", f"{held}: {contract.seen}")
    if result.tool_contracts is None:
        table.add_row("tool_choice contracts", "not checked (--tools)")
    if result.passback is None:
        table.add_row("reasoning passback", "not checked (--passback)")
    console = stdout()
    console.print(table)
    for passed in result.passback or ():  # one line each, which a script can grep
        console.print(passed.line(), highlight=False, markup=False, soft_wrap=True)
    for contract in result.broken():  # one line each, which a script can grep
        console.print(f"broken: {contract.line()}", highlight=False, markup=False, soft_wrap=True)
    for line in result.notes:
        console.print(f"note: {line}", highlight=False, markup=False, soft_wrap=True)


def print_tasks() -> None:
    """The built-in tasks: where each one's documents come from, and the first clause of its description."""
    from qualeval.tasks import builtin_tasks, parse_task

    table = Table("task", "documents from", "description")
    for name, path in builtin_tasks().items():
        spec = parse_task(path)
        source = "generated" if spec.generator else "bundled" if spec.samples else spec.dataset_path or "--data only"
        shown = name
        if spec.subsets:
            label = spec.subsets.label
            plural = label[:-1] + "ies" if label.endswith("y") else label + "s"  # categories, subjects
            shown += f" (+{len(spec.subsets.values)} {plural}, groups: {', '.join(spec.subsets.groups)})"
        table.add_row(shown, source, spec.description.split(" (")[0].split(": ")[0].split(". ")[0])
    stdout().print(table)


def _param_text(name: str, schema: Any, required: bool) -> str:
    """`city: string`, `unit?: celsius|fahrenheit` (? where it may be left out), `tags: array<string>`."""
    schema = schema if isinstance(schema, dict) else {}
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = "|".join(map(str, kind))
    if isinstance(schema.get("enum"), list):
        kind = "|".join(str(v) for v in schema["enum"][:6]) + ("|..." if len(schema["enum"]) > 6 else "")
    elif kind == "array" and isinstance(schema.get("items"), dict):
        kind = f"array<{schema['items'].get('type', 'any')}>"
    return f"{name}{'' if required else '?'}: {kind}"


def _tool_text(tool: dict[str, Any]) -> str:
    """One offered tool as one line: its name and parameters, as a signature."""
    function = tool.get("function") or {}
    params = function.get("parameters") or {}
    required = set(params.get("required") or ())
    props = params.get("properties") or {}
    return f"{function.get('name')}({', '.join(_param_text(n, s, n in required) for n, s in props.items())})"


def _print_tools(console: Console, sample: Sample, most: int = 12) -> None:
    for tool in sample.tools[:most]:
        console.print(f"tool: {_tool_text(tool)}", markup=False, highlight=False)
    if len(sample.tools) > most:
        console.print(f"tool: ... {len(sample.tools) - most} more", markup=False, highlight=False)
    if sample.tool_choice is not None:
        choice = sample.tool_choice
        shown = choice if isinstance(choice, str) else f"function {choice.get('function', {}).get('name')}"
        console.print(f"tool_choice: {shown}", markup=False, highlight=False)


def print_sample(sample: Sample) -> None:
    """One sample as the model would see it, then what it is scored against; none of it is markup."""
    console = stdout()
    console.print(f"[bold]{sample.id}[/]  task {sample.task}", highlight=False)
    for message in sample.messages:
        console.rule(message.role, align="left")
        console.print(message.content, markup=False, highlight=False)
    console.rule()
    _print_tools(console, sample)
    console.print(f"gold: {sample.gold}", markup=False, highlight=False)
    if sample.choices:
        console.print(f"choices: {list(sample.choices)}", markup=False, highlight=False)
    if sample.aliases:
        console.print(f"aliases: {list(sample.aliases)[:8]}", markup=False, highlight=False)
    if sample.meta:
        console.print(f"meta: {sample.meta}", markup=False, highlight=False)


def print_flavours() -> None:
    from qualeval.sim import FLAVOURS

    table = Table("flavour", "what it reproduces")
    for f in FLAVOURS.values():
        table.add_row(f.name, f.description)
    stdout().print(table)
