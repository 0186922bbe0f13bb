"""`qualeval compare`'s terminal view: the settings that differ, each task's pairs against noise, the flipped
items, the server metrics side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from qualeval.cli.output import note, stdout

if TYPE_CHECKING:
    from qualeval.records import Comparison, TaskComparison

__all__ = ["print_comparison"]

_SIMULATED = "  [SIMULATED server]"


def _setting(value: object) -> str:
    import json

    return "not set" if value is None else value if isinstance(value, str) else json.dumps(value)


def _settings(result: Comparison) -> None:
    """What the two runs differ in, before any figure: a comparison is of those settings and nothing else."""
    if not result.settings:
        note("the two runs have the same settings (out aside)")
        return
    table = Table("setting that differs", "A", "B", title="settings, A against B", title_justify="left")
    for name, (va, vb) in result.settings.items():
        table.add_row(name, _setting(va), _setting(vb))
    stdout().print(table)


def _pairs_title(name: str, t: TaskComparison, simulated: bool) -> str:
    pairs = "pair" if t.warmup_pairs == 1 else "pairs"
    warm = f" ({t.warmup_pairs} warm-up {pairs}: in accuracy, not in speed)" if t.warmup_pairs else ""
    return f"{name}: {t.pairs} paired items{warm}" + (_SIMULATED if simulated else "")


def _accuracy_against_noise(table: Table, t: TaskComparison) -> None:
    """The accuracy difference, its reading against noise (the words board and gate print too), and what these
    items could detect at all, as information."""
    if not t.scored:
        table.add_row("accuracy", "–", "–", "not scored (synthetic prompts)")
        return
    table.add_row(
        "accuracy",
        f"{t.accuracy_a:.1%}",
        f"{t.accuracy_b:.1%}",
        f"{t.difference:+.1%}  [{t.low:+.1%}, {t.high:+.1%}]  McNemar p={t.p_value:.3g}",
    )
    if t.noise_reading is not None:
        table.add_row("B - A against noise", "", "", t.noise_reading)
    shown = (
        "no difference at all (too few pairs)"
        if t.detectable is None
        else f"{t.detectable:.1%} or more (McNemar, alpha 0.05, power 0.8)"
    )
    table.add_row("these items can detect", "", "", shown)


def print_comparison(result: Comparison, show: int) -> None:
    """The settings that differ; per task, A against B with intervals and the flipped items (at most `show`
    each), no accuracy for a task that is not scored; then server metrics."""
    console = stdout()
    _settings(result)
    for name, t in result.tasks.items():
        table = Table(
            "measure", "A", "B", "B vs A", title=_pairs_title(name, t, result.simulated), title_justify="left"
        )
        _accuracy_against_noise(table, t)
        for metric, r in t.ratios.items():
            said = f"  {r.reading.partition(':')[0]}" if r.reading else ""  # within/beyond noise, not comparable
            shown = f"×{r.ratio:.3f}" + (f"  [{r.low:.3f}, {r.high:.3f}]" if r.low is not None else "")
            label = metric if r.statistic == "aggregate" else f"{metric} (mean)"  # which statistic: board reads p50
            table.add_row(label, f"{r.a:,.1f}", f"{r.b:,.1f}", f"{shown}{said}")
        for metric, why in t.unread.items():
            table.add_row(metric if metric == "output tokens/s (aggregate)" else f"{metric} (mean)", "", "", why)
        if t.tools is not None:  # a tool-call task: its figures side by side, the wire statuses counted B - A
            from qualeval.report import compare_tool_rows

            for row in compare_tool_rows(t.tools):
                table.add_row(*row)
        if t.episodes is not None:  # a multi-turn task: the passback applied, accuracy by turn index, B - A
            from qualeval.report import compare_episode_rows

            for row in compare_episode_rows(t.episodes):
                table.add_row(*row)
        if t.scored:
            table.add_row(
                "flipped right → wrong", "", "", f"{t.a_right_b_wrong}: {', '.join(t.flipped_to_wrong[:show])}"
            )
            table.add_row(
                "flipped wrong → right", "", "", f"{t.a_wrong_b_right}: {', '.join(t.flipped_to_right[:show])}"
            )
        if any(t.endpoint_errors):
            ea, eb = t.endpoint_errors
            table.add_row(
                "no answer of the model's (pairs left out)", str(ea), str(eb), "endpoint errors, unknown questions"
            )
        console.print(table)
        if t.episodes is not None and t.episodes.figure is not None:
            note(f"{name}: {t.episodes.figure}")
    if result.unpaired_a or result.unpaired_b:  # figures are over the shared items only: say what was left out
        note(
            f"{result.unpaired_a} item(s) only in A and {result.unpaired_b} only in B are in no figure above: the "
            "runs did not run the same items (another --limit, --sample-seed or data)"
        )
    from qualeval.report import compare_lines

    for line in compare_lines(result):
        note(line)
    for name, (ea, eb) in result.unanswered.items():
        note(f"{name}: nothing to compare, no pair had both runs' model answer (A {ea}, B {eb} without one)")
    for name, n in result.noise.items():
        note(
            f"{name}: A against its rerun: {n.identical:.0%} of {n.pairs} outputs byte-identical, {n.discordant} "
            f"discordant pairs, A2 - A {n.difference:+.1%} (B - A must also move more than this to be beyond noise)"
        )
    _server_table(result)


def _server_table(result: Comparison) -> None:
    """The server metrics side by side ("–" where a run has none), then each task's accuracy and TTFT p99 over its
    paired items in a table of their own (`result.server` holds both: a task's row under "server metric" read as
    if the server had reported it), then why a run has none."""
    accuracy = {f"{name}: accuracy" for name in result.tasks}
    tasks = accuracy | {f"{name}: TTFT p99 (ms)" for name in result.tasks}
    metrics = {k: v for k, v in result.server.items() if k not in tasks}
    figures = {k: v for k, v in result.server.items() if k in tasks}
    for head, title, rows in (
        ("server metric", "server metrics, side by side", metrics),
        ("task (paired items)", "beside them, each task's accuracy and TTFT p99", figures),
    ):
        if not rows:
            continue
        table = Table(head, "A", "B", title=title, title_justify="left")
        for name, pair in rows.items():
            shown = ("–" if v is None else f"{v:.1%}" if name in accuracy else f"{v:,.3f}" for v in pair)
            table.add_row(name, *shown)
        stdout().print(table)
    for line in result.server_notes:
        note(line)
