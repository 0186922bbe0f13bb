"""Plots for the HTML report, drawn with matplotlib as SVG and embedded as data URIs (no network, no files)."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from qualeval.figures import judged

__all__ = [
    "ParetoPoint",
    "accuracy_by_length",
    "accuracy_vs_load",
    "frontier",
    "latency_by_outcome",
    "new_figure",
    "pareto",
    "svg_uri",
    "throughput_vs_load",
]


def new_figure(width: float = 5.2, height: float = 3.0) -> Any:
    import matplotlib

    matplotlib.use("Agg")  # no display here, and no state shared with a user's own plotting backend
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9})
    fig, ax = plt.subplots(figsize=(width, height))
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def svg_uri(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    fig.tight_layout()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue().encode()).decode()


_AXES = {
    "c": "requests in flight",
    "rate": "requests per second (offered)",
    "max_tokens": "output token budget",
    "thinking_budget": "thinking token budget",
}


def _level_x(labels: Sequence[str]) -> tuple[list[float], str, bool]:
    """x positions, the axis title, and whether the levels are numbers on one axis: a load or a token budget
    are; efforts, thinking on and off, and crossed axes are placed in order, each under its label."""
    names = {label.partition("=")[0] for label in labels}
    try:
        values = [float(label.partition("=")[2]) for label in labels]
    except ValueError:
        values = []
    if len(names) == 1 and values and " " not in labels[0]:
        name = names.pop()
        return values, _AXES.get(name, name), True
    return [float(i) for i in range(len(labels))], "level", False


def _place(ax: Any, labels: Sequence[str]) -> list[float]:
    x, title, numeric = _level_x(labels)
    if numeric and len(x) > 2:
        ax.set_xscale("log", base=2)  # sweeps usually double the load (or the budget) at each level
    if not numeric:
        ax.set_xticks(x, list(labels), rotation=20, fontsize=7)
    ax.set_xlabel(title)
    return x


def accuracy_vs_load(levels: Mapping[str, Any], task: str) -> str:
    """Accuracy with its 95% interval at each load level."""
    labels = list(levels)
    fig, ax = new_figure()
    x = _place(ax, labels)
    # a level where nothing was judged (every request failed at the endpoint) has no point, rather than 0%
    shares = [(at, j) for at, k in zip(x, labels, strict=True) if (j := judged(levels[k].accuracy)) is not None]
    low = [max(0.0, a - lo) for _, (a, lo, _) in shares]
    high = [max(0.0, hi - a) for _, (a, _, hi) in shares]
    ax.errorbar([at for at, _ in shares], [a for _, (a, _, _) in shares], yerr=[low, high], marker="o", capsize=3)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1)
    ax.set_title(f"{task}: accuracy by level")
    return svg_uri(fig)


def throughput_vs_load(levels: Mapping[str, Any], task: str) -> str:
    labels = list(levels)
    fig, ax = new_figure()
    x = _place(ax, labels)
    ax.plot(x, [levels[k].speed.output_throughput or 0 for k in labels], marker="o", label="output tokens/s")
    ax.set_ylabel("output tokens per second")
    ax2 = ax.twinx()
    ax2.plot(
        x, [levels[k].speed.request_throughput or 0 for k in labels], marker="s", color="tab:orange", label="requests/s"
    )
    ax2.set_ylabel("requests per second")
    ax.set_title(f"{task}: throughput by level")
    fig.legend(loc="upper left", bbox_to_anchor=(0.12, 0.88), fontsize=8)
    return svg_uri(fig)


def latency_by_outcome(correct: Sequence[float], wrong: Sequence[float], task: str) -> str:
    """End-to-end latency (s) of correct and wrong answers."""
    fig, ax = new_figure()
    data = [v for v in (correct, wrong) if v]
    names = [n for n, v in (("correct", correct), ("wrong", wrong)) if v]
    ax.hist([[t / 1000 for t in d] for d in data], bins=20, label=names, stacked=False, alpha=0.75)
    ax.set_xlabel("end-to-end latency (s)")
    ax.set_ylabel("requests")
    ax.legend()
    ax.set_title(f"{task}: latency by outcome")
    return svg_uri(fig)


def accuracy_by_length(cells: Mapping[str, Any], task: str) -> str:
    """Accuracy for each bucket of reasoning length (tokens)."""
    labels = list(cells)
    acc = [cells[k].accuracy for k in labels]
    # matplotlib refuses a negative error bar outright; an interval edge equal to the share is a zero bar
    err = [
        [max(0.0, a - cells[k].low) for a, k in zip(acc, labels, strict=True)],
        [max(0.0, cells[k].high - a) for a, k in zip(acc, labels, strict=True)],
    ]
    fig, ax = new_figure()
    ax.bar(range(len(labels)), acc, yerr=err, capsize=3, color="#6b8cde")
    ax.set_xticks(range(len(labels)), [f"{k}\n(n={cells[k].n})" for k in labels])
    ax.set_xlabel("reasoning tokens")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1)
    ax.set_title(f"{task}: reasoning length vs correctness")
    return svg_uri(fig)


def _clusters(points: Sequence[tuple[float, float, int]], span: tuple[float, float]) -> list[list[int]]:
    """The points' numbers grouped where they lie within 4% of the axes' spans of each other: one label each
    group, as labels drawn point by point would print over one another there."""
    groups: list[tuple[float, float, list[int]]] = []
    for x, y, number in sorted(points):
        near = next((g for g in groups if abs(g[0] - x) <= 0.04 * span[0] and abs(g[1] - y) <= 0.04 * span[1]), None)
        if near is None:
            groups.append((x, y, [number]))
        else:
            near[2].append(number)
    return [g[2] for g in groups]


def _numbered(ax: Any, placed: Sequence[tuple[float, Any, int]]) -> None:
    """Each point's number beside it (points that coincide share one label), kept inside the axes."""
    xs = [x for x, _, _ in placed]
    span = ((max(xs) - min(xs)) or 1.0, 1.0)
    at = {number: (x, lv.accuracy.accuracy) for x, lv, number in placed}
    for group in _clusters([(*at[n], n) for n in at], span):
        x, y = at[group[0]]
        right = x > min(xs) + 0.7 * span[0]  # near the right edge the label goes to the left of its point
        ax.annotate(
            ",".join(map(str, sorted(group))), (x, y), textcoords="offset points", xytext=(-6 if right else 6, 6),
            ha="right" if right else "left", fontsize=8, annotation_clip=False,
        )  # fmt: skip


