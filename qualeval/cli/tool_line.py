"""A tool-call task's figures as one compact terminal line under its table: the accuracy (per level where the
levels asked differently), the responses by wire status, the wrong answers the server lost (a call leaked as markup
that would have been right) and, with --stream-parity, how many pairs agreed streamed and not. The reports and
summary.json (`tools`) have every figure; the line says where the task's own `statuses` (the answer's) cannot."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualeval.records import Cell, TaskReport, ToolFigures

__all__ = ["tool_line"]


def _share(cell: Cell | None) -> str:
    if cell is None or cell.accuracy is None:
        return "–"
    return f"{cell.accuracy:.1%} [{cell.low:.1%}, {cell.high:.1%}]"


def _accuracy(report: TaskReport, tools: ToolFigures) -> str:
    """The pooled accuracy, or one per level where the task's is per level (tools.accuracy is None then)."""
    per_level = [(name, lv.tools) for name, lv in report.levels.items() if lv.tools is not None]
    if tools.accuracy is not None or not per_level:
        return f"accuracy {_share(tools.accuracy)}"
    return "accuracy " + ", ".join(f"{name} {_share(t.accuracy)}" for name, t in per_level)


def tool_line(name: str, report: TaskReport) -> str | None:
    """`name tools: accuracy ...; wire statuses ...; would have been right ...; stream parity ...`; None for a
    task with no tool-call item."""
    tools = report.tools
    if tools is None:
        return None
    wire = ", ".join(f"{status} {n}" for status, n in sorted(tools.statuses.items())) or "–"
    lost = tools.recovery
    parts = [
        _accuracy(report, tools),
        f"wire statuses: {wire}",
        f"would have been right: {lost.would_be_right} of {lost.wrong} wrong",
    ]
    if (parity := tools.parity) is not None:
        agreed = "–" if parity.share is None else f"{parity.share:.0%}"
        parts.append(f"stream parity: {parity.agree}/{parity.pairs} pairs agree ({agreed})")
    return f"{name} tool calls ({tools.responses} responses): " + "; ".join(parts)
