"""board.md, and what the terminal and board.html share with it, from a Board (qualeval.figures.board computes
it): each config under its short label, a key naming the settings each label stands for, per task one row a
config, and which differences from the baseline are beyond noise."""

from __future__ import annotations

from typing import Literal

from pydantic import JsonValue

from qualeval.records import Board, BoardTask, ConfigFigures, Distribution
from qualeval.report.numbers import num, pct
from qualeval.report.tool_sections import BOARD_TOOL_HEAD, TOOL_NOTE, board_tool_rows

__all__ = [
    "HEAD",
    "SPEEDS",
    "Tone",
    "beyond_line",
    "board_markdown",
    "heads",
    "key_rows",
    "notes",
    "rows",
    "setting_text",
    "speed_name",
    "tied",
    "tone",
    "tone_words",
]

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

SPEEDS = {
    "ttft_p50": "TTFT p50",
    "first_answer_p50": "first answer p50",
    "latency_p50": "latency p50",
    "output_tps": "output tok/s",
}
"""Each speed ratio of a config against the baseline's, as a person names it."""

_SENT = frozenset(
    {"temperature", "top_p", "top_k", "min_p", "presence_penalty", "max_tokens", "thinking", "reasoning_effort"}
    | {"thinking_budget", "reasoning_format", "constraint_style"}
)
"""Settings qualeval sends in the request: left unset, the server's own default applies."""

Tone = Literal["better", "worse", "within", "untested"]


def heads(board: Board, head: tuple[str, ...] = HEAD) -> tuple[str, ...]:
    """The columns' titles: output tok/s is per request on an open-loop board (`Board.per_request`)."""
    return tuple(f"{h} per request" if h == "output tok/s" and board.per_request else h for h in head)


