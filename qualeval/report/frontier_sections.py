"""The frontier and quality under load as report text: one table of rows for report.md, report.html and the
terminal alike, the sentence naming the smallest budget close to the best, and a warning per significant drop
under load (qualeval.figures.frontier computes the figures)."""

from __future__ import annotations

from collections.abc import Iterable

from qualeval.figures import swept, varied
from qualeval.records import Frontier, FrontierLevel, Paired, RunSummary, TaskReport
from qualeval.report.numbers import num, pct

__all__ = [
    "FRONTIER_HEAD",
    "FRONTIER_NOTE",
    "LOAD_HEAD",
    "LOAD_NOTE",
    "drop_markdown",
    "drop_warnings",
    "efficient_text",
    "frontier_markdown",
    "frontier_rows",
    "load_rows",
    "paired_text",
    "per_level_note",
    "points",
    "same_spend_warnings",
    "smallest_line",
    "truncation_line",
]

FRONTIER_HEAD = (
    "level",
    "accuracy",
    "95% interval",
    "output tokens mean",
    "reasoning mean / p90",
    "answer mean / p90",
    "cut in thinking",
    "latency p50 / p99",
    "first answer p50",
    "Pareto-efficient",
    "vs the level a step before",
)
FRONTIER_NOTE = (
    "Levels in run order. Output tokens are completion tokens, reasoning included; milliseconds; warm-up "
    "requests are in no token or latency figure. A level is Pareto-efficient when no other level is as accurate "
    "at no more cost (mean output tokens; latency p50) and better in one. Each level is compared along one axis, "
    "with the nearest level before it that differs from it on one budget axis only (the load sweep's level before "
    "it, in a load sweep), on the same items, warm-up included: the difference in percentage points and McNemar's "
    "exact p."
)
LOAD_NOTE = (
    "Each level against the first level of its sweep (the first that ran the same budget) on the same items, "
    "warm-up included as each level's accuracy counts it, endpoint errors left out: the difference and McNemar's "
    "exact p; a drop is p < 0.05 with accuracy lower."
)
LOAD_HEAD = ("level", "against", "paired items", "difference", "McNemar p", "significant drop")


_ASKED = (
    ("max_tokens", "an output budget"),
    ("effort", "a reasoning effort"),
    ("thinking_budget", "a thinking budget"),
    ("thinking", "thinking on or off"),
    ("stream", "streamed or not: the same requests, answers read from a stream or from a whole body"),
)


def per_level_note(labels: Iterable[str]) -> str:
    """Why a task's accuracy is per level, naming what its levels varied (streaming alone is said as such)."""
    axes = varied(labels)
    how = "; ".join(said for axis, said in _ASKED if axis in axes) or "a budget"
    return (
        f"the levels asked differently ({how}), so the accuracy is per level; a figure pooled over them would mean "
        "none of them."
    )


def _streamed_only(frontier: Frontier) -> str:
    """Said beside the smallest budget where the levels were also asked unstreamed: the frontier read one way."""
    way = next((p for p in frontier.levels[0].level.split() if p.startswith("stream=")), None)
    return f" (read over the {way} levels: streaming is no budget)" if way else ""


def _tokens(level: FrontierLevel, name: str) -> str:
    d = getattr(level, name)
    return "–" if d is None else f"{d.mean:,.0f} / {d.p90:,.0f}"


def efficient_text(level: FrontierLevel) -> str:
    marks = [name for name, on in (("tokens", level.efficient_tokens), ("latency", level.efficient_latency)) if on]
    return " + ".join(marks) or "–"


def points(difference: float) -> str:
    """A difference of two accuracies, in percentage points (never "%", which would read as relative)."""
    return f"{100 * difference:+.1f} points"


def paired_text(p: Paired | None) -> str:
    return "–" if p is None else f"{points(p.difference)} vs {p.against} (p={p.p:.3g}, {p.pairs} pairs)"


def frontier_rows(frontier: Frontier) -> list[list[str]]:
    """One row per level, in FRONTIER_HEAD's order."""
    rows = []
    for lv in frontier.levels:
        c = lv.accuracy
        latency = "–" if lv.latency_p50 is None else f"{num(lv.latency_p50)} / {num(lv.latency_p99)}"
        rows.append(
            [
                lv.level,
                pct(c.accuracy) if c.n else "–",
                f"{pct(c.low)} – {pct(c.high)}" if c.n else "–",
                "–" if lv.output_tokens is None else f"{lv.output_tokens.mean:,.0f}",
                _tokens(lv, "reasoning_tokens"),
                _tokens(lv, "answer_tokens"),
                pct(lv.reasoning_truncated),
                latency,
                num(lv.first_answer_p50),
                efficient_text(lv),
                paired_text(lv.vs_previous),
            ]
        )
    return rows


def smallest_line(frontier: Frontier) -> str:
    """The smallest budget within --within points of the best, said with both levels' figures."""
    return _smallest(frontier) + _streamed_only(frontier)


