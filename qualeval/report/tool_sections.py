"""The tool-call sections of report.md and report.html, from TaskReport.tools (qualeval.figures.toolfigures
computes them): one row a tool-call task (and a row a level where it ran several), the lines naming the items
behind a figure, and the call timing the speed table shows beside TTFT and first answer.

A figure with nothing to count is "–", never 0% or 100%; the note under the table says what each one pools."""

from __future__ import annotations

from collections.abc import Mapping

from qualeval.records import (
    BoardTask,
    DiscordantItem,
    Distribution,
    RunSummary,
    TaskReport,
    ToolFigures,
    ToolPaired,
    ToolShare,
    ToolSides,
    ToolStatus,
)
from qualeval.report.numbers import dist, num, pct

__all__ = [
    "BOARD_TOOL_HEAD",
    "TOOL_HEAD",
    "TOOL_NOTE",
    "TOOL_SPEED_HEAD",
    "board_tool_rows",
    "compare_tool_rows",
    "has_tools",
    "tool_lines",
    "tool_markdown",
    "tool_rows",
    "tool_speed_cells",
]

TOOL_HEAD = (
    "task",
    "responses",
    "accuracy [95%]",
    "trigger P / R / F1",
    "no call where none expected",
    "schema valid",
    "wire statuses",
    "would have been right",
    "stream parity",
    "unanswered",
)

TOOL_NOTE = (
    "Over the model's responses to tool-call items (warm-ups in, as in accuracy); a request with no answer of the "
    "model's (endpoint error) is in no figure, counted under unanswered. Accuracy is the task's own: items, each "
    "scored by the mean of its responses, Wilson 95%. Trigger: a call made (the server returned one in tool_calls) "
    "against a call expected (BFCL irrelevance expects none); a call left as markup in the text counts as no call. "
    "Schema valid: of the responses with a call, those whose every call parses and fits its tool's schema. Would "
    "have been right: of the responses judged wrong, those whose call, read back from markup the server leaked, "
    "would have scored right; never in the accuracy. Stream parity: of the pairs sent both streamed and not "
    "(--stream-parity: an item once per repeat and per other level, a budget or a load), those whose calls "
    "(arguments compared as parsed JSON) and verdict agree. – : nothing to count."
)

TOOL_SPEED_HEAD = ("first tool call", "calls complete", "call fragments p50", "reasoning tokens before call p50")
"""Milliseconds p50 / p90 for the first two, over the streamed responses with a tool-call delta."""


def has_tools(summary: RunSummary) -> bool:
    return any(t.tools is not None for t in summary.tasks.values())


def _share(s: ToolShare) -> str:
    return f"{pct(s.share)} ({s.hits}/{s.n})" if s.n else "–"


