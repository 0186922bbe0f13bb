"""A multi-turn task's section of report.md: how its episodes ended and with which passback, accuracy by turn
index, and per episode and per step its steps, calls, tokens and times (figures.episodefigures)."""

from __future__ import annotations

from qualeval.records import Distribution, EpisodeFigures, RunSummary
from qualeval.report.numbers import pct

__all__ = ["episode_markdown"]


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "–"


def _dist(d: Distribution | None, unit: str = "") -> str:
    return "–" if d is None else f"{d.mean:,.1f}{unit} mean, {d.p50:,.1f} / {d.p90:,.1f} p50 / p90"


def _task(name: str, f: EpisodeFigures) -> list[str]:
    lines = [
        "",
        f"### {name}: {f.episodes} episodes",
        "",
        f"- ended: {_counts(f.ended)}; reasoning passed back: {_counts(f.passback)}",
        f"- failed by: {_counts(f.error_types)}",
        f"- per episode: steps {_dist(f.steps)}; calls {_dist(f.calls)}",
        f"- per episode: reasoning tokens {_dist(f.reasoning_tokens)}; answer tokens {_dist(f.answer_tokens)}",
        f"- time: per episode {_dist(f.episode_ms, ' ms')}; per step {_dist(f.step_ms, ' ms')}",
        f"- first executable call of a step: {_dist(f.first_call_ms, ' ms')}",
    ]
    if f.by_turn:
        lines += ["", "| turn | judged | right | accuracy |", "|---:|---:|---:|---:|"]
        lines += [f"| {t.turn} | {t.n} | {t.right} | {pct(t.share)} |" for t in f.by_turn]
    return lines


def episode_markdown(summary: RunSummary) -> list[str]:
    """The "Episodes" section of report.md; nothing for a run with no multi-turn task."""
    tasks = [(name, t.episodes) for name, t in summary.tasks.items() if t.episodes is not None]
    if not tasks:
        return []
    lines = ["", "## Episodes", "", "Accuracy by turn index: each turn judged on its own, over the episodes "
             "that reached it (an episode stopped at an endpoint error is left out)."]  # fmt: skip
    return lines + [line for name, figures in tasks for line in _task(name, figures)]
