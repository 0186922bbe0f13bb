"""How the reports write a share, a figure and a distribution (report.md, report.html, the terminal)."""

from __future__ import annotations

from qualeval.records import Distribution, Repeated, Speed

__all__ = ["EPISODE_SPEED", "at_k", "dist", "num", "pct", "requests_cell"]

EPISODE_SPEED = (
    "An agent's task (requests given as `N in M episodes`): requests and requests/s count every request of its "
    "episodes; TTFT is each episode's first request's, latency and tokens each episode's requests summed, TPOT "
    "left out (it would hold the other requests' TTFT)."
)


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def num(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:,.1f}"


def dist(d: Distribution | None) -> str:
    return "–" if d is None else f"{d.p50:,.0f} / {d.p90:,.0f}"


def requests_cell(p: Speed) -> str:
    """The requests a speed row counts; an agent's task's are its episodes' steps, whose count it says too."""
    return f"{p.requests} in {p.episodes} episodes" if p.episodes else str(p.requests)


def at_k(r: Repeated) -> str:
    """maj@K and pass@K, saying over which items when some lack answered samples (endpoint errors)."""
    if r.maj_at_k is None or r.pass_at_k is None:
        return f"no maj@{r.k} nor pass@{r.k}: no item has all {r.k} samples answered"
    figures = f"maj@{r.k} {pct(r.maj_at_k)} ± {pct(r.maj_se)}, pass@{r.k} {pct(r.pass_at_k)} ± {pct(r.pass_se)}"
    if r.complete is not None and r.complete < r.items:
        figures += f" over the {r.complete} of {r.items} items with all {r.k} samples answered"
    return figures
