"""Compare two runs item by item: does a serving change keep quality while it changes speed?

Records pair by task, sample id and attempt; when both runs swept the same load levels, each task and level is
compared on its own (one item at several levels is not independent evidence). Accuracy:
the difference B - A with a paired bootstrap interval (items resampled together) and McNemar's exact test on the
discordant pairs. Speed: ratios B / A of paired means with bootstrap intervals, and the aggregate throughput ratio.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from qualeval.errors import InputError
from qualeval.loadreport import side_by_side
from qualeval.store import RunStore

__all__ = ["Comparison", "compare_runs", "mcnemar_exact"]

BOOTSTRAP = 2000


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of b against b + c trials at one half."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


class Ratio(BaseModel):
    a: float
    b: float
    ratio: float
    low: float | None = None
    high: float | None = None
    pairs: int


class TaskComparison(BaseModel):
    pairs: int
    accuracy_a: float
    accuracy_b: float
    difference: float
    """B - A."""
    low: float
    high: float
    a_right_b_wrong: int
    a_wrong_b_right: int
    p_value: float
    """McNemar's exact test."""
    ratios: dict[str, Ratio]
    """Latency (ttft, first_answer, latency, tpot) and output_rate: B / A of paired means."""
    throughput_ratio: float | None
    """Aggregate output tokens per second, B / A, from each run's summary."""
    flipped_to_wrong: list[str]
    flipped_to_right: list[str]


class Comparison(BaseModel):
    a: str
    b: str
    simulated: bool
    unpaired_a: int
    unpaired_b: int
    tasks: dict[str, TaskComparison]
    server: dict[str, list[float | None]] = {}
    """Each server metric (A, B), beside each task's accuracy and TTFT p99 (qualeval.loadreport.side_by_side)."""


def _records(root: Path) -> tuple[dict[tuple[str, ...], dict[str, Any]], set[str], dict[str, Any]]:
    store = RunStore(root)
    manifest = store.manifest()
    if manifest is None:
        raise InputError(f"{root}: no manifest.json here; is this a qualeval run directory?")
    rows: dict[tuple[str, ...], dict[str, Any]] = {}
    levels: set[str] = set()
    for row in store.records():
        levels.add(row.get("level", ""))
        rows.setdefault((row["task"], row["sample_id"], str(row.get("attempt", 0)), row.get("level", "")), row)
    summary_path = root / "summary.json"
    summary = orjson.loads(summary_path.read_bytes()) if summary_path.exists() else {}
    return rows, levels, {"manifest": manifest, "summary": summary}


def _rekey(rows: dict[tuple[str, ...], dict[str, Any]]) -> dict[tuple[str, ...], dict[str, Any]]:
    """Drop the level from the key, keeping the first level's record for each item."""
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    for key, row in rows.items():
        out.setdefault(key[:3], row)
    return out


def _bootstrap(pairs: list[tuple[float, float]], statistic: str, rng: Any) -> tuple[float, float]:
    import numpy as np

    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    index = rng.integers(0, len(pairs), size=(BOOTSTRAP, len(pairs)))
    if statistic == "difference":
        values = b[index].mean(axis=1) - a[index].mean(axis=1)
    else:
        denominator = a[index].mean(axis=1)
        values = b[index].mean(axis=1) / np.where(denominator == 0, np.nan, denominator)
    low, high = np.nanpercentile(values, [2.5, 97.5])
    return float(low), float(high)


_TIMES = {"ttft": "ttft", "first_answer": "first_content", "latency": "end"}


def _value(row: dict[str, Any], name: str) -> float | None:
    timing, usage = row.get("timing") or {}, row.get("usage") or {}
    if name in _TIMES:
        return timing.get(_TIMES[name])
    end, tokens = timing.get("end"), usage.get("completion_tokens")
    if name == "tpot":
        ttft = timing.get("ttft")
        return (end - ttft) / (tokens - 1) if (end is not None and ttft is not None and tokens and tokens > 1) else None
    return tokens / (end / 1000.0) if (end and tokens) else None  # output_rate


