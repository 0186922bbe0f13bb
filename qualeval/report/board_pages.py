"""board.md and a self-contained board.html from a Board (qualeval.figures.board computes it): per task one row a
config, and the Pareto plots of accuracy against throughput and against first-answer latency."""

from __future__ import annotations

from importlib import resources

from qualeval.figures import judged
from qualeval.records import Board, BoardTask, ConfigFigures, Distribution
from qualeval.report.numbers import num, pct
from qualeval.report.plots import new_figure, svg_uri

__all__ = ["HEAD", "board_html", "board_markdown", "notes", "pareto_plot", "rows"]

HEAD = (
    "config",
    "accuracy [95%]",
    "vs baseline (Holm p)",
    "tied with best",
    "tokens reasoning / answer",
    "truncated",
    "TTFT p50 / p99 ms",
    "first answer p50 / p99 ms",
    "latency p50 / p99 ms",
    "output tok/s",
    "spec. acceptance",
    "correct / min",
    "speed vs baseline",
)


def _p50_p99(d: Distribution | None) -> str:
    return "–" if d is None else f"{d.p50:,.0f} / {d.p99:,.0f}"


def _speed(c: ConfigFigures) -> str:
    """Each ratio, and against the rerun's spread where there is one (≈: within it, so not shown to be the config)."""
    parts = []
    for name, r in c.speed.items():
        mark = (
            ""
            if r.within_spread is None
            else (" ≈ (within rerun spread)" if r.within_spread else " (beyond rerun spread)")
        )
        parts.append(f"{name} ×{r.ratio:.2f}{mark}")
    return "; ".join(parts) or "–"


def _versus(board: Board, name: str, c: ConfigFigures) -> str:
    if name == board.baseline:
        return "baseline"
    if c.difference is None or c.p_adjusted is None:
        return "–"
    return f"{100 * c.difference:+.1f} pts (p {c.p_adjusted:.3g}, {c.pairs} pairs)"


def rows(board: Board, task: BoardTask) -> list[list[str]]:
    out = []
    for name, c in task.configs.items():
        a = c.accuracy
        accuracy = "not scored" if a is None else f"{pct(a.accuracy)} [{pct(a.low)}, {pct(a.high)}]"
        if c.endpoint_errors:
            accuracy += f" ({c.endpoint_errors} endpoint errors left out)"
        if c.unknown_questions:
            accuracy += f" ({c.unknown_questions} unknown questions left out)"
        tied = (
            "–"
            if c.tied_with_best is None
            else ("best" if name == task.best else ("yes" if c.tied_with_best else "no"))
        )
        out.append(
            [
                name,
                accuracy,
                _versus(board, name, c),
                tied,
                f"{num(c.reasoning_tokens)} / {num(c.answer_tokens)}",
                pct(c.truncated),
                _p50_p99(c.ttft),
                _p50_p99(c.first_answer),
                _p50_p99(c.latency),
                num(c.output_tps),
                pct(c.spec_acceptance),
                num(c.correct_per_minute),
                _speed(c),
            ]
        )
    return out


def notes(board: Board, task: BoardTask) -> list[str]:
    """What the table's figures are of, in words."""
    method = board.correction.capitalize()
    out = [
        f"Differences are paired against the baseline ({board.baseline}); p is McNemar's exact test, "
        f'{method}-corrected for {len(task.configs) - 1} configs. "best": the config most ahead of the baseline on '
        f'the items both answered; "tied with best": McNemar against it, {method}-corrected, does not reject at '
        f"{board.alpha:g}."
    ]
    if task.noise is not None:
        n = task.noise
        out.append(
            f"The baseline's rerun: {100 * n.difference:+.1f} pts on {n.pairs} pairs ({n.discordant} discordant); "
            f"smallest detectable difference {pct(n.detectable)}."
        )
    elif board.rerun is None:
        out.append("No rerun of the baseline: speed ratios are not held against run-to-run spread.")
    return out


def board_markdown(board: Board) -> str:
    lines = ["# qualeval board", ""]
    lines += [f"- {'**baseline** ' if r.name == board.baseline else ''}{r.name}: `{r.path}`" for r in board.runs]
    if any(r.simulated for r in board.runs):
        lines += ["", "**Simulated server**: at least one run is against qualeval's reference server."]
    for name, task in board.tasks.items():
        lines += ["", f"## {name}", "", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows(board, task)]
        lines += ["", *notes(board, task)]
    return "\n".join(lines) + "\n"


def pareto_plot(task: BoardTask, name: str) -> str | None:
    """Accuracy against output tok/s and against first-answer p50, one point a config, efficient ones filled."""
    if not task.scored:
        return None
    fig, axes = new_figure(width=9.0, height=3.4 + 0.25 * len(task.configs))
    fig.delaxes(axes)
    panels = (
        (lambda c: c.output_tps, "pareto_throughput", "output tok/s"),
        (lambda c: c.first_answer.p50 if c.first_answer else None, "pareto_first_answer", "first answer p50 (ms)"),
    )
    for i, (cost, marked, label) in enumerate(panels):
        ax = fig.add_subplot(1, 2, i + 1)
        ax.spines[["top", "right"]].set_visible(False)
        for k, (config, c) in enumerate(task.configs.items()):
            x, a = cost(c), judged(c.accuracy) if c.accuracy is not None else None
            if x is None or a is None:
                continue
            colour = f"C{k % 10}"  # one colour a config, named in the legend: names are too long to label points
            share, low, high = a
            yerr = [[max(0.0, share - low)], [max(0.0, high - share)]]
            ax.errorbar(
                [x], [share], yerr=yerr, marker="o", capsize=3, color=colour,
                mfc=colour if getattr(c, marked) else "white", label=config if i == 0 else None,
            )  # fmt: skip
        ax.set_xlabel(label)
        ax.set_ylabel("accuracy")
        ax.set_ylim(0, 1)
        if i == 0:  # below the axes, where the layout makes room for it
            ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), fontsize=7, frameon=False)
    fig.suptitle(f"{name}: accuracy against speed (filled: Pareto-efficient)")
    return svg_uri(fig)


def board_html(board: Board) -> str:
    from jinja2 import Environment, StrictUndefined, select_autoescape

    # autoescaped as the run report is: config names come from manifests, which a user writes
    env = Environment(autoescape=select_autoescape(default=True), undefined=StrictUndefined, trim_blocks=True)
    template = env.from_string(
        (resources.files("qualeval.report") / "templates" / "board.html").read_text(encoding="utf-8")
    )
    tasks = [
        (name, rows(board, task), notes(board, task), pareto_plot(task, name)) for name, task in board.tasks.items()
    ]
    return template.render(b=board, head=HEAD, tasks=tasks)