def setting_text(key: str, value: JsonValue) -> str:
    """A setting's value as a person reads it: unset (null, an empty list) is "server default" for what the
    request would carry and "not set" for the rest; a list of one is its value; on and off for a switch."""
    if value is None or value == [] or value == {}:
        return "server default" if key in _SENT or key.startswith("sampling.") else "not set"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ", ".join(setting_text(key, v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def key_rows(board: Board) -> list[tuple[str, str, str]]:
    """Per config: its label, the settings it differs from the others in ("temperature 0.7; max_tokens server
    default", or none where only the folders differ), its folder."""
    out = []
    for run in board.runs:
        settings = "; ".join(f"{k}: {setting_text(k, v)}" for k, v in run.settings.items())
        out.append((run.name, settings or "no setting differs (the folders do)", run.path))
    return out


def tone(board: Board, c: ConfigFigures, measure: str) -> Tone:
    """How a config's `measure` (accuracy, or one of SPEEDS) stands against the baseline's: better or worse
    beyond noise, within it, or not tested (no pairs; a speed figure with no interval, or not comparable).
    Accuracy: the config's `within_noise`, the one reading compare and gate make too (figures.noise read_noise:
    the Holm-adjusted McNemar test against the baseline and, with a rerun, larger than the rerun moved). Speed:
    its `within_noise`, compare's reading too (figures.noise read_speed: the ratio's bootstrap interval excludes
    1 and, with a rerun, the ratio as a factor is beyond the rerun's spread)."""
    if measure == "accuracy":
        if c.difference is None or c.within_noise is None:
            return "untested"
        if c.within_noise or c.difference == 0:
            return "within"
        return "better" if c.difference > 0 else "worse"
    ratio = c.speed.get(measure)
    if ratio is None or ratio.within_noise is None:
        return "untested"
    if ratio.within_noise:
        return "within"
    return "better" if (ratio.ratio > 1) == (measure == "output_tps") else "worse"


def tone_words(board: Board) -> dict[str, str]:
    """The legend of the tones (better, worse, within; untested is shown as within) and how `tone` decides
    them ("how"): said beside the one function that reads "beyond noise"."""
    speed = "a speed ratio: its 95% paired bootstrap interval excludes ×1" + (
        ", and it is beyond the spread the baseline's rerun showed on its own"
        if board.rerun is not None
        else " (no rerun of the baseline, --rerun, to hold it against the machine's own spread)"
    )
    return {
        "better": "better than the baseline beyond noise",
        "worse": "worse than the baseline beyond noise",
        "within": "within noise, or not judged",
        "how": (
            f"Accuracy: McNemar's exact test against the baseline, {board.correction.capitalize()}-corrected, "
            f"p < {board.alpha:g}"
            + (", and larger than the baseline's rerun moved on its own" if board.rerun is not None else "")
            + f"; {speed}."
        ),
    }


def beyond_line(board: Board, task: BoardTask) -> str:
    """Which configs differ from the baseline beyond noise, on what, by how much: the table in one sentence."""
    beyond = ("better", "worse")
    found = []
    for name, c in task.configs.items():
        moved = [f"accuracy {100 * (c.difference or 0):+.1f} pts"] if tone(board, c, "accuracy") in beyond else []
        moved += [f"{speed_name(board, m)} ×{r.ratio:.2f}" for m, r in c.speed.items() if tone(board, c, m) in beyond]
        found += [f"{name}: {', '.join(moved)}"] if moved else []
    unheld = " (speed not held against a rerun of the baseline)" if board.rerun is None else ""
    return f"Beyond noise against {board.baseline}{unheld}: {'; '.join(found) or 'nothing'}."


def _p50_p99(d: Distribution | None) -> str:
    return "–" if d is None else f"{d.p50:,.0f} / {d.p99:,.0f}"


def speed_name(board: Board, measure: str) -> str:
    """A speed figure as a person names it; output tok/s per request on an open-loop board."""
    name = SPEEDS.get(measure, measure)
    return f"{name} per request" if measure == "output_tps" and board.per_request else name


def _speed(board: Board, c: ConfigFigures) -> str:
    """Each ratio with its interval and how it reads (≈: within noise, so not shown to be the config's)."""
    parts = []
    for name, r in c.speed.items():
        if r.not_comparable is not None:
            parts.append(f"{speed_name(board, name)} not comparable ({r.not_comparable})")
            continue
        shown = f" [{r.low:.2f}, {r.high:.2f}]" if r.low is not None and r.high is not None else ""
        mark = {None: " (not read)", True: " ≈ (within noise)", False: " (beyond noise)"}[r.within_noise]
        parts.append(f"{speed_name(board, name)} ×{r.ratio:.2f}{shown}{mark}")
    return "; ".join(parts) or "–"


def _versus(board: Board, name: str, c: ConfigFigures) -> str:
    if name == board.baseline:
        return "baseline"
    if c.difference is None or c.p_adjusted is None:
        return "–"
    return f"{100 * c.difference:+.1f} pts (p {c.p_adjusted:.3g}, {c.pairs} pairs)"


def tied(task: BoardTask, name: str, c: ConfigFigures) -> str:
    if c.tied_with_best is None:
        return "–"
    return "best" if name == task.best else ("yes" if c.tied_with_best else "no")


def rows(board: Board, task: BoardTask) -> list[list[str]]:
    """One row of HEAD a config, named by its label."""
    out = []
    for name, c in task.configs.items():
        a = c.accuracy
        accuracy = "not scored" if a is None else f"{pct(a.accuracy)} [{pct(a.low)}, {pct(a.high)}]"
        if c.endpoint_errors:
            accuracy += f" ({c.endpoint_errors} endpoint errors left out)"
        if c.unknown_questions:
            accuracy += f" ({c.unknown_questions} unknown questions left out)"
        out.append(
            [
                name,
                accuracy,
                _versus(board, name, c),
                tied(task, name, c),
                f"{num(c.reasoning_tokens)} / {num(c.answer_tokens)}",
                pct(c.truncated),
                _p50_p99(c.ttft),
                _p50_p99(c.first_answer),
                _p50_p99(c.latency),
                num(c.output_tps),
                pct(c.spec_acceptance),
                num(c.correct_per_minute),
                _speed(board, c),
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
        out.append(
            "No rerun of the baseline: speed ratios are read on their bootstrap interval alone, not held against "
            "run-to-run spread."
        )
    if board.streams:
        out.append(f"Stream parity: {board.streams}.")
    if board.per_request:
        out.append(
            "Open-loop runs (a set arrival rate): output tok/s is the mean of each request's, since the aggregate "
            "is the arrival rate's whatever the config."
        )
    cached = sorted({n for c in task.configs.values() for n, r in c.speed.items() if r.not_comparable == "cached"})
    if cached:
        out.append(
            f"Not comparable (cached): {', '.join(speed_name(board, n) for n in cached)} where one side's prompts "
            "were served from a prefix cache the other's were not: the figure measured cache hits."
        )
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def board_markdown(board: Board) -> str:
    lines = ["# qualeval board", "", "| config | settings that differ | folder |", "|---|---|---|"]
    for label, settings, path in key_rows(board):
        role = " (baseline)" if label == board.baseline else ""
        lines.append(f"| **{_cell(label)}**{role} | {_cell(settings)} | `{_cell(path)}` |")
    if board.rerun is not None:
        lines += ["", f"Rerun of the baseline: `{board.rerun}`"]
    if any(r.simulated for r in board.runs):
        lines += ["", "**Simulated server**: at least one run is against qualeval's reference server."]
    for name, task in board.tasks.items():
        lines += ["", f"## {name}", "", "| " + " | ".join(heads(board)) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows(board, task)]
        lines += ["", beyond_line(board, task), "", *notes(board, task)]
        if tools := board_tool_rows(task):  # a tool-call task: its figures per config, below the main table
            lines += ["", f"### {name}: tool calls", "", "| " + " | ".join(BOARD_TOOL_HEAD) + " |"]
            lines += ["|" + "---|" * len(BOARD_TOOL_HEAD)] + ["| " + " | ".join(map(_cell, r)) + " |" for r in tools]
            lines += ["", TOOL_NOTE]
    return "\n".join(lines) + "\n"