def compare_runs(root_a: Path, root_b: Path, *, seed: int = 0) -> Comparison:
    import numpy as np

    rows_a, levels_a, info_a = _records(root_a)
    rows_b, levels_b, info_b = _records(root_b)
    if levels_a != levels_b:
        rows_a, rows_b = _rekey(rows_a), _rekey(rows_b)
    shared = sorted(set(rows_a) & set(rows_b))
    if not shared:
        raise InputError(f"{root_a} and {root_b} share no items: they ran different tasks or samples")
    rng = np.random.default_rng(seed)
    by_task: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for key in shared:
        if not (rows_a[key].get("warmup") and rows_b[key].get("warmup")):
            # one comparison per task and load level: the same item at several levels is not independent
            level = key[3] if len(key) > 3 else ""
            by_task[f"{key[0]} @ {level}" if level and len(levels_a) > 1 else key[0]].append((rows_a[key], rows_b[key]))
    tasks = {}
    for task, pairs in sorted(by_task.items()):
        flags = [(float(a["score"]["correct"]), float(b["score"]["correct"])) for a, b in pairs]
        low, high = _bootstrap(flags, "difference", rng)
        to_wrong = [a["sample_id"] for a, b in pairs if a["score"]["correct"] and not b["score"]["correct"]]
        to_right = [a["sample_id"] for a, b in pairs if b["score"]["correct"] and not a["score"]["correct"]]
        ratios = {}
        for name in ("ttft", "first_answer", "latency", "tpot", "output_rate"):
            values = [
                (va, vb)
                for a, b in pairs
                if (va := _value(a, name)) is not None
                and (vb := _value(b, name)) is not None
                and not a.get("warmup")
                and not b.get("warmup")
            ]
            if len(values) >= 2 and sum(v[0] for v in values) > 0:
                mean_a = sum(v[0] for v in values) / len(values)
                mean_b = sum(v[1] for v in values) / len(values)
                r_low, r_high = _bootstrap(values, "ratio", rng)
                ratios[name] = Ratio(
                    a=mean_a, b=mean_b, ratio=mean_b / mean_a, low=r_low, high=r_high, pairs=len(values)
                )
        tasks[task] = TaskComparison(
            pairs=len(pairs),
            accuracy_a=sum(f[0] for f in flags) / len(flags),
            accuracy_b=sum(f[1] for f in flags) / len(flags),
            difference=(sum(f[1] for f in flags) - sum(f[0] for f in flags)) / len(flags),
            low=low,
            high=high,
            a_right_b_wrong=len(to_wrong),
            a_wrong_b_right=len(to_right),
            p_value=mcnemar_exact(len(to_wrong), len(to_right)),
            ratios=ratios,
            throughput_ratio=_throughput_ratio(info_a["summary"], info_b["summary"], task),
            flipped_to_wrong=to_wrong,
            flipped_to_right=to_right,
        )
    return Comparison(
        a=str(root_a),
        b=str(root_b),
        simulated=bool(info_a["manifest"].get("simulated") or info_b["manifest"].get("simulated")),
        unpaired_a=len(set(rows_a) - set(rows_b)),
        unpaired_b=len(set(rows_b) - set(rows_a)),
        tasks=tasks,
        server=side_by_side(info_a["summary"], info_b["summary"]),
    )


def _throughput_ratio(sa: dict[str, Any], sb: dict[str, Any], key: str) -> float | None:
    task, _, level = key.partition(" @ ")
    try:
        if level:
            a = sa["tasks"][task]["levels"][level]["speed"]["output_throughput"]
            b = sb["tasks"][task]["levels"][level]["speed"]["output_throughput"]
        else:
            a = sa["tasks"][task]["speed"]["output_throughput"]
            b = sb["tasks"][task]["speed"]["output_throughput"]
    except (KeyError, TypeError):
        return None
    return b / a if a and b else None
