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
from dataclasses import dataclass
from typing import Any

from qualeval.records import ENDPOINT_FAILED, Record, Timed
from qualeval.report.accuracy import answered_cell
from qualeval.report.speed import duration_of, speed
from qualeval.wire.histogram import interpolated, merge, percentile

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


@dataclass(frozen=True, slots=True)
class Served:
    """What these figures read of one record: its speed view and the few values beside it, kept compact (the
    prompt and the texts are dropped, so a long workload run stays small)."""

    timed: Timed
    task: str
    item: str
    first_byte: float | None
    server_prompt_tokens: int | None
    """The prompt tokens the server reported (usage)."""
    meta: dict[str, Any]

    @classmethod
    def of(cls, record: Record) -> Served:
        return cls(
            record.timed(),
            record.task,
            record.sample_id,
            record.timing.first_byte,
            record.usage.prompt_tokens,
            record.meta,
        )

    @property
    def prompt_tokens(self) -> int:
        """The prompt's tokens as shaping counted them, else as the server reported them."""
        return self.meta.get("prompt_tokens") or self.server_prompt_tokens or 0

    @property
    def output_tokens(self) -> int:
        return self.timed.completion_tokens or 0

    @property
    def decode_rate(self) -> float | None:
        tpot = self.timed.tpot
        return 1000.0 / tpot if tpot else None

    @property
    def finished_at(self) -> float:
        """When the response ended (Unix seconds); only for rows with a send time and an end."""
        return self.timed.sent_at + self.timed.end / 1000.0  # type: ignore[operator]


def _itl(rows: Sequence[Served], percentiles: Sequence[float]) -> dict[str, float] | None:
    """Pooled over every gap of every request, from the requests' histograms."""
    count = sum(r.timed.itl_count for r in rows)
    if not count:
        return None
    hist = merge(r.timed.itl_hist for r in rows)
    mean = sum((r.timed.itl_mean or 0) * r.timed.itl_count for r in rows)
    out = {"n": float(count), "mean": mean / count, "median": percentile(hist, 0.5) or 0.0}
    out.update({f"p{p:g}": percentile(hist, p / 100) or 0.0 for p in percentiles})
    return out


def vllm_figures(rows: Sequence[Served], percentiles: Sequence[float]) -> dict[str, Any]:
    duration = duration_of([r.timed for r in rows])
    prompt = sum(r.prompt_tokens for r in rows)
    output = sum(r.output_tokens for r in rows)
    return {
        "completed": len(rows),
        "duration_s": duration,
        "total_input_tokens": prompt,
        "total_input_tokens_server": sum(r.server_prompt_tokens or 0 for r in rows),
        "total_output_tokens": output,
        "request_throughput": len(rows) / duration if duration else None,
        "output_throughput": output / duration if duration else None,
        "total_token_throughput": (prompt + output) / duration if duration else None,
        "ttft": stats((r.timed.ttft for r in rows), percentiles),
        "tpot": stats((r.timed.tpot for r in rows), percentiles),
        "itl": _itl(rows, percentiles),
        "e2el": stats((r.timed.end for r in rows), percentiles),
        "first_answer": stats((r.timed.first_content for r in rows), percentiles),
        "reasoning_tokens": stats((r.timed.reasoning_tokens for r in rows), percentiles),
        "decode_per_user": stats((r.decode_rate for r in rows), percentiles),
    }


def _mean_std(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    mean = sum(values) / len(values)
    return {"mean": mean, "std": math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)), "n": len(values)}


def _batches(rows: Sequence[Served]) -> list[list[Served]]:
    """Requests grouped into llama-benchy's runs: a batch is sent together and the next only once it has ended,
    so a request sent after every one before it had finished opens a new batch."""
    timed = sorted((r for r in rows if r.timed.sent_at is not None and r.timed.end is not None), key=_sent)
    out: list[list[Served]] = []
    ended = -math.inf
    for r in timed:
        if not out or _sent(r) >= ended:
            out.append([])
        out[-1].append(r)
        ended = max(ended, r.finished_at) if len(out[-1]) > 1 else r.finished_at
    return out


def _sent(row: Served) -> float:
    return row.timed.sent_at  # type: ignore[return-value]


def _batch_rates(batch: Sequence[Served]) -> tuple[float | None, float | None]:
    """One batch's prompt processing and token generation rates (tokens per second), where they can be told."""
    timed = [r for r in batch if r.timed.sent_at is not None and r.timed.ttft is not None]
    if not timed:
        return None, None
    start = min(_sent(r) for r in timed)
    firsts = [_sent(r) + r.timed.ttft / 1000.0 for r in timed]  # type: ignore[operator]
    ends = [r.finished_at for r in timed]
    made = sum(r.output_tokens for r in timed)
    pp = sum(r.prompt_tokens for r in timed) / (max(firsts) - start) if max(firsts) > start else None
    tg = (made - len(timed)) / (max(ends) - min(firsts)) if max(ends) > min(firsts) and made > len(timed) else None
    return pp, tg


