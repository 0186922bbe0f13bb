"""Plots for the HTML report, drawn with matplotlib as SVG and embedded as data URIs (no network, no files)."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

from qualeval.figures import judged

__all__ = [
    "accuracy_by_length",
    "accuracy_vs_load",
    "frontier",
    "latency_by_outcome",
    "new_figure",
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
