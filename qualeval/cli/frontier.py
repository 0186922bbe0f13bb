"""The terminal view of a run's frontier and quality under load: per task with a frontier a compact table (the
reports have every column; Pareto-efficient on mean output tokens, tok, and on latency p50, lat) and the
smallest budget close to the best; a warning line per significant drop under load."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from qualeval.cli.output import note, stdout
from qualeval.report import drop_warnings, num, pct, points, same_spend_warnings, smallest_line

if TYPE_CHECKING:
    from qualeval.records import FrontierLevel, RunSummary

__all__ = ["print_frontier"]


def _step(lv: FrontierLevel, above: str | None) -> str:
    """The step from the level it is compared with, in points; that level named unless it is the row above."""
    step = lv.vs_previous
    if step is None:
        return "–"
    against = "" if step.against == above else f" vs {step.against}"
    return f"{points(step.difference).replace(' points', ' pts')}{against} p={step.p:.2g}"


def _row(lv: FrontierLevel, above: str | None) -> list[str]:
    return [
        lv.level,
        pct(lv.accuracy.accuracy) if lv.accuracy.n else "–",
        "–" if lv.output_tokens is None else f"{lv.output_tokens.mean:,.0f}",
        pct(lv.reasoning_truncated),
        num(lv.latency_p50),
        ", ".join(short for short, on in (("tok", lv.efficient_tokens), ("lat", lv.efficient_latency)) if on) or "–",
        _step(lv, above),
    ]


def print_frontier(summary: RunSummary) -> None:
    for name, report in summary.tasks.items():
        if report.frontier is None:
            continue
        table = Table(title=f"{name}: accuracy against cost", title_justify="left", show_edge=False)
        table.add_column("level", overflow="fold")  # a narrow terminal folds a label, never cuts it
        for column in ("accuracy", "tokens", "cut", "lat p50", "Pareto"):
            table.add_column(column, justify="right")
        table.add_column("a step before", justify="right", overflow="fold")
        for i, lv in enumerate(report.frontier.levels):
            table.add_row(*_row(lv, report.frontier.levels[i - 1].level if i else None))
        stdout().print(table)
        note(f"{name}: {smallest_line(report.frontier)}")
    for line in [*same_spend_warnings(summary), *drop_warnings(summary)]:
        note(f"warning: {line}")
