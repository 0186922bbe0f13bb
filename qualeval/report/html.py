"""Reports from a run summary: report.md and a self-contained report.html.

Model output is untrusted text. The HTML template autoescapes everything, and its Content-Security-Policy
allows only the one script written here (by hash), so even a missed escape could not run code.

As in report.md (qualeval.report.markdown), a section with nothing measured is left out, and a task that is not scored
(a workload's synthetic prompts) shows nothing derived from correctness: no accuracy, plot of it or ✓/✗.
"""

from __future__ import annotations

import base64
import hashlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, StrictUndefined, select_autoescape

from qualeval.errors import QualevalWarning
from qualeval.records import NOT_THE_MODELS, Comparison, Record, RunStore, RunSummary
from qualeval.report.episode_sections import EPISODE_NOTE, compare_episode_rows, episode_parts
from qualeval.report.frontier_sections import (
    FRONTIER_HEAD,
    FRONTIER_NOTE,
    LOAD_HEAD,
    LOAD_NOTE,
    drop_warnings,
    frontier_rows,
    load_rows,
    per_level_note,
    same_spend_warnings,
    smallest_line,
    truncation_line,
)
from qualeval.report.linked import has_linked, linked_scope
from qualeval.report.markdown import (
    OFFLINE,
    cut_correct_line,
    errors_again,
    errors_cell,
    markdown_report,
    published_where,
    timed,
    unknown_line,
)
from qualeval.report.numbers import EPISODE_SPEED, at_k, dist, num, pct, requests_cell
from qualeval.report.repeats import cache_lines, compare_lines, identical_lines
from qualeval.report.serving_sections import serving_sections
from qualeval.report.speed_rows import speed_rows
from qualeval.report.tool_sections import (
    TOOL_HEAD,
    TOOL_NOTE,
    TOOL_SPEED_HEAD,
    compare_tool_rows,
    has_tools,
    tool_lines,
    tool_rows,
    tool_speed_cells,
)

__all__ = [
    "ITEM_CAP",
    "compare_html",
    "html_report",
    "warn",
    "write_reports_or_warn",
]

ITEM_CAP = 2000
"""The per-item browser shows at most this many records (wrong and unanswered first)."""

# filters the per-item browser; reads data attributes only, never model text
_SCRIPT = """
(function () {
  var keys = ["task", "outcome", "status", "level"].filter(function (k) { return document.getElementById("f-" + k); });
  var ids = keys.map(function (k) { return "f-" + k; });
  function apply() {
    var want = ids.map(function (id) { return document.getElementById(id).value; });
    var shown = 0, items = document.querySelectorAll("details.item");
    items.forEach(function (el) {
      var ok = keys.every(function (k, i) { return !want[i] || el.dataset[k] === want[i]; });
      el.classList.toggle("hidden", !ok);
      if (ok) { shown += 1; }
    });
    document.getElementById("f-count").textContent = shown + " shown";
  }
  ids.forEach(function (id) { document.getElementById(id).addEventListener("change", apply); });
  apply();
})();
"""


def _bar(value: float, low: float, high: float, width: int = 160) -> str:
    """An inline SVG bar with its interval as a whisker (numbers only: nothing here is user text)."""
    x, lo, hi = (round(width * min(max(v, 0.0), 1.0), 1) for v in (value, low, high))
    return (
        f'<svg width="{width}" height="14" role="img" aria-label="{value:.3f}">'
        f'<rect width="{width}" height="14" fill="#eef"/><rect width="{x}" height="14" fill="#6b8cde"/>'
        f'<line x1="{lo}" x2="{hi}" y1="7" y2="7" stroke="#222" stroke-width="1.5"/>'
        f'<line x1="{lo}" x2="{lo}" y1="3" y2="11" stroke="#222"/><line x1="{hi}" x2="{hi}" y1="3" y2="11" '
        'stroke="#222"/></svg>'
    )