def benchy_figures(rows: Sequence[Served]) -> dict[str, Any]:
    """llama-benchy's table: pp and tg t/s per batch (total over the batch), tg t/s per user, ttfr, e2e_ttft."""
    batches = _batches(rows)
    rates = [_batch_rates(batch) for batch in batches]
    return {
        "runs": len(batches),
        "pp_total": _mean_std([pp for pp, _ in rates if pp is not None]),
        "tg_total": _mean_std([tg for _, tg in rates if tg is not None]),
        "tg_per_user": _mean_std([v for r in rows if (v := r.decode_rate) is not None]),
        "ttfr": _mean_std([r.first_byte for r in rows if r.first_byte is not None]),
        "e2e_ttft": _mean_std([r.timed.ttft for r in rows if r.timed.ttft is not None]),
    }


def targets(rows: Sequence[Served]) -> dict[str, Any]:
    """How many requests fell short of their target output length, and prompts off their target length."""
    short = [r for r in rows if (m := r.meta.get("output_target")) and r.output_tokens < m]
    off = [
        r
        for r in rows
        if (n := r.meta.get("prompt_target")) and abs((r.meta.get("prompt_tokens") or 0) - n) > max(1, n // 100)
    ]
    counted = sorted({str(r.meta.get("prompt_count")) for r in rows if r.meta.get("prompt_count")})
    return {
        "requests": len(rows),
        "output_short": len(short),
        "output_short_mean_ratio": (
            sum(r.output_tokens / r.meta["output_target"] for r in short) / len(short) if short else None
        ),
        "prompt_off_target": len(off),
        "prompt_count": counted,
    }


def _measured(row: Served) -> bool:
    """Counted in speed figures: neither a warm-up request nor one that failed for good."""
    return not row.timed.warmup and row.timed.status not in ENDPOINT_FAILED


def by_length(rows: Sequence[Served]) -> dict[str, dict[str, Any]]:
    """Per task and target context length: accuracy over the items answered (once each), the requests the
    endpoint failed (a context too long for the server is an error, not a wrong answer), TTFT and decode rate
    (warm-up left out)."""
    groups: dict[tuple[str, int], list[Served]] = defaultdict(list)
    for r in rows:
        if r.meta.get("context_tokens") is not None:
            groups[(r.task, int(r.meta["context_tokens"]))].append(r)
    out: dict[str, dict[str, Any]] = {}
    for (task, length), group in sorted(groups.items()):
        cell, failed = answered_cell((r.item, r.timed.correct, r.timed.status) for r in group)
        timed = [r for r in group if _measured(r)]
        out.setdefault(task, {})[str(length)] = {
            "accuracy": cell.model_dump(),
            "endpoint_errors": failed,
            "prompt_tokens": stats((r.meta.get("prompt_tokens") for r in group), ()),
            "ttft": stats((r.timed.ttft for r in timed), (50, 90)),
            "first_answer": stats((r.timed.first_content for r in timed), (50, 90)),
            "decode_rate": stats((r.decode_rate for r in timed), (50,)),
        }
    return out


def _workload(workload: dict[str, Any], measured: list[Served], forcing: Any) -> dict[str, Any]:
    levels: dict[str, list[Served]] = defaultdict(list)
    for r in measured:
        levels[r.timed.level].append(r)
    percentiles = workload.get("percentiles") or [50, 90, 95, 99]
    return {
        **{k: workload.get(k) for k in ("name", "style", "mirrors", "prompts", "percentiles")},
        "levels": {
            label: {"vllm": vllm_figures(rows, percentiles), "llama_benchy": benchy_figures(rows)}
            for label, rows in levels.items()
        },
        "targets": targets(measured),
        "forcing": forcing,
    }


def collect(
    records: Iterable[Record], shaping: dict[str, Any] | None, slo: dict[str, float] | None = None
) -> dict[str, Any]:
    """Everything this module adds to summary.json, from the final records (one pass, kept compact)."""
    shaping = shaping or {}
    workload = shaping.get("workload")
    kept: list[Served] = []
    per_endpoint: dict[str, list[Timed]] = defaultdict(list)
    for record in records:
        if record.endpoint:
            per_endpoint[record.endpoint].append(record.timed())
        if workload or record.meta.get("context_tokens") is not None:
            kept.append(Served.of(record))  # nothing reads the others: a plain run of 100,000 records stays small
    out: dict[str, Any] = {}
    if workload:
        out["workload"] = _workload(workload, [r for r in kept if _measured(r)], shaping.get("forcing"))
    lengths = by_length(kept)
    if lengths:
        out["context"] = {"depth": (shaping.get("context") or {}).get("depth"), "tasks": lengths}
    if len(per_endpoint) > 1:
        out["endpoints"] = {
            url: speed(rows, slo or {}).model_dump(mode="json") for url, rows in sorted(per_endpoint.items())
        }
    return out
