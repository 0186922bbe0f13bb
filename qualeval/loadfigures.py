"""The serving figures of a run, as the tools people compare with define them, beside quality.

- `vllm`: vllm bench serve's names and definitions: completed requests, duration, total input and output tokens,
  request, output and total token throughput, and mean / median / percentiles of TTFT, TPOT, ITL and E2EL;
  plus what it lacks: time to first answer token and reasoning tokens.
- `llama-benchy`: per batch of `concurrency` requests (a "run"), prompt processing t/s (total prompt tokens over
  the time to the batch's last first token) and token generation t/s (tokens after each first one over the time
  from the batch's first first token to its last end); per request, decode t/s per user. Mean ± std.
- per target context length: accuracy with its interval, TTFT and decode rate.
- per replica: qualeval's speed figures for the requests each one answered.

All milliseconds; warm-up requests and failed ones are left out of speed, as everywhere in qualeval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from qualeval.histogram import merge, percentile
from qualeval.metrics import interpolated, speed
from qualeval.summary import Cell, item_scores

__all__ = ["collect", "stats"]


def stats(values: Iterable[float | None], percentiles: Sequence[float]) -> dict[str, float] | None:
    """mean, median, std and the asked percentiles (numpy's linear interpolation, as vllm computes them)."""
    ordered = sorted(v for v in values if v is not None)
    if not ordered:
        return None
    mean = sum(ordered) / len(ordered)
    out = {
        "n": float(len(ordered)),
        "mean": mean,
        "median": interpolated(ordered, 0.5),
        "std": math.sqrt(sum((v - mean) ** 2 for v in ordered) / len(ordered)),
    }
    out.update({f"p{p:g}": interpolated(ordered, p / 100) for p in percentiles})
    return out


def _tpot(row: dict[str, Any]) -> float | None:
    t, tokens = row["timing"], row["usage"].get("completion_tokens")
    if t.get("ttft") is None or t.get("end") is None or not tokens or tokens < 2:
        return None
    return (t["end"] - t["ttft"]) / (tokens - 1)


def _decode_rate(row: dict[str, Any]) -> float | None:
    tpot = _tpot(row)
    return 1000.0 / tpot if tpot else None


def _duration(rows: Sequence[dict[str, Any]]) -> float | None:
    sent = [r["sent_at"] for r in rows if r.get("sent_at") is not None and r["timing"].get("end") is not None]
    if len(sent) != len(rows) or not rows or len({r.get("session") for r in rows}) > 1:
        return None
    finish = max(r["sent_at"] + r["timing"]["end"] / 1000.0 for r in rows)
    return max(finish - min(sent), 1e-9)


def vllm_figures(rows: Sequence[dict[str, Any]], percentiles: Sequence[float]) -> dict[str, Any]:
    duration = _duration(rows)
    prompt = sum(r["meta"].get("prompt_tokens") or r["usage"].get("prompt_tokens") or 0 for r in rows)
    output = sum(r["usage"].get("completion_tokens") or 0 for r in rows)
    itl = merge((r["timing"].get("itl") or {}).get("hist") or {} for r in rows)
    itl_n = sum((r["timing"].get("itl") or {}).get("count", 0) for r in rows)
    itl_mean = sum(
        (r["timing"].get("itl") or {}).get("mean", 0) * (r["timing"].get("itl") or {}).get("count", 0) for r in rows
    )
    itl_stats = None
    if itl_n:
        itl_stats = {"n": float(itl_n), "mean": itl_mean / itl_n, "median": percentile(itl, 0.5) or 0.0}
        itl_stats.update({f"p{p:g}": percentile(itl, p / 100) or 0.0 for p in percentiles})
    return {
        "completed": len(rows),
        "duration_s": duration,
        "total_input_tokens": prompt,
        "total_input_tokens_server": sum(r["usage"].get("prompt_tokens") or 0 for r in rows),
        "total_output_tokens": output,
        "request_throughput": len(rows) / duration if duration else None,
        "output_throughput": output / duration if duration else None,
        "total_token_throughput": (prompt + output) / duration if duration else None,
        "ttft": stats((r["timing"].get("ttft") for r in rows), percentiles),
        "tpot": stats((_tpot(r) for r in rows), percentiles),
        "itl": itl_stats,
        "e2el": stats((r["timing"].get("end") for r in rows), percentiles),
        "first_answer": stats((r["timing"].get("first_content") for r in rows), percentiles),
        "reasoning_tokens": stats((r["usage"].get("reasoning_tokens") for r in rows), percentiles),
        "decode_per_user": stats((_decode_rate(r) for r in rows), percentiles),
    }


def _mean_std(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    mean = sum(values) / len(values)
    return {"mean": mean, "std": math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)), "n": len(values)}


