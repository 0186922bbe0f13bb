"""The serving sections of report.md and report.html: the workload's figures in vllm bench serve's and
llama-benchy's names, quality at every context length, speed per replica, the server's own metrics, and plots
over time (throughput, requests in flight, KV-cache usage, rolling accuracy; the warm-up shaded).

Sections are built once as data (title, notes, tables, plots) and drawn as markdown or as HTML (autoescaped by
the report's template). A plot that cannot be drawn is a warning and is left out.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from qualeval.errors import QualevalWarning
from qualeval.records import MeanStd, RunSummary, Stats, WorkloadLevel, WorkloadPrompts

__all__ = ["serving_markdown", "serving_sections", "terminal_lines"]

_TIMES = (("ttft", "TTFT"), ("tpot", "TPOT"), ("itl", "ITL"), ("e2el", "E2EL"), ("first_answer", "first answer"))


def _f(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    return f"{x:,.{digits}f}" if isinstance(x, float) else f"{x:,}"


def _pm(d: MeanStd | None) -> str:
    return "–" if not d else f"{d.mean:,.2f} ± {d.std:,.2f}"


def _stat(figures: Stats | None, stat: str) -> float | None:
    return (figures or {}).get(stat)


def _vllm_table(levels: dict[str, WorkloadLevel], percentiles: list[float]) -> dict[str, Any]:
    names = list(levels)
    figs = [levels[n].vllm for n in names]
    rows = [
        ["Successful requests", *(_f(f.completed) for f in figs)],
        ["Benchmark duration (s)", *(_f(f.duration_s) for f in figs)],
        ["Total input tokens", *(_f(f.total_input_tokens) for f in figs)],
        ["Total generated tokens", *(_f(f.total_output_tokens) for f in figs)],
        ["Request throughput (req/s)", *(_f(f.request_throughput) for f in figs)],
        ["Output token throughput (tok/s)", *(_f(f.output_throughput) for f in figs)],
        ["Total token throughput (tok/s)", *(_f(f.total_token_throughput) for f in figs)],
        ["Decode tok/s per user (mean)", *(_f(_stat(f.decode_per_user, "mean")) for f in figs)],
    ]
    for key, label in _TIMES:
        for stat in ("mean", "median", *(f"p{p:g}" for p in percentiles)):
            shown = stat.capitalize() if stat in ("mean", "median") else stat.upper()
            rows.append([f"{shown} {label} (ms)", *(_f(_stat(getattr(f, key), stat)) for f in figs)])
    rows.append(["Mean reasoning tokens", *(_f(_stat(f.reasoning_tokens, "mean")) for f in figs)])
    return {"head": ["vllm bench serve", *names], "rows": rows}


def _benchy_table(levels: dict[str, WorkloadLevel], prompts: WorkloadPrompts) -> dict[str, Any]:
    rows = []
    depth = f" @ depth {prompts.depth}" if prompts.depth else ""
    for name, level in levels.items():
        b = level.llama_benchy
        rows += [
            [name, f"pp{prompts.input_len}{depth} (total)", _pm(b.pp_total), "", _pm(b.e2e_ttft)],
            [name, f"tg{prompts.output_len}{depth} (total)", _pm(b.tg_total), "", ""],
            [name, f"tg{prompts.output_len}{depth} (per user)", _pm(b.tg_per_user), _pm(b.ttfr), ""],
        ]
    return {"head": ["level", "test", "t/s", "ttfr (ms)", "e2e_ttft (ms)"], "rows": rows}


def _workload(summary: RunSummary) -> dict[str, Any] | None:
    w = summary.serving.workload if summary.serving else None
    if not w:
        return None
    t = w.targets
    notes = [f"Reproduces: {w.mirrors}"] if w.mirrors else []
    if w.forcing is not None:
        keys = ", ".join(w.forcing) or "none (the server refused them, or --force-output off)"
        notes.append(f"Output length forced with: {keys}.")
    if t.prompt_count:
        notes.append(f"Prompt tokens counted by: {', '.join(t.prompt_count)}.")
    if t.output_short:
        ratio = t.output_short_mean_ratio or 0.0
        notes.append(
            f"Target output length not reached by {t.output_short} of {t.requests} requests "
            f"(they stopped at {ratio:.0%} of it on average): their decode figures cover shorter outputs."
        )
    if t.prompt_off_target:
        notes.append(f"{t.prompt_off_target} prompts are more than 1% off their target length.")
    notes += w.notes  # the length rule followed, and the tool's definitions (loadfigures)
    tables = [_vllm_table(w.levels, w.percentiles or [50, 90, 95, 99])] if w.levels else []
    if w.levels:
        benchy = _benchy_table(w.levels, w.prompts)
        tables = [benchy, *tables] if w.style == "llama-benchy" else [*tables, benchy]
    return {"title": f"Serving workload: {w.name}", "notes": notes, "tables": tables, "plots": []}


def _context(summary: RunSummary) -> dict[str, Any] | None:
    c = summary.serving.context if summary.serving else None
    if not c:
        return None
    rows = []
    for task, lengths in c.tasks.items():
        for length, v in lengths.items():
            a = v.accuracy
            answered = bool(a.n)  # a length the server refused for every item measured nothing
            rows.append(
                [
                    task,
                    length,
                    str(a.n),
                    f"{a.accuracy:.1%}" if answered else "–",
                    f"{a.low:.1%} – {a.high:.1%}" if answered else "–",
                    str(v.endpoint_errors),
                    _f(_stat(v.prompt_tokens, "mean"), 0),
                    _f(_stat(v.ttft, "p50"), 1),
                    _f(_stat(v.first_answer, "p50"), 1),
                    _f(_stat(v.decode_rate, "p50"), 1),
                ]
            )
    head = ["task", "context tokens", "items answered", "accuracy", "95% interval", "endpoint errors"]
    head += ["prompt tokens (mean)", "TTFT p50", "first answer p50", "decode tok/s p50"]
    notes = [
        f"Each item placed in filler text at depth {c.depth} (1 = after the filler).",
        "A request the server refused (a context longer than it holds) is an endpoint error, not a wrong answer: "
        "it is counted apart, never in the accuracy.",
    ]
    return {"title": "Quality at every length", "notes": notes, "tables": [{"head": head, "rows": rows}], "plots": []}


def _replicas(summary: RunSummary) -> dict[str, Any] | None:
    e = summary.serving.endpoints if summary.serving else None
    if not e:
        return None
    rows = [
        [
            url,
            str(s.requests),
            _f(s.ttft.p50 if s.ttft else None, 1),
            _f(s.latency.p50 if s.latency else None, 1),
            _f(s.output_throughput, 1),
            _f(s.request_throughput, 2),
        ]
        for url, s in e.items()
    ]
    head = ["replica", "requests", "TTFT p50", "latency p50", "output tok/s", "requests/s"]
    return {"title": "Speed per replica", "notes": [], "tables": [{"head": head, "rows": rows}], "plots": []}


def _server(summary: RunSummary) -> dict[str, Any] | None:
    gaps = summary.server_gaps or {}
    if not summary.server and not (summary.server is not None and gaps):
        return None
    rows = [
        [url, name, _f(v.mean, 3), _f(v.max, 3)]
        for url, figs in summary.server.items()
        for name, v in sorted(figs.items())
    ] if summary.server else []  # fmt: skip
    named = {name for figs in (summary.server or {}).values() for name in figs}
    grouped: dict[str, list[str]] = {}
    for name, why in sorted(gaps.items()):
        grouped.setdefault(why, []).append(name)
    missing = [f"No {', '.join(names)}: {why}." for why, names in grouped.items()]
    if not rows:
        notes = ["No figure of the server's own /metrics is the run's, so none is shown (an idle server's zeros "
                 "are not the run's figures); see timeseries.jsonl.", *missing]  # fmt: skip
        return {"title": "Server metrics", "notes": notes, "tables": [], "plots": []}
    notes = ["The server's own /metrics, sampled once a second over the seconds of the run's measured work (a "
             "second that held only a warm-up left out; gauges where requests were in flight; rates weighted by "
             "the time each sample covers); see timeseries.jsonl.",
             *(line for line in missing if named)]  # fmt: skip
    table = {"head": ["replica", "server metric", "mean", "max"], "rows": rows}
    return {"title": "Server metrics", "notes": notes, "tables": [table], "plots": []}


def serving_sections(summary: RunSummary, root: Path | None = None) -> list[dict[str, Any]]:
    """Every serving section this run has, with plots when the run directory is given (HTML)."""
    sections = [s for s in (_workload(summary), _context(summary), _replicas(summary), _server(summary)) if s]
    if root is None:
        return sections
    from qualeval.report import serving_plots as serveplots

    context = next((s for s in sections if s["title"] == "Quality at every length"), None)
    if context is not None and summary.serving and summary.serving.context:
        context["plots"] += _drawn(serveplots.by_length, summary.serving.context)
    over_time = _drawn(serveplots.over_time, root)
    if over_time:
        notes = ["Sampled once a second from both ends; the warm-up is shaded."]
        sections.append({"title": "Over time", "notes": notes, "tables": [], "plots": over_time})
    return sections


def _drawn(draw: Any, *args: Any) -> list[str]:
    try:
        uri = draw(*args)
    except Exception as exc:  # matplotlib raises many kinds; a plot is never worth a lost report
        warnings.warn(f"plot {draw.__name__} left out: {type(exc).__name__}: {exc}", QualevalWarning, stacklevel=2)
        return []
    return [uri] if uri else []


def serving_markdown(summary: RunSummary) -> list[str]:
    lines: list[str] = []
    for section in serving_sections(summary):
        lines += ["", f"## {section['title']}", ""]
        lines += [f"{note}  " for note in section["notes"]]
        for table in section["tables"]:
            lines += ["", "| " + " | ".join(table["head"]) + " |", "|" + "---|" * len(table["head"])]
            lines += ["| " + " | ".join(row) + " |" for row in table["rows"]]
    return lines


_SIMULATED = (
    "Simulated server: these results come from qualeval's reference server; they show the harness working and say "
    "nothing about any real model."
)


def terminal_lines(summary: RunSummary) -> list[str]:
    """A few lines for the terminal: that the server is simulated, as the reports say; the workload's headline
    figures and any length not reached; and the per-length rows report.md has for a `--context-length` run."""
    out = [_SIMULATED] if summary.simulated else []
    w = summary.serving.workload if summary.serving else None
    if w is not None:
        for label, level in w.levels.items():
            v = level.vllm
            ttft = _stat(v.ttft, "p50")
            out.append(
                f"{w.name} @ {label}: {v.completed} requests · output {_f(v.output_throughput, 1)} tok/s · "
                f"decode {_f(_stat(v.decode_per_user, 'mean'), 1)} tok/s per user · TTFT p50 {_f(ttft, 1)} ms"
            )
        if w.targets.output_short:
            out.append(f"{w.targets.output_short} requests stopped short of their target output length")
    context = _context(summary)
    if context:
        out += [f"{context['title']}:", *_aligned(context["tables"][0]), *context["notes"]]
    return out


def _aligned(table: dict[str, Any]) -> list[str]:
    """A table as plain lines, each column as wide as its widest cell (never cut to a terminal's width)."""
    rows = [table["head"], *table["rows"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(table["head"]))]
    return ["  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
