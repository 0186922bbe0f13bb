"""`qualeval compare`'s server metrics: each run's own /metrics side by side, and why a run has none of one (the
reason its summary keeps, read from its timeseries.jsonl by qualeval.serving.gaps)."""

from __future__ import annotations

from qualeval.records import RunSummary, Speed, TaskComparison

__all__ = ["server_notes", "side_by_side"]


def _server_means(summary: RunSummary | None) -> dict[str, float]:
    """Each server figure's mean over the run's replicas; {} where none was sampled during the run."""
    figures: dict[str, list[float]] = {}
    for figs in ((summary.server if summary else None) or {}).values():
        for name, value in figs.items():
            figures.setdefault(name, []).append(value.mean)
    return {name: sum(v) / len(v) for name, v in figures.items()}


def _why_none(summary: RunSummary | None, name: str) -> str:
    """Why a run has no figure `name`: the reason its summary keeps (read from its timeseries.jsonl), else what
    can be told without it."""
    if summary is None:
        return "no readable summary.json"
    if summary.server_gaps and name in summary.server_gaps:
        return summary.server_gaps[name]
    older = "(an older qualeval wrote it: see its timeseries.jsonl)"
    if summary.server is None:
        return f"its summary.json names no server metric and no reason {older}"
    return f"its summary.json has no figure of it and no reason {older}"


def server_notes(a: RunSummary | None, b: RunSummary | None) -> list[str]:
    """Why a server metric is "–" in the table, for each run and each metric the other run has (the metrics of
    one reason said together); where neither has any, why for each run whose server was read."""
    have = (_server_means(a), _server_means(b))
    notes = []
    for side, summary, own, other in (("A", a, have[0], have[1]), ("B", b, have[1], have[0])):
        grouped: dict[str, list[str]] = {}
        for name in sorted(n for n in other if n not in own):
            grouped.setdefault(_why_none(summary, name), []).append(name)
        whole = not own and len(grouped) == 1
        notes += [f"{side}: no {'server metric' if whole else ', '.join(ns)}: {why}" for why, ns in grouped.items()]
    if not any(have):  # no table: say why where a server was read at all
        for side, summary in (("A", a), ("B", b)):
            if summary is not None and (summary.server is not None or summary.server_gaps):
                reasons = list(dict.fromkeys((summary.server_gaps or {}).values())) or [_why_none(summary, "")]
                notes.append(f"{side}: no server metric: {'; '.join(reasons)}")
    return notes


def side_by_side(
    a: RunSummary | None,
    b: RunSummary | None,
    tasks: dict[str, TaskComparison],
    speeds: dict[str, tuple[Speed, Speed]],
) -> dict[str, list[float | None]]:
    """For `qualeval compare`: each server metric (mean over the seconds sampled while the run had requests in
    flight, and over the replicas: the server's own, of each run whole) of run A and run B, beside each compared
    task's accuracy and TTFT p99 over its paired items, so a serving change's effect on both reads in one table.
    None ("–"): a run without the metric (`server_notes` says why); {} when neither run has any."""
    ma, mb = _server_means(a), _server_means(b)
    if not ma and not mb:
        return {}
    rows: dict[str, list[float | None]] = {name: [ma.get(name), mb.get(name)] for name in sorted(set(ma) | set(mb))}
    for name, t in tasks.items():
        if t.scored:
            rows[f"{name}: accuracy"] = [t.accuracy_a, t.accuracy_b]
        rows[f"{name}: TTFT p99 (ms)"] = [s.ttft.p99 if s.ttft else None for s in speeds[name]]
    return rows