def _batches(rows: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Requests grouped into llama-benchy's runs: a batch is sent together and the next only once it has ended,
    so a request sent after every one before it had finished opens a new batch."""
    timed = sorted(
        (r for r in rows if r.get("sent_at") is not None and r["timing"].get("end") is not None),
        key=lambda r: r["sent_at"],
    )
    out: list[list[dict[str, Any]]] = []
    ended = -math.inf
    for r in timed:
        if not out or r["sent_at"] >= ended:
            out.append([])
        out[-1].append(r)
        ended = (
            max(ended, r["sent_at"] + r["timing"]["end"] / 1000.0)
            if len(out[-1]) > 1
            else (r["sent_at"] + r["timing"]["end"] / 1000.0)
        )
    return out


def benchy_figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """llama-benchy's table: pp and tg t/s per batch (total over the batch), tg t/s per user, ttfr, e2e_ttft."""
    batches = _batches(rows)
    pp, tg = [], []
    for batch in batches:
        timed = [r for r in batch if r.get("sent_at") is not None and r["timing"].get("ttft") is not None]
        if not timed:
            continue
        start = min(r["sent_at"] for r in timed)
        firsts = [r["sent_at"] + r["timing"]["ttft"] / 1000.0 for r in timed]
        ends = [r["sent_at"] + r["timing"]["end"] / 1000.0 for r in timed]
        prompt = sum(r["meta"].get("prompt_tokens") or r["usage"].get("prompt_tokens") or 0 for r in timed)
        made = sum(r["usage"].get("completion_tokens") or 0 for r in timed)
        if max(firsts) > start:
            pp.append(prompt / (max(firsts) - start))
        if max(ends) > min(firsts) and made > len(timed):
            tg.append((made - len(timed)) / (max(ends) - min(firsts)))
    return {
        "runs": len(batches),
        "pp_total": _mean_std(pp),
        "tg_total": _mean_std(tg),
        "tg_per_user": _mean_std([v for r in rows if (v := _decode_rate(r)) is not None]),
        "ttfr": _mean_std([r["timing"]["first_byte"] for r in rows if r["timing"].get("first_byte") is not None]),
        "e2e_ttft": _mean_std([r["timing"]["ttft"] for r in rows if r["timing"].get("ttft") is not None]),
    }


def targets(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How many requests fell short of their target output length, and prompts off their target length."""
    short = [
        r for r in rows if (m := r["meta"].get("output_target")) and (r["usage"].get("completion_tokens") or 0) < m
    ]
    off = [
        r
        for r in rows
        if (n := r["meta"].get("prompt_target")) and abs((r["meta"].get("prompt_tokens") or 0) - n) > max(1, n // 100)
    ]
    counted = sorted({str(r["meta"].get("prompt_count")) for r in rows if r["meta"].get("prompt_count")})
    return {
        "requests": len(rows),
        "output_short": len(short),
        "output_short_mean_ratio": (
            sum((r["usage"].get("completion_tokens") or 0) / r["meta"]["output_target"] for r in short) / len(short)
            if short
            else None
        ),
        "prompt_off_target": len(off),
        "prompt_count": counted,
    }


def by_length(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per task and target context length: accuracy (items once), TTFT and decode rate (warm-up left out)."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["meta"].get("context_tokens") is not None:
            groups[(r["task"], int(r["meta"]["context_tokens"]))].append(r)
    out: dict[str, dict[str, Any]] = {}
    for (task, length), group in sorted(groups.items()):
        cell = Cell.of(item_scores((r["sample_id"], r["score"]["correct"]) for r in group))
        timed = [r for r in group if not r.get("warmup") and r["status"] != "transport_error"]
        out.setdefault(task, {})[str(length)] = {
            "accuracy": cell.model_dump(),
            "prompt_tokens": stats((r["meta"].get("prompt_tokens") for r in group), ()),
            "ttft": stats((r["timing"].get("ttft") for r in timed), (50, 90)),
            "first_answer": stats((r["timing"].get("first_content") for r in timed), (50, 90)),
            "decode_rate": stats((_decode_rate(r) for r in timed), (50,)),
        }
    return out


_READ = ("task", "sample_id", "level", "warmup", "session", "sent_at", "status", "score", "meta", "usage", "timing")
"""The fields of a record read here: only these are kept, so long runs stay small."""


def collect(
    records: Iterable[dict[str, Any]], shaping: dict[str, Any] | None, slo: dict[str, float] | None = None
) -> dict[str, Any]:
    """Everything this module adds to summary.json, from the final records (one pass, kept compact)."""
    from qualeval.runsummary import timed_of

    shaping = shaping or {}
    workload = shaping.get("workload")
    kept: list[dict[str, Any]] = []
    per_endpoint: dict[str, list[Any]] = defaultdict(list)
    for row in records:
        row = {**row, "meta": row.get("meta") or {}, "usage": row.get("usage") or {}, "timing": row.get("timing") or {}}
        if row.get("endpoint"):
            per_endpoint[row["endpoint"]].append(timed_of(row))
        if not workload and row["meta"].get("context_tokens") is None:
            continue  # nothing below reads it: a plain run of 100,000 records stays flat in memory
        kept.append({k: row.get(k) for k in _READ})
    out: dict[str, Any] = {}
    measured = [r for r in kept if not r.get("warmup") and r["status"] != "transport_error"]
    if workload:
        levels: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in measured:
            levels[r.get("level", "")].append(r)
        percentiles = workload.get("percentiles") or [50, 90, 95, 99]
        out["workload"] = {
            **{k: workload.get(k) for k in ("name", "style", "mirrors", "prompts", "percentiles")},
            "levels": {
                label: {"vllm": vllm_figures(rows, percentiles), "llama_benchy": benchy_figures(rows)}
                for label, rows in levels.items()
            },
            "targets": targets(measured),
            "forcing": shaping.get("forcing"),
        }
    lengths = by_length(kept)
    if lengths:
        out["context"] = {"depth": (shaping.get("context") or {}).get("depth"), "tasks": lengths}
    if len(per_endpoint) > 1:
        out["endpoints"] = {
            url: speed(rows, slo or {}).model_dump(mode="json") for url, rows in sorted(per_endpoint.items())
        }
    return out