def frontier(levels: Sequence[Any], task: str) -> str:
    """Accuracy (with its interval) against mean output tokens and against latency p50, one point per level,
    the Pareto-efficient ones filled and joined in order of cost. Points are numbered and the key below names
    the levels: long labels written beside close points printed over one another."""
    numbers = {lv.level: i + 1 for i, lv in enumerate(levels)}
    key_rows = (len(levels) + 1) // 2
    fig, axes = new_figure(width=9.0, height=3.4 + 0.16 * key_rows)
    fig.delaxes(axes)
    grid = fig.add_gridspec(2, 2, height_ratios=[3.4, 0.16 * key_rows + 0.1])
    for i, (cost, marked, label) in enumerate(
        (
            (lambda lv: lv.output_tokens.mean if lv.output_tokens else None, "efficient_tokens", "mean output tokens"),
            (lambda lv: lv.latency_p50, "efficient_latency", "latency p50 (ms)"),
        )
    ):
        ax = fig.add_subplot(grid[0, i])
        ax.spines[["top", "right"]].set_visible(False)
        placed = [(cost(lv), lv, numbers[lv.level]) for lv in levels if cost(lv) is not None and lv.accuracy.n]
        for x, lv, _ in placed:
            a = lv.accuracy
            on = bool(getattr(lv, marked))
            ax.errorbar(
                [x], [a.accuracy], yerr=[[max(0.0, a.accuracy - a.low)], [max(0.0, a.high - a.accuracy)]],
                marker="o", capsize=3, color="tab:blue", mfc="tab:blue" if on else "white",
            )  # fmt: skip
        if placed:
            _numbered(ax, placed)
        edge = sorted((x, lv.accuracy.accuracy) for x, lv, _ in placed if getattr(lv, marked))
        if len(edge) > 1:
            ax.plot([e[0] for e in edge], [e[1] for e in edge], color="tab:blue", alpha=0.5)
        ax.set_xlabel(label)
        ax.set_ylabel("accuracy")
        ax.set_ylim(0, 1.05)
    key = [f"{n}  {name}" for name, n in numbers.items()]
    for column, names in enumerate((key[:key_rows], key[key_rows:])):
        box = fig.add_subplot(grid[1, column])
        box.axis("off")
        box.text(0, 1, "\n".join(names), fontsize=8, va="top", ha="left", transform=box.transAxes)
    fig.suptitle(f"{task}: accuracy against cost (filled: Pareto-efficient)")
    return svg_uri(fig)


class ParetoPoint(NamedTuple):
    """One config on a board's plot: its label, its speed figure (x) and its accuracy with the 95% interval."""

    label: str
    x: float
    accuracy: float
    low: float
    high: float
    efficient: bool
    baseline: bool


