"""Reports from a run summary: report.md and a self-contained report.html.

Model output is untrusted text. The HTML template autoescapes everything, and its Content-Security-Policy
allows only the one script written here (by hash), so even a missed escape could not run code.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, StrictUndefined, select_autoescape

from qualeval.records import Comparison, Distribution, Record, RunSummary, TaskReport
from qualeval.store import RunStore

__all__ = [
    "ITEM_CAP",
    "compare_html",
    "html_report",
    "markdown_report",
    "warn",
    "write_reports",
    "write_reports_or_warn",
]

ITEM_CAP = 2000
"""The per-item browser shows at most this many records (wrong and unanswered first)."""

# filters the per-item browser; reads data attributes only, never model text
_SCRIPT = """
(function () {
  var ids = ["f-task", "f-outcome", "f-status"], keys = ["task", "outcome", "status"];
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


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3g}" if abs(x) < 1 else f"{x:,.1f}"


def _dist(d: Distribution | None) -> str:
    return "–" if d is None else f"{d.p50:,.0f} / {d.p90:,.0f}"


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
    env.globals.update(pct=_pct, num=_num, dist=_dist, bar=_bar)
    return env


def _ordered(records: Iterable[Record], cap: int) -> list[Record]:
    """Wrong and unanswered items first, then the rest, up to `cap`."""
    bad: list[Record] = []
    good: list[Record] = []
    for record in records:
        bucket = good if record.score.correct else bad
        if len(bucket) < cap:  # bounded memory however large the run
            bucket.append(record)
    return (bad + good)[:cap]


def warn(message: str) -> None:
    """One line on stderr: a report problem is never a reason to fail a run whose records are safe."""
    first = message.strip().splitlines()[0] if message.strip() else "unknown problem"
    print(f"warning: {first}", file=sys.stderr, flush=True)


def _figure(draw: Callable[..., str], *args: Any) -> list[str]:
    """One plot, or none: a plot that fails is left out of the report with a warning."""
    try:
        return [draw(*args)]
    except Exception as exc:  # matplotlib raises many kinds; any of them only costs this figure
        warn(f"plot {draw.__name__} for {args[-1]} left out: {type(exc).__name__}: {exc}")
        return []


def _plots(summary: RunSummary, latencies: dict[str, dict[bool, list[float]]]) -> dict[str, list[str]]:
    from qualeval import plots

    out: dict[str, list[str]] = {}
    for name, t in summary.tasks.items():
        figures = []
        if len(t.levels) > 1:
            figures += _figure(plots.accuracy_vs_load, t.levels, name)
            figures += _figure(plots.throughput_vs_load, t.levels, name)
        by = latencies.get(name, {})
        if by.get(True) or by.get(False):
            figures += _figure(plots.latency_by_outcome, by.get(True, []), by.get(False, []), name)
        if len(t.linked.accuracy_by_reasoning_length) > 1:
            figures += _figure(plots.accuracy_by_length, t.linked.accuracy_by_reasoning_length, name)
        out[name] = figures
    return out


def _latencies(records: Iterable[Record], into: dict[str, dict[bool, list[float]]]) -> Iterator[Record]:
    """Pass records through, keeping each one's latency by task and outcome for the plots."""
    for record in records:
        end = record.timing.end
        if end is not None and record.status != "transport_error" and not record.warmup:
            into.setdefault(record.task, {}).setdefault(record.score.correct, []).append(end)
        yield record


def html_report(
    summary: RunSummary, records: Iterable[Record], *, cap: int = ITEM_CAP, root: Path | None = None
) -> str:
    """`root`: the run directory, for the plots over time (timeseries.jsonl)."""
    from qualeval.loadreport import serving_sections

    latencies: dict[str, dict[bool, list[float]]] = {}
    items = _ordered(_latencies(records, latencies), cap)
    template = _environment().from_string(
        (resources.files("qualeval") / "templates" / "report.html").read_text(encoding="utf-8")
    )
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    statuses = sorted({st for t in summary.tasks.values() for st in t.summary.statuses})
    return template.render(
        s=summary,
        plots=_plots(summary, latencies),
        items=items,
        statuses=statuses,
        script=_SCRIPT,
        script_hash=digest,
        rescored=summary.rescored,
        serving=serving_sections(summary, root),
    )


def markdown_report(summary: RunSummary) -> str:
    lines = _header(summary)
    lines += _accuracy(summary)
    lines += _statuses(summary)
    lines += _speed(summary)
    from qualeval.loadreport import serving_markdown

    lines += serving_markdown(summary)
    return "\n".join(lines) + "\n"


def _header(summary: RunSummary) -> list[str]:
    lines = [
        f"# qualeval report{' (rescored)' if summary.rescored else ''}",
        "",
        f"model **{summary.model}** at {summary.base_url} · started {summary.started or '?'} · "
        f"{summary.records} records · qualeval {summary.qualeval_version}",
        "",
    ]
    if summary.simulated:
        lines += [
            "> **Simulated server.** These results come from qualeval's reference server, a deterministic "
            "simulation of a reasoning model; they say nothing about any real model.",
            "",
        ]
    return lines


def _accuracy(summary: RunSummary) -> list[str]:
    """The accuracy table, then each task's notes: published figure, scorer's figures, judge, repeats."""
    lines = [
        "## Accuracy",
        "",
        "| task | items | accuracy | 95% interval | over answered | naive extractor |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, t in summary.tasks.items():
        m = t.summary
        answered = _pct(m.accuracy_answered) if m.accuracy_answered is not None else "–"
        if not t.scored:  # a workload's synthetic prompts have no right answer
            lines.append(f"| {name} | {m.n} | not scored (synthetic prompts) | – | – | – |")
            continue
        lines.append(
            f"| {name} | {m.n} | {_pct(m.accuracy)} | {_pct(m.interval[0])} – {_pct(m.interval[1])} | "
            f"{answered} | {_pct(m.naive_accuracy)} |"
        )
    for name, t in summary.tasks.items():
        lines += _figures(name, t) + _judged(name, t) + _repeated(name, t)
    return lines


def _judged(name: str, t: TaskReport) -> list[str]:
    if t.summary.accuracy_without_judge is None:
        return []
    judged = t.summary.rungs.get("judge", 0)
    return [
        "",
        f"{name}: a model judge accepted {judged} answers the rules rejected; by the rules alone, "
        f"accuracy {_pct(t.summary.accuracy_without_judge)}",
    ]


def _repeated(name: str, t: TaskReport) -> list[str]:
    r = t.repeated
    if not r:
        return []
    unbiased = f"; unbiased {', '.join(f'pass@{k} {_pct(v)}' for k, v in r.pass_at.items())}" if r.pass_at else ""
    return [
        "",
        f"{name}: {r.k} samples per item — mean {_pct(r.mean)} ± {_pct(r.mean_se)}, "
        f"maj@{r.k} {_pct(r.maj_at_k)} ± {_pct(r.maj_se)}, pass@{r.k} {_pct(r.pass_at_k)} ± "
        f"{_pct(r.pass_se)} (standard errors clustered by item){unbiased}",
    ]


def _statuses(summary: RunSummary) -> list[str]:
    """Completion statuses, extraction rungs and constraints per task, then each breakdown's table."""
    lines = [
        "",
        "## Completion statuses and extraction",
        "",
        "| task | statuses | extraction rungs | constraint |",
        "|---|---|---|---|",
    ]
    for name, t in summary.tasks.items():
        m = t.summary
        lines.append(f"| {name} | {_pairs(m.statuses)} | {_pairs(m.rungs)} | {_pairs(m.constraint_held) or '–'} |")
    for name, t in summary.tasks.items():
        for key, cells in t.summary.breakdowns.items():
            lines += [
                "",
                f"### {name} by {key} (macro {_pct(t.summary.macro_accuracy[key])})",
                "",
                f"| {key} | items | accuracy | 95% interval |",
                "|---|---:|---:|---:|",
            ]
            lines += [
                f"| {v} | {c.n} | {_pct(c.accuracy)} | {_pct(c.low)} – {_pct(c.high)} |" for v, c in cells.items()
            ]
    return lines


def _speed(summary: RunSummary) -> list[str]:
    """The speed table, then per task its load levels and speed and quality read together."""
    lines = [
        "",
        "## Speed",
        "",
        "Milliseconds, p50 / p90, warm-up excluded. First answer = the first token of the final answer.",
        "",
        "| task | requests | TTFT | first answer | latency | TPOT p50 | output tok/s | requests/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, t in summary.tasks.items():
        p = t.speed
        tpot = _num(p.tpot.p50) if p.tpot else "–"
        lines.append(
            f"| {name} | {p.requests} | {_dist(p.ttft)} | {_dist(p.first_answer)} | {_dist(p.latency)} | "
            f"{tpot} | {_num(p.output_throughput)} | {_num(p.request_throughput)} |"
        )
    for name, t in summary.tasks.items():
        lines += _levels(name, t) + _linked(name, t)
    return lines


def _levels(name: str, t: TaskReport) -> list[str]:
    if len(t.levels) <= 1:
        return []
    lines = [
        "",
        f"### {name} by load level",
        "",
        "| level | accuracy | 95% interval | TTFT p50 | first answer p50 | output tok/s | goodput |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for level, lv in t.levels.items():
        c, p = lv.accuracy, lv.speed
        ttft = _num(p.ttft.p50) if p.ttft else "–"
        first = _num(p.first_answer.p50) if p.first_answer else "–"
        lines.append(
            f"| {level} | {_pct(c.accuracy)} | {_pct(c.low)} – {_pct(c.high)} | {ttft} | {first} | "
            f"{_num(p.output_throughput)} | {_num(p.goodput)} |"
        )
    return lines


def _linked(name: str, t: TaskReport) -> list[str]:
    k = t.linked
    return [
        "",
        f"### {name}: speed and quality together",
        "",
        f"- correct answers per minute: {_num(k.correct_per_minute)}; output tokens per correct answer: "
        f"{_num(k.tokens_per_correct)}; seconds per correct answer: {_num(k.seconds_per_correct)}",
        f"- truncated: {k.truncation.truncated} ({_pct(k.truncation.rate)}) at budget "
        f"{k.truncation.budget or 'server default'}; suggested budget: {k.truncation.suggested_budget or '–'}",
        "- accuracy by reasoning tokens: "
        + ", ".join(f"{b} {_pct(c.accuracy)} (n={c.n})" for b, c in k.accuracy_by_reasoning_length.items()),
    ]


_MEASURES = {
    "prompt_strict": "prompt-level strict",
    "instruction_strict": "instruction-level strict",
    "prompt_loose": "prompt-level loose",
    "instruction_loose": "instruction-level loose",
}


def _figures(name: str, t: TaskReport) -> list[str]:
    """The published figure beside the measured accuracy, and a scorer's own figures (IFEval's four)."""
    m, lines = t.summary, []
    if t.published is not None:
        low, high = m.interval
        where = "inside" if low <= t.published <= high else "outside"
        lines += [
            "",
            f"{name}: published {_pct(t.published)}, measured {_pct(m.accuracy)} (95% interval {_pct(low)} – "
            f"{_pct(high)}, n={m.n}): the published figure is {where} the interval",
        ]
    if m.measures:
        shown = ", ".join(
            f"{_MEASURES.get(k, k)} {_pct(c.accuracy)} ({_pct(c.low)} – {_pct(c.high)}, n={c.n})"
            for k, c in m.measures.items()
        )
        lines += ["", f"{name}: {shown}"]
    return lines


def _pairs(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def write_reports(store: RunStore, summary: RunSummary, records: Iterable[Record]) -> tuple[Path, Path]:
    """report.md and report.html into the store's directory."""
    return (
        store.write_text("report.md", markdown_report(summary)),
        store.write_text("report.html", html_report(summary, records)),
    )


def write_reports_or_warn(store: RunStore, summary: RunSummary, records: Iterable[Record]) -> bool:
    """write_reports, for a run or rescore whose records and summary are already safe on disk: a report that
    fails is a warning (one line on stderr), never a traceback or an exit code of its own."""
    for name, render in (
        ("report.md", lambda: markdown_report(summary)),
        ("report.html", lambda: html_report(summary, records, root=store.root)),
    ):
        try:
            store.write_text(name, render())
        except Exception as exc:  # a report bug must not cost the user a finished run
            warn(f"{store.root / name} not written: {type(exc).__name__}: {exc}")
            return False
    return True


def compare_html(result: Comparison) -> str:
    template = _environment().from_string(
        (resources.files("qualeval") / "templates" / "compare.html").read_text(encoding="utf-8")
    )
    return template.render(c=result)
