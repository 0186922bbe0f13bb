"""board.html: the board as a page to decide from. Configs go by their short labels with a key at the top;
each task's table fits a 1,400-pixel window; each difference from the baseline is a signed number (points, or a
ratio ×) coloured where it is beyond noise (board_pages.tone decides); and the Pareto plots, one a speed figure,
fill their half of the page with every point labelled and the front drawn. Self-contained: styles and plots are
inline, nothing is fetched."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from qualeval.figures import judged
from qualeval.records import Board, BoardTask, ConfigFigures, Distribution, SpeedRatio
from qualeval.report.board_pages import Tone, beyond_line, heads, key_rows, notes, setting_text, tied, tone, tone_words
from qualeval.report.html import warn
from qualeval.report.numbers import num, pct
from qualeval.report.plots import ParetoPoint, pareto
from qualeval.report.tool_sections import BOARD_TOOL_HEAD, TOOL_NOTE, board_tool_rows

__all__ = ["COLUMNS", "board_html"]

COLUMNS = (
    "config",
    "accuracy",
    "Δ accuracy",
    "tied with best",
    "tokens reasoning / answer",
    "truncated",
    "TTFT p50 ms",
    "first answer p50 ms",
    "latency p50 ms",
    "output tok/s",
    "correct / min",
    "spec. acceptance",
    "Pareto-efficient on",
)
_WORDS = frozenset({"config", "tied with best", "Pareto-efficient on"})
"""The columns of words, left-aligned; the rest are figures, right-aligned and kept on one line."""


@dataclass(frozen=True)
class Cell:
    main: str
    delta: str = ""
    """The difference from the baseline: points, or a ratio ×."""
    tone: Tone = "untested"
    sub: str = ""
    """Under the figure, smaller: its interval, test or tail."""
    note: str = ""
    """Under that, wrapped: what was left out of the figure."""


def _signed(x: float, unit: str) -> str:
    return f"{x:+.1f}{unit}".replace("-", "−")  # a minus sign, as wide as the plus


def _timed(board: Board, c: ConfigFigures, d: Distribution | None, measure: str) -> Cell:
    if d is None:
        return Cell("–")
    r = c.speed.get(measure)
    return Cell(f"{d.p50:,.0f}", _delta(r), tone(board, c, measure), f"p99 {d.p99:,.0f}")


def _delta(r: SpeedRatio | None) -> str:
    """The ratio to the baseline's, or why there is none to read (a prefix cache on one side only)."""
    if r is None:
        return ""
    return f"not comparable ({r.not_comparable})" if r.not_comparable is not None else f"×{r.ratio:.2f}"


def _accuracy(c: ConfigFigures) -> Cell:
    a = c.accuracy
    if a is None:
        return Cell("not scored")
    left = [f"{n} {what} left out" for n, what in ((c.endpoint_errors, "endpoint errors"),
                                                  (c.unknown_questions, "unknown questions")) if n]  # fmt: skip
    share = judged(a)
    if share is None:  # nothing answered: no share and no interval, rather than 0%
        return Cell("–", sub="nothing judged", note="; ".join(left))
    return Cell(pct(share[0]), sub=f"{100 * share[1]:.1f}–{pct(share[2])}", note="; ".join(left))


def _versus(board: Board, name: str, c: ConfigFigures) -> Cell:
    if c.accuracy is None:  # not scored: no difference to show, and no column for it
        return Cell("–")
    if name == board.baseline:
        return Cell("baseline")
    if c.difference is None or c.p_adjusted is None:
        return Cell("–")
    return Cell(
        "", _signed(100 * c.difference, " pts"), tone(board, c, "accuracy"), f"p {c.p_adjusted:.2g} · {c.pairs} pairs"
    )


def _cells(board: Board, task: BoardTask, name: str, c: ConfigFigures) -> list[Cell]:
    through = c.speed.get("output_tps")
    on = [axis for axis, yes in (("tok/s", c.pareto_throughput), ("first answer", c.pareto_first_answer)) if yes]
    return [
        Cell(name, sub="baseline" if name == board.baseline else ""),
        _accuracy(c),
        _versus(board, name, c),
        Cell(tied(task, name, c)),
        Cell(
            "–"
            if c.reasoning_tokens is None and c.answer_tokens is None
            else f"{num(c.reasoning_tokens)} / {num(c.answer_tokens)}"
        ),
        Cell(pct(c.truncated)),
        _timed(board, c, c.ttft, "ttft_p50"),
        _timed(board, c, c.first_answer, "first_answer_p50"),
        _timed(board, c, c.latency, "latency_p50"),
        Cell(num(c.output_tps), _delta(through), tone(board, c, "output_tps")),
        Cell(num(c.correct_per_minute)),
        Cell(pct(c.spec_acceptance)),
        Cell(", ".join(on) or "–"),
    ]


