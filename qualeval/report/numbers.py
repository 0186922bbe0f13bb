"""How the reports write a share, a figure and a distribution (report.md, report.html, the terminal)."""

from __future__ import annotations

from qualeval.records import Distribution

__all__ = ["dist", "num", "pct"]


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def num(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:,.1f}"


def dist(d: Distribution | None) -> str:
    return "–" if d is None else f"{d.p50:,.0f} / {d.p90:,.0f}"
