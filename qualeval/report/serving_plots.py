"""Plots of the serving sections, as SVG data URIs (qualeval.report.plots makes the figure and encodes it)."""

from __future__ import annotations

from pathlib import Path

from qualeval.figures import judged
from qualeval.records import ContextFigures, SeriesPoint
from qualeval.report.plots import new_figure, svg_uri
from qualeval.serving import read_series

__all__ = ["by_length", "over_time"]

ROLLING_S = 10
"""Rolling accuracy over the answers scored in the last this-many seconds."""


def by_length(context: ContextFigures) -> str | None:
    """Accuracy (with its interval) and TTFT p50 against the context length, one line per task."""
    tasks = context.tasks
    if not tasks:
        return None
    fig, ax = new_figure(6.0, 3.2)
    ax2 = ax.twinx()
    for task, lengths in tasks.items():
        # a refused length has no accuracy
        measured = {k: j for k, v in lengths.items() if (j := judged(v.accuracy)) is not None}
        x = [int(k) for k in measured]
        acc = [share for share, _, _ in measured.values()]
        err = [
            [max(0.0, share - low) for share, low, _ in measured.values()],
            [max(0.0, high - share) for share, _, high in measured.values()],
        ]
        ax.errorbar(x, acc, yerr=err, marker="o", capsize=3, label=f"{task} accuracy")
        ttft = [(lengths[k].ttft or {}).get("p50") or 0.0 for k in measured]
        ax2.plot(x, [t / 1000 for t in ttft], marker="s", linestyle="--", label=f"{task} TTFT p50")
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1)
    ax2.set_ylabel("TTFT p50 (s)")
    ax.set_title("quality and time to first token at every length")
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.86), fontsize=7)  # the top middle stays clear
    return svg_uri(fig)


def _rolling(lines: list[SeriesPoint]) -> list[float | None]:
    out: list[float | None] = []
    for i, line in enumerate(lines):
        window = [x for x in lines[: i + 1] if x.t > line.t - ROLLING_S]
        scored = sum(x.scored for x in window)
        out.append(sum(x.correct for x in window) / scored if scored else None)
    return out


def over_time(root: Path) -> str | None:
    """Four panels against seconds since the start: output tok/s (client, and the server's generation
    throughput), requests in flight and queued, KV-cache usage, rolling accuracy; warm-up seconds shaded."""
    lines = list(read_series(root))
    if len(lines) < 2:
        return None
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(4, 1, figsize=(6.4, 7.2), sharex=True)
    t = [x.t for x in lines]
    axes[0].plot(t, [x.output_tokens_per_s for x in lines], label="client: output tok/s")
    servers = sorted({url for x in lines for url in x.server})
    for url in servers:
        gen = [s.generation_throughput if (s := x.server.get(url)) else None for x in lines]
        if any(g is not None for g in gen):
            axes[0].plot(t, [g if g is not None else float("nan") for g in gen], "--", label=f"server: {url}")
        kv = [s.kv_cache_usage if (s := x.server.get(url)) else None for x in lines]
        axes[2].plot(t, [k if k is not None else float("nan") for k in kv], label=url)
    axes[0].set_ylabel("tokens/s")
    axes[0].legend(fontsize=6, loc="best")
    axes[1].plot(t, [x.in_flight for x in lines], label="in flight")
    axes[1].plot(t, [x.queued for x in lines], label="queued")
    axes[1].set_ylabel("requests")
    axes[1].legend(fontsize=6)
    axes[2].set_ylabel("KV-cache usage")
    axes[2].set_ylim(0, 1)
    rolling = _rolling(lines)
    axes[3].plot(t, [r if r is not None else float("nan") for r in rolling])
    axes[3].set_ylabel(f"accuracy ({ROLLING_S}s)")
    axes[3].set_ylim(0, 1)
    axes[3].set_xlabel("seconds since the run started")
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
        for x in lines:
            if x.warmup:
                ax.axvspan(x.t - 1.0, x.t, color="#ddd", alpha=0.6, linewidth=0)
    return svg_uri(fig)