def _front(
    points: Sequence[ParetoPoint], higher_better: bool, left: float, right: float, bottom: float
) -> tuple[list[float], list[float]]:
    """The edge of what the efficient points dominate, across the axes: with higher x better it comes in from
    the left at the most accurate point's height and steps down at each point to the next, then to the bottom;
    with lower x better it rises from the bottom at the quickest point and steps up at each, then runs out to
    the right. A single efficient point draws the corner of what it beats."""
    edge = sorted((p.x, p.accuracy) for p in points if p.efficient)
    if higher_better:
        xs, ys = [left], [edge[0][1]]
        for (x, y), (_, after) in zip(edge, [*edge[1:], (right, bottom)], strict=True):
            xs += [x, x]
            ys += [y, after]
    else:
        xs, ys = [edge[0][0]], [bottom]
        for (x, y), (after, _) in zip(edge, [*edge[1:], (right, bottom)], strict=True):
            xs += [x, after]
            ys += [y, y]
    return xs, ys


_SPOTS = ((7, 5, "left"), (7, -15, "left"), (-7, 5, "right"), (-7, -15, "right"), (7, 14, "left"), (-7, 14, "right"))
"""Where a point's label may go, in points from it: right and above first, then below, then to the left."""


def _label(ax: Any, labels: Sequence[tuple[float, float, str]]) -> None:
    """Each label beside its point at the first spot that covers no point and no label already placed (else
    the spot covering fewest), so that two close configs' labels do not print over each other or a marker."""
    scale = ax.figure.dpi / 72  # display pixels per typographic point
    at = [ax.transData.transform((x, y)) for x, y, _ in labels]
    taken = [(px - 6 * scale, py - 6 * scale, px + 6 * scale, py + 6 * scale) for px, py in at]

    def clashes(box: tuple[float, float, float, float]) -> int:
        return sum(box[0] < t[2] and t[0] < box[2] and box[1] < t[3] and t[1] < box[3] for t in taken)

    for (x, y, text), (px, py) in zip(labels, at, strict=True):
        width, height = 6.5 * len(text) * scale, 10 * scale
        boxes = []
        for dx, dy, side in _SPOTS:
            x0 = px + dx * scale - (width if side == "right" else 0)
            boxes.append(((x0, py + dy * scale, x0 + width, py + dy * scale + height), dx, dy, side))
        box, dx, dy, side = min(boxes, key=lambda b: clashes(b[0]))  # min keeps the first of equals
        taken.append(box)
        ax.annotate(
            text, (x, y), textcoords="offset points", xytext=(dx, dy), ha=side, fontsize=10, fontweight="bold",
            color="#1b2a4a", zorder=4,
        )  # fmt: skip


def pareto(points: Sequence[ParetoPoint], x_label: str, title: str, *, higher_better: bool) -> str:
    """Accuracy against one speed figure, a point a config with its label beside it (points within a few
    percent of each other share one, "A,C"), the Pareto-efficient ones filled, the front drawn over what they
    dominate, the baseline a square. Sized for half of a 1,400-pixel page; the page scales it to its width."""
    fig, ax = new_figure(width=6.9, height=4.4)
    for p in points:
        ax.errorbar(
            [p.x], [p.accuracy], yerr=[[max(0.0, p.accuracy - p.low)], [max(0.0, p.high - p.accuracy)]],
            marker="s" if p.baseline else "o", markersize=8, capsize=3, color="#3558a8", ecolor="#9aa9cc",
            mfc="#3558a8" if p.efficient else "white", mew=1.5, zorder=3,
        )  # fmt: skip
    low = max(0.0, min(p.low for p in points) - 0.05)
    high = min(1.0, max(p.high for p in points) + 0.05) + 0.02
    xs = [p.x for p in points]
    pad = 0.12 * ((max(xs) - min(xs)) or max(xs) or 1.0)
    left, right = min(xs) - pad, max(xs) + pad
    ax.set(xlim=(left, right), ylim=(low, high))
    if any(p.efficient for p in points):
        fx, fy = _front(points, higher_better, left, right, low)
        ax.plot(fx, fy, color="#d9822b", linewidth=2, zorder=2, label="Pareto front")
        ax.fill_between(fx, fy, low, color="#d9822b", alpha=0.08, linewidth=0, zorder=1, label="dominated")
        ax.legend(loc="best", frameon=False, fontsize=9)
    groups = _clusters([(p.x, p.accuracy, i) for i, p in enumerate(points)], ((right - left) / 1.24, high - low))
    _label(ax, [(points[g[0]].x, points[g[0]].accuracy, ",".join(points[i].label for i in sorted(g))) for g in groups])
    ax.yaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_xlabel(x_label)
    ax.set_ylabel("accuracy (95% interval)")
    ax.grid(alpha=0.25)
    ax.set_title(title, loc="left", fontsize=10)
    return svg_uri(fig)