def _counts(counts: Mapping[ToolStatus, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "–"


def _p50(d: Distribution | None) -> str:
    return num(d.p50) if d is not None else "–"


def _row(name: str, f: ToolFigures, per_level: bool) -> list[str]:
    a, t, r, p = f.accuracy, f.trigger, f.recovery, f.parity
    if a is not None and a.accuracy is not None:
        accuracy = f"{pct(a.accuracy)} [{pct(a.low)}, {pct(a.high)}]"
    else:
        accuracy = "per level" if per_level and f.responses else "–"
    parity = f"{pct(p.share)} ({p.agree}/{p.pairs})" if p is not None and p.pairs else "–"
    return [
        name,
        str(f.responses),
        accuracy,
        f"{pct(t.precision)} / {pct(t.recall)} / {pct(t.f1)}",
        pct(t.no_call_agreement),
        _share(f.schema_valid),
        _counts(f.statuses),
        f"{r.would_be_right} of {r.wrong} wrong" if r.wrong else "–",
        parity,
        str(f.unanswered),
    ]


def tool_rows(summary: RunSummary) -> list[list[str]]:
    """One row of TOOL_HEAD a tool-call task, then one a level where it ran several."""
    out = []
    for name, t in summary.tasks.items():
        if t.tools is None:
            continue
        out.append(_row(name, t.tools, bool(t.summary.per_level)))
        out += [_row(f"{name} @ {level}", lv.tools, False) for level, lv in t.levels.items() if lv.tools is not None]
    return out


def tool_lines(summary: RunSummary) -> list[str]:
    """Per task, the items behind a figure: those that would have been right, the discordant pairs."""
    out = []
    for name, t in summary.tasks.items():
        f = t.tools
        if f is None:
            continue
        r = f.recovery
        if r.would_be_right:
            out.append(
                f"{name}: {r.would_be_right} of the {r.wrong} wrong responses would have been right had the server "
                f"returned the call the model wrote (read back from leaked markup; not in the accuracy): "
                f"{', '.join(r.items)}; the model's own mistakes: {r.model_wrong}"
            )
        p = f.parity
        if p is not None and p.discordant:
            said = "; ".join(
                f"{d.item} ({_differ(d)}; streamed {d.streamed}, not streamed {d.not_streamed})" for d in p.discordant
            )
            out.append(f"{name}: streamed and non-streamed disagree on {len(p.discordant)} of {p.pairs} pairs: {said}")
        if p is not None and p.unanswered:
            out.append(f"{name}: {p.unanswered} pairs sent both ways had no answer on one side: not in the parity")
    return out


def _differ(d: DiscordantItem) -> str:
    parts = [w for w, same in (("calls", d.calls_agree), ("verdict", d.verdicts_agree)) if not same]
    return " and ".join(parts) + " differ"


def tool_speed_cells(t: TaskReport) -> list[str]:
    """The call timing cells of TOOL_SPEED_HEAD for the speed table; dashes for a task with none."""
    if t.tools is None:
        return ["–"] * len(TOOL_SPEED_HEAD)
    s = t.tools.timing
    return [dist(s.first_delta), dist(s.complete), _p50(s.fragments), _p50(s.reasoning_tokens_before)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def tool_markdown(summary: RunSummary) -> list[str]:
    """The "Tool calls" section of report.md; nothing for a run with no tool-call task."""
    if not has_tools(summary):
        return []
    lines = ["", "## Tool calls", "", "| " + " | ".join(TOOL_HEAD) + " |", "|---" + "|---:" * 2 + "|---" * 7 + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in tool_rows(summary)]
    lines += ["", TOOL_NOTE]
    return lines + [line for found in tool_lines(summary) for line in ("", found)]


def _points(a: float | None, b: float | None) -> str:
    return f"{100 * (b - a):+.1f} points" if a is not None and b is not None else "–"


def _parity(f: ToolFigures) -> str:
    p = f.parity
    return f"{pct(p.share)} ({p.agree}/{p.pairs})" if p is not None and p.pairs else "–"


def compare_tool_rows(sides: ToolSides) -> list[tuple[str, str, str, str]]:
    """compare's rows for a tool-call task: (measure, A, B, B vs A); a figure with nothing to count is "–" on its
    side, and then has no difference either. The wire statuses are counted per side, B - A."""
    a, b = sides.a, sides.b
    shares = (
        ("tool trigger F1", a.trigger.f1, b.trigger.f1),
        ("tool trigger precision", a.trigger.precision, b.trigger.precision),
        ("tool trigger recall", a.trigger.recall, b.trigger.recall),
        ("no call where none expected", a.trigger.no_call_agreement, b.trigger.no_call_agreement),
        ("tool schema valid (responses with a call)", a.schema_valid.share, b.schema_valid.share),
    )
    rows = _paired_rows(sides.paired) + [(name, pct(x), pct(y), _points(x, y)) for name, x, y in shares]
    rows.append(("would have been right (of wrong)", _recovered(a), _recovered(b), ""))
    rows.append(("stream parity (each run's own)", _parity(a), _parity(b), _points(_ps(a), _ps(b))))
    for name, pick in _TIMES:
        x, y = pick(a), pick(b)
        ratio = f"× {y / x:.3f}" if x and y is not None else "–"
        rows.append((name, num(x), num(y), ratio))
    for status in sorted({*a.statuses, *b.statuses}):
        x, y = a.statuses.get(status, 0), b.statuses.get(status, 0)
        rows.append((f"wire status {status}", str(x), str(y), f"{y - x:+d}"))
    return rows


def _test(p: ToolPaired) -> str:
    """A paired tool-verdict difference with its test and its reading against noise."""
    test = f"McNemar p = {p.p_value:.4g}" if p.p_value is not None else "no test"
    if p.p_adjusted is not None and p.p_adjusted != p.p_value:
        test += f", Holm {p.p_adjusted:.4g}"
    said = "within noise" if p.within_noise else "beyond noise"
    return f"{_points(p.accuracy_a, p.accuracy_b)} ({test}; {said})"


def _paired_rows(p: ToolPaired | None) -> list[tuple[str, str, str, str]]:
    """The per-item tool verdicts paired, B against A: accuracy on the paired tool-call items, then the flips."""
    if p is None:
        return []
    return [
        (f"tool accuracy ({p.pairs} paired tool-call items)", pct(p.accuracy_a), pct(p.accuracy_b), _test(p)),
        ("tool verdicts right → wrong / wrong → right", "", "", f"{p.a_right_b_wrong} / {p.a_wrong_b_right}"),
    ]


def _recovered(f: ToolFigures) -> str:
    return f"{f.recovery.would_be_right} of {f.recovery.wrong}" if f.recovery.wrong else "–"


def _ps(f: ToolFigures) -> float | None:
    return f.parity.share if f.parity is not None else None


def _median(d: Distribution | None) -> float | None:
    return d.p50 if d is not None else None


_TIMES = (
    ("first tool call p50 (ms)", lambda f: _median(f.timing.first_delta)),
    ("calls complete p50 (ms)", lambda f: _median(f.timing.complete)),
    ("call fragments p50", lambda f: _median(f.timing.fragments)),
    ("reasoning tokens before call p50", lambda f: _median(f.timing.reasoning_tokens_before)),
)

BOARD_TOOL_HEAD = (
    "config",
    "responses",
    "tool accuracy vs baseline (paired)",
    "trigger P / R / F1",
    "no call where none expected",
    "schema valid",
    "wire statuses",
    "would have been right",
    "stream parity",
    "first tool call p50 / p90 ms",
    "calls complete p50 / p90 ms",
    "unanswered",
)


def board_tool_rows(task: BoardTask) -> list[list[str]]:
    """One row of BOARD_TOOL_HEAD a config with tool figures on the task; none for a task with no tool call."""
    out = []
    for name, c in task.configs.items():
        f = c.tools
        if f is None:
            continue
        t = f.trigger
        out.append(
            [
                name,
                str(f.responses),
                _test(c.tool_paired) + f" on {c.tool_paired.pairs}" if c.tool_paired is not None else "–",
                f"{pct(t.precision)} / {pct(t.recall)} / {pct(t.f1)}",
                pct(t.no_call_agreement),
                _share(f.schema_valid),
                _counts(f.statuses),
                _recovered(f),
                _parity(f),
                dist(f.timing.first_delta),
                dist(f.timing.complete),
                str(f.unanswered),
            ]
        )
    return out
