"""A multi-turn task's section of report.md: how its episodes ended and with which passback, accuracy by turn
index, and per episode and per step its steps, calls, tokens and times (figures.episodefigures)."""

from __future__ import annotations

from qualeval.records import Distribution, EpisodeFigures, EpisodeSides, RunSummary
from qualeval.report.numbers import pct

__all__ = ["EPISODE_NOTE", "compare_episode_rows", "episode_markdown", "episode_parts"]

EPISODE_NOTE = (
    "Accuracy by turn index: each turn judged on its own, over the episodes that reached it (an episode stopped "
    "at an endpoint error is left out). Times leave out the warm-up episode, as the Speed table does. A task run "
    "at several levels (load levels, stream parity's two sides) has a part per level."
)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "–"


def _dist(d: Distribution | None, unit: str = "") -> str:
    return "–" if d is None else f"{d.mean:,.1f}{unit} mean, {d.p50:,.1f} / {d.p90:,.1f} p50 / p90"


def _bullets(f: EpisodeFigures) -> list[str]:
    return [
        f"ended: {_counts(f.ended)}; reasoning passed back: {_counts(f.passback)}",
        f"failed by: {_counts(f.error_types)}",
        f"per episode: steps {_dist(f.steps)}; calls {_dist(f.calls)}",
        f"per episode: reasoning tokens {_dist(f.reasoning_tokens)}; answer tokens {_dist(f.answer_tokens)}",
        f"time: per episode {_dist(f.episode_ms, ' ms')}; per step {_dist(f.step_ms, ' ms')}",
        f"first executable call of a step: {_dist(f.first_call_ms, ' ms')}",
    ]


def episode_parts(summary: RunSummary) -> list[tuple[str, list[str], list[tuple[str, str, str, str]]]]:
    """Per multi-turn task (report.md and report.html alike): its heading, its lines, and its accuracy by turn
    index as rows (turn, judged, right, accuracy)."""
    parts = []
    for name, task in summary.tasks.items():
        if task.episodes is None:
            continue
        levels = {f"{name} @ {label}": lv.episodes for label, lv in task.levels.items() if lv.episodes is not None}
        for label, f in (levels or {name: task.episodes}).items():
            rows = [(str(t.turn), str(t.n), str(t.right), pct(t.share)) for t in f.by_turn]
            parts.append((f"{label}: {f.episodes} episodes", _bullets(f), rows))
    return parts


def episode_markdown(summary: RunSummary) -> list[str]:
    """The "Episodes" section of report.md; nothing for a run with no multi-turn task."""
    parts = episode_parts(summary)
    if not parts:
        return []
    lines = ["", "## Episodes", "", EPISODE_NOTE]
    for heading, bullets, rows in parts:
        lines += ["", f"### {heading}", "", *(f"- {b}" for b in bullets)]
        if rows:
            lines += ["", "| turn | judged | right | accuracy |", "|---:|---:|---:|---:|"]
            lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def compare_episode_rows(sides: EpisodeSides) -> list[tuple[str, str, str, str]]:
    """A multi-turn task's rows in compare's table: the passback each run applied, then accuracy by turn index
    (over the episodes that reached the turn in both runs) with B - A per turn."""
    a, b = (_counts(side) for side in sides.passback)
    rows = [("reasoning passed back", a, b, "differs" if sides.passback_differs else "same")]
    for t in sides.by_turn:
        rows.append(
            (
                f"turn {t.turn} accuracy ({t.n} reached in both)",
                pct(t.right_a / t.n),
                pct(t.right_b / t.n),
                f"{t.difference:+.1%}  McNemar p={t.p_value:.3g}",
            )
        )
    return rows