def _table(board: Board, task: BoardTask) -> tuple[list[tuple[str, bool]], list[list[Cell]]]:
    """The columns (title, whether figures) and rows, leaving out a column no config has a figure in (spec.
    acceptance on a server that drafts nothing): the room goes to the figures there are."""
    table = [_cells(board, task, name, c) for name, c in task.configs.items()]
    keep = [i for i, _ in enumerate(COLUMNS) if i < 2 or any(r[i].main not in ("–", "") or r[i].delta for r in table)]
    titles = heads(board, COLUMNS)
    return [(titles[i], COLUMNS[i] not in _WORDS) for i in keep], [[row[i] for i in keep] for row in table]


def _plots(board: Board, task: BoardTask, name: str) -> list[tuple[str, str, str]]:
    """Accuracy against output tok/s and against first-answer latency: (alt text, SVG data URI, the configs
    left off it for want of a figure) each. A plot that fails is left out with a warning, as report.html's are."""
    if not task.scored:
        return []
    each = " per request" if board.per_request else ""  # an open-loop run's aggregate is its arrival rate's
    axes = (
        (f"output tok/s{each}", f"output tokens per second{each} (tok/s), higher is better", True, "pareto_throughput"),
        ("first-answer p50", "first-answer latency p50 (ms), lower is better", False, "pareto_first_answer"),
    )
    out = []
    for short, x_label, higher, marked in axes:
        points, missing = [], []
        for config, c in task.configs.items():
            share = judged(c.accuracy) if c.accuracy is not None else None
            x = c.output_tps if higher else (c.first_answer.p50 if c.first_answer else None)
            if share is None or x is None:
                missing.append(config)
                continue
            points.append(ParetoPoint(config, x, *share, bool(getattr(c, marked)), config == board.baseline))
        title = f"{name}: accuracy against {short}"
        try:
            uri = pareto(points, x_label, title, higher_better=higher) if points else None
        except Exception as exc:  # matplotlib raises many kinds; any of them costs this plot only
            warn(f"plot {title!r} left out: {type(exc).__name__}: {exc}")
            uri = None
        if uri is not None:
            front = ", ".join(p.label for p in points if p.efficient)
            absent = f"Not on this plot (no accuracy or no {short}): {', '.join(missing)}." if missing else ""
            out.append((f"{title}; Pareto front through {front}", uri, absent))
    return out


def _breakable(value: str) -> tuple[str, bool]:
    """A key's value, and whether it may break anywhere: a long run of letters without a space (an address, a
    list of them) would otherwise widen the page; a short word never breaks."""
    return value, any(len(word) > 24 for word in value.split())


def board_html(board: Board) -> str:
    from jinja2 import Environment, StrictUndefined, select_autoescape

    # autoescaped as the run report is: labels, settings and folders come from the user
    env = Environment(autoescape=select_autoescape(default=True), undefined=StrictUndefined, trim_blocks=True)
    template = env.from_string(
        (resources.files("qualeval.report") / "templates" / "board.html").read_text(encoding="utf-8")
    )
    settings = list(dict.fromkeys(k for run in board.runs for k in run.settings))
    key = [
        (run.name, [_breakable(setting_text(k, run.settings.get(k))) for k in settings], run.path, text)
        for run, (_, text, _) in zip(board.runs, key_rows(board), strict=True)
    ]
    tasks = [
        (name, *_table(board, task), beyond_line(board, task), notes(board, task), _plots(board, task, name))
        for name, task in board.tasks.items()
    ]
    heads = [re.findall(r"[^._]+[._]?", k) for k in settings]  # sample_seed may break after its _, not inside a word
    tools = {name: board_tool_rows(task) for name, task in board.tasks.items()}  # a tool-call task's own table
    return template.render(
        b=board, heads=heads, key=key, legend=tone_words(board), tasks=tasks, tools=tools, tool_head=BOARD_TOOL_HEAD,
        tool_note=TOOL_NOTE,
    )  # fmt: skip