def _smallest(frontier: Frontier) -> str:
    by = {lv.level: lv for lv in frontier.levels}
    points = f"{100 * frontier.within:g} point{'' if frontier.within == 0.01 else 's'}"
    if frontier.best is None and any(lv.accuracy.accuracy is not None for lv in frontier.levels):
        return "no budget recommended: no level got any item right"
    if frontier.best is None or frontier.smallest_within is None:
        return f"the smallest budget within {points} of the best: – (no level answered with a token count)"
    best, small = by[frontier.best], by[frontier.smallest_within]
    if best.level == small.level:
        return f"the smallest budget within {points} of the best: {best.level} itself ({pct(best.accuracy.accuracy)})"
    share = ""
    if small.output_tokens and best.output_tokens and best.output_tokens.mean:
        share = f", {small.output_tokens.mean / best.output_tokens.mean:.0%} of the best's output tokens"
    return (
        f"the smallest budget within {points} of the best ({best.level}, {pct(best.accuracy.accuracy)}): "
        f"{small.level} ({pct(small.accuracy.accuracy)}{share})"
    )


def truncation_line(t: TaskReport) -> str:
    """The answers cut off by the token budget, and the budget suggested, unless the budget was a level: then
    the frontier reads each budget, and a suggestion from lengths pooled over them would contradict it."""
    k = t.linked.truncation
    assert k is not None  # shown only beside answers that were measured (has_linked), which it counts
    cut = f"truncated: {k.truncated} ({pct(k.rate)})"
    if "max_tokens" in swept(t.levels):
        return f"{cut} over the max_tokens levels; no budget suggested: the frontier reads each budget"
    return f"{cut} at budget {k.budget or 'server default'}; suggested budget: {k.suggested_budget or '–'}"


def load_rows(t: TaskReport) -> list[list[str]]:
    """Quality under load, one row per level read against the first level of its sweep (LOAD_HEAD's order)."""
    return [
        [level, p.against, str(p.pairs), points(p.difference), f"{p.p:.3g}", "yes" if p.drop else "no"]
        for level, lv in t.levels.items()
        if (p := lv.vs_first) is not None
    ]


SAME_SPEND = 0.05
"""Levels whose reasoning-token medians and means are all within 5% of each other spent the same."""
_IGNORED = {
    "effort": "the server appears to ignore reasoning_effort",
    "thinking_budget": "the server appears to ignore the thinking budget",
    "max_tokens": "every answer fit within the smallest budget, so the budgets changed nothing",
}


def _close(values: list[float]) -> bool:
    return max(values) <= min(values) * (1 + SAME_SPEND)


def _same_spend(name: str, t: TaskReport, axis: str) -> list[str]:
    """One line per group of levels that differ on `axis` only (load and the other axes alike) and spent the
    same reasoning tokens: the levels asked for different thinking and got the same."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for label in t.levels:
        parts = label.split()
        if any(p.startswith(f"{axis}=") for p in parts):
            groups.setdefault(tuple(p for p in parts if not p.startswith(f"{axis}=")), []).append(label)
    lines = []
    for rest, labels in groups.items():
        spent = [t.levels[label].speed.reasoning_tokens for label in labels]
        if len(labels) < 2 or any(d is None or not d.n for d in spent):
            continue
        medians, means = [d.p50 for d in spent if d], [d.mean for d in spent if d]
        if _close(medians) and _close(means):
            values = ", ".join(label.split(f"{axis}=")[1].split()[0] for label in labels)
            where = f" at {' '.join(rest)}" if rest else ""
            lines.append(
                f"{name}{where}: the {axis} levels ({values}) spent the same reasoning tokens (median "
                f"{' / '.join(f'{m:,.0f}' for m in medians)}, mean {' / '.join(f'{m:,.0f}' for m in means)}): "
                f"{_IGNORED[axis]}"
            )
    return lines


def same_spend_warnings(summary: RunSummary) -> list[str]:
    """Per task and budget axis, the levels that asked for different thinking and spent the same on it (a
    server that ignores reasoning_effort, a budget above every answer): the finding, never a silent blank."""
    return [
        line
        for name, t in summary.tasks.items()
        if t.scored
        for axis in _IGNORED
        for line in _same_spend(name, t, axis)
    ]


def drop_warnings(summary: RunSummary) -> list[str]:
    """One line per level whose accuracy fell significantly against the first level of its load sweep."""
    return [
        f"{name} @ {level}: accuracy fell {100 * -p.difference:.1f} points against {p.against} on {p.pairs} "
        f"paired items (McNemar p={p.p:.3g})"
        for name, t in summary.tasks.items()
        for level, lv in t.levels.items()
        if (p := lv.vs_first) is not None and p.drop
    ]


def _table(head: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|---" + "|---:" * (len(head) - 1) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def frontier_markdown(summary: RunSummary) -> list[str]:
    """Per task its frontier and its quality under load; nothing for a task that has neither."""
    lines: list[str] = []
    for name, t in summary.tasks.items():
        if t.frontier is not None:
            lines += ["", f"### {name}: accuracy against cost, by level", "", FRONTIER_NOTE, ""]
            lines += _table(FRONTIER_HEAD, frontier_rows(t.frontier))
            lines += ["", f"{name}: {smallest_line(t.frontier)}"]
        if rows := load_rows(t):
            lines += ["", f"### {name}: quality under load", "", LOAD_NOTE, ""]
            lines += _table(LOAD_HEAD, rows)
    return lines


def drop_markdown(summary: RunSummary) -> list[str]:
    """The drops under load and the levels that spent the same as notes, said before any table: each is a finding
    that changes how every table below reads."""
    drops = [line for w in drop_warnings(summary) for line in (f"> **Accuracy fell under load.** {w}", "")]
    return drops + [line for w in same_spend_warnings(summary) for line in (f"> **Warning.** {w}", "")]
