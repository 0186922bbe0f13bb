"""Why a run has no figure of a server metric: what `compare` and the report say beside a "–", read from the
run's own timeseries.jsonl, so the reason is the one that held (its server exposes no such metric, its /metrics
never answered, every sample read an idle server or a warm-up...), never a guess."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from qualeval.records import MeanMax, SeriesPoint
from qualeval.serving.timeseries import FIGURES, counts, metric_maps, read_series, timed

__all__ = ["server_gaps"]


def server_gaps(root: Path, summary: dict[str, dict[str, MeanMax]] | None) -> dict[str, str]:
    """Per server metric no replica of the run has a figure of (in `summary`, server_summary's): why."""
    have = {name for figs in (summary or {}).values() for name in figs}
    points = list(read_series(root))
    urls = list(dict.fromkeys(url for p in points for url in (*p.server, *p.unread)))
    if not points:
        return dict.fromkeys((n for n in FIGURES if n not in have), "the run wrote no timeseries.jsonl")
    out: dict[str, str] = {}
    for name in FIGURES:
        if name in have:
            continue
        if not urls:
            out[name] = (
                f"none of its {len(points)} samples read its server's /metrics (an older qualeval wrote them and "
                "kept no reason: a server without /metrics, or one whose first /metrics timed out)"
            )
            continue
        reasons = {url: _why(name, url, points) for url in urls}
        alike = set(reasons.values())
        out[name] = alike.pop() if len(alike) == 1 else "; ".join(f"{u}: {why}" for u, why in reasons.items())
    return out


def _why(name: str, url: str, points: list[SeriesPoint]) -> str:
    """Why replica `url` has no figure `name`."""
    samples = [(p, p.server[url]) for p in points if url in p.server]
    if not samples:
        said = Counter(p.unread[url] for p in points if url in p.unread)
        if not said:
            return f"none of its {len(points)} samples read this replica's /metrics"
        why, _ = said.most_common(1)[0]
        return f"{why} (at {sum(said.values())} of its {len(points)} samples)"
    kind = samples[0][1].server
    how: dict[str, Any] | None = metric_maps().get(kind, {}).get(name)
    if how is None:
        return f"its server ({kind}) exposes no {name} (servermetrics.yaml maps none for {kind})"
    own = [(p, s) for p, s in samples if timed(p)]
    if not own:
        warm = sum(p.warmup for p, _ in samples)
        return (
            f"none of its {len(samples)} samples came in a second of the run's measured work ({warm} in a warm-up, "
            f"{len(samples) - warm} after the run or with nothing in flight), and those are not the run's figures"
        )
    read = [(p, s) for p, s in own if counts(p, how)]
    if not read:
        return (
            "its server was read only with no request in flight (a gauge is the server at that instant, and the "
            "run's requests all began and ended between two samples)"
        )
    if "ratio" in how:
        return f"{how['ratio'][1]} did not grow in any second of the run's work: nothing to divide by"
    counter = how.get("rate") or how.get("delta")
    return (
        f"a counter's rate needs two reads of {counter}, and its server was read with it only once during the "
        "run's work"
    )