def _environment() -> Environment:
    env = Environment(
        autoescape=select_autoescape(default=True), undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    env.globals.update(requests_cell=requests_cell, episode_speed=EPISODE_SPEED)
    env.globals.update(at_k=at_k, pct=pct, num=num, dist=dist, bar=_bar, errors_cell=errors_cell)
    env.globals.update(
        timed=timed, has_linked=has_linked, linked_scope=linked_scope, unscored=_unscored, offline_note=OFFLINE
    )
    env.globals.update(unknown_line=unknown_line, errors_again=errors_again, cut_correct_line=cut_correct_line)
    env.globals.update(frontier_rows=frontier_rows, load_rows=load_rows, smallest_line=smallest_line)
    env.globals.update(truncation_line=truncation_line, speed_rows=speed_rows)
    env.globals.update(tool_rows=tool_rows, tool_lines=tool_lines, tool_head=TOOL_HEAD, tool_note=TOOL_NOTE)
    env.globals.update(tool_speed_head=TOOL_SPEED_HEAD, tool_speed_cells=tool_speed_cells, has_tools=has_tools)
    env.globals.update(compare_tool_rows=compare_tool_rows, episode_parts=episode_parts, episode_note=EPISODE_NOTE)
    env.globals.update(compare_episode_rows=compare_episode_rows)
    env.globals.update(frontier_head=FRONTIER_HEAD, frontier_note=FRONTIER_NOTE)
    env.globals.update(
        load_head=LOAD_HEAD, load_note=LOAD_NOTE, per_level_note=per_level_note, published_where=published_where
    )
    env.tests.update(timed=timed, has_linked=has_linked)  # for `select`: the sections with something measured
    return env


def _unscored(record: Record) -> bool:
    """A synthetic prompt of a workload: it has no right answer, so it is neither right nor wrong."""
    return not record.scored


def _ordered(records: Iterable[Record], cap: int) -> list[Record]:
    """Wrong and unanswered items first, then the rest, up to `cap`."""
    bad: list[Record] = []
    good: list[Record] = []
    for record in records:
        bucket = good if record.right else bad
        if len(bucket) < cap:  # bounded memory however large the run
            bucket.append(record)
    return (bad + good)[:cap]


def warn(message: str) -> None:
    """A warning of one line: a report problem is never a reason to fail a run whose records are safe."""
    first = message.strip().splitlines()[0] if message.strip() else "unknown problem"
    warnings.warn(first, QualevalWarning, stacklevel=2)


def _figure(draw: Callable[..., str], *args: Any) -> list[str]:
    """One plot, or none: a plot that fails is left out of the report with a warning."""
    try:
        return [draw(*args)]
    except Exception as exc:  # matplotlib raises many kinds; any of them only costs this figure
        warn(f"plot {draw.__name__} for {args[-1]} left out: {type(exc).__name__}: {exc}")
        return []


def _plots(summary: RunSummary, latencies: dict[str, dict[bool, list[float]]]) -> dict[str, dict[str, list[str]]]:
    """Per task, the plots of its load levels ("load") and of speed beside quality ("linked"); a task that is not
    scored has only throughput against load."""
    from qualeval.report import plots

    out: dict[str, dict[str, list[str]]] = {}
    for name, t in summary.tasks.items():
        load, linked = [], []
        cost = _figure(plots.frontier, t.frontier.levels, name) if t.frontier else []
        if len(t.levels) > 1:
            load += _figure(plots.accuracy_vs_load, t.levels, name) if t.scored else []
            load += _figure(plots.throughput_vs_load, t.levels, name)
        by = latencies.get(name, {})
        if t.scored and (by.get(True) or by.get(False)):
            linked += _figure(plots.latency_by_outcome, by.get(True, []), by.get(False, []), name)
        if t.scored and len(t.linked.accuracy_by_reasoning_length) > 1:
            linked += _figure(plots.accuracy_by_length, t.linked.accuracy_by_reasoning_length, name)
        out[name] = {"load": load, "linked": linked, "frontier": cost}
    return out


def _latencies(records: Iterable[Record], into: dict[str, dict[bool, list[float]]]) -> Iterator[Record]:
    """Pass records through, keeping each one's latency by task and outcome for the plots."""
    for record in records:
        end = record.timing.end
        if end is not None and record.status not in NOT_THE_MODELS and not record.warmup and not _unscored(record):
            into.setdefault(record.task, {}).setdefault(record.right, []).append(end)
        yield record


def html_report(
    summary: RunSummary,
    records: Iterable[Record],
    *,
    cap: int = ITEM_CAP,
    root: Path | None = None,
    offline: bool = False,
) -> str:
    """`root`: the run directory, for the plots over time (timeseries.jsonl). `offline`: scored by `qualeval
    score` from responses made elsewhere, so nothing was timed."""
    latencies: dict[str, dict[bool, list[float]]] = {}
    items = _ordered(_latencies(records, latencies), cap)
    template = _environment().from_string(
        (resources.files("qualeval.report") / "templates" / "report.html").read_text(encoding="utf-8")
    )
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    statuses = sorted({st for t in summary.tasks.values() for st in t.summary.statuses})
    # a sweep's records of one item differ by level only: each shows it, and the browser filters by it
    levels = list(dict.fromkeys(level for t in summary.tasks.values() for level in t.levels))
    return template.render(
        s=summary,
        plots=_plots(summary, latencies),
        items=items,
        statuses=statuses,
        levels=levels if len(levels) > 1 else [],
        script=_SCRIPT,
        script_hash=digest,
        rescored=summary.rescored,
        serving=serving_sections(summary, root),
        offline=offline,
        unscored_items=any(_unscored(r) for r in items),
        drops=drop_warnings(summary),
        same_spend=same_spend_warnings(summary),
        repeats=cache_lines(summary) + identical_lines(summary),
    )


def write_reports_or_warn(
    store: RunStore, summary: RunSummary, records: Iterable[Record], *, offline: bool = False
) -> bool:
    """report.md and report.html into the store's directory, for a run or rescore whose records and summary are
    already safe on disk: a report that fails is a warning (one line on stderr), never a traceback or an exit code
    of its own. `offline`: the reports of `qualeval score`, which has no timing."""
    for name, render in (
        ("report.md", lambda: markdown_report(summary, offline=offline)),
        ("report.html", lambda: html_report(summary, records, root=store.root, offline=offline)),
    ):
        try:
            store.write_text(name, render())
        except Exception as exc:  # a report bug must not cost the user a finished run
            warn(f"{store.root / name} not written: {type(exc).__name__}: {exc}")
            return False
    return True


def compare_html(result: Comparison) -> str:
    template = _environment().from_string(
        (resources.files("qualeval.report") / "templates" / "compare.html").read_text(encoding="utf-8")
    )
    return template.render(c=result, repeats=compare_lines(result))
