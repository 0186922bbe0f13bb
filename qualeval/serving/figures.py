"""The serving figures of a run, as the tools people compare with define them, beside quality.

- `vllm`: vllm bench serve's names and definitions: completed requests, duration, total input and output tokens,
  request, output and total token throughput, and mean / median / percentiles of TTFT, TPOT, ITL and E2EL;
  plus what it lacks: time to first answer token and reasoning tokens.
- `llama-benchy`: per batch of `concurrency` requests (a "run"), as its results.py computes them: prompt
  processing t/s (the batch's prompt tokens over the time to its last first token), token generation t/s (the
  tokens after each first one over the time from the batch's first first token to its last token) and peak t/s
  (the most tokens in any 1-second window); per request, tg t/s and peak t/s. Mean ± std.
- per target context length: accuracy with its interval, TTFT and decode rate.
- per replica: qualeval's speed figures for the requests each one answered.

All milliseconds; warm-up requests and failed ones are left out of speed, as everywhere in qualeval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from qualeval.figures import answered_cell, duration_of, speed
from qualeval.records import (
    BenchyFigures,
    ContextFigures,
    LengthFigures,
    MeanStd,
    Record,
    ServingFigures,
    Shape,
    ShapedWorkload,
    Shaping,
    Stats,
    Targets,
    Timed,
    VllmFigures,
    WorkloadFigures,
    WorkloadLevel,
)
from qualeval.serving.rulenotes import rule_notes
from qualeval.wire import interpolated, merge, percentile

__all__ = ["collect", "stats"]

_UNSHAPED = Shape()  # one for every row shaping left alone, so that the rows stay small


def stats(values: Iterable[float | None], percentiles: Sequence[float]) -> Stats | None:
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
    shape: Shape
    """What shaping made of the prompt (all None: the task's own item)."""
    processed: int | None = None
    """The prompt tokens llama.cpp says it processed or took from its cache (timings: prompt_n + cache_n)."""
    scored: bool = True
    """False: a workload's synthetic prompt, whose output length is a target; a task's item has a budget."""

    @classmethod
    def of(cls, record: Record) -> Served:
        timings = record.server_timings
        processed = None
        if timings is not None and timings.prompt_n is not None:
            processed = timings.prompt_n + (timings.cache_n or 0)
        return cls(
            record.timed(),
            record.task,
            record.sample_id,
            record.timing.first_byte,
            record.usage.prompt_tokens,
            record.shape or _UNSHAPED,
            processed,
            record.scored,
        )

    @property
    def prompt_tokens(self) -> int:
        """The prompt's tokens as shaping counted them, else as the server reported them."""
        return self.shape.prompt_tokens or self.server_prompt_tokens or 0

    @property
    def output_tokens(self) -> int:
        return self.timed.completion_tokens or 0

    @property
    def decode_rate(self) -> float | None:
        tpot = self.timed.tpot
        return 1000.0 / tpot if tpot else None

    @property
    def last_token(self) -> float | None:
        """When the last token arrived (ms after sending): the first one and the gaps between those after it."""
        t = self.timed
        return None if t.ttft is None else t.ttft + (t.itl_mean or 0.0) * t.itl_count

    @property
    def benchy_prompt_tokens(self) -> int:
        """llama-benchy's prompt tokens of a request: the server's usage.prompt_tokens where it is within 20% of
        the count it expected, else that count. It expects the text's own tokens (pp less the template's, the
        context's with a context), so where the template holds more than a fifth of a short prompt its pp t/s
        counts the text alone."""
        counted = self.shape.prompt_tokens or 0
        expected, served = counted - (self.shape.template_tokens or 0), self.server_prompt_tokens
        if served and (not counted or abs(served - expected) < expected * 0.2):
            return served
        return expected

    def token_times(self) -> list[float]:
        """Its tokens' arrival times (Unix seconds), spread evenly from the first to the last, as llama-benchy
        spreads a response's usage.completion_tokens when the server sends no token_ids."""
        first, last, n = self.timed.ttft, self.last_token, self.output_tokens
        if first is None or last is None or self.timed.sent_at is None or n < 1:
            return []
        start = self.timed.sent_at + first / 1000.0
        step = (last - first) / 1000.0 / (n - 1) if n > 1 and last > first else 0.0
        return [start + i * step for i in range(n)]

    @property
    def finished_at(self) -> float:
        """When the response ended (Unix seconds); only for rows with a send time and an end."""
        # the callers' filters make both times present, which no type of a row says
        return self.timed.sent_at + self.timed.end / 1000.0  # type: ignore[operator]


def _itl(rows: Sequence[Served], percentiles: Sequence[float]) -> Stats | None:
    """Pooled over every gap of every request, from the requests' histograms."""
    count = sum(r.timed.itl_count for r in rows)
    if not count:
        return None
    hist = merge(r.timed.itl_hist for r in rows)
    mean = sum((r.timed.itl_mean or 0) * r.timed.itl_count for r in rows)
    out = {"n": float(count), "mean": mean / count, "median": percentile(hist, 0.5) or 0.0}
    out.update({f"p{p:g}": percentile(hist, p / 100) or 0.0 for p in percentiles})
    return out


def vllm_figures(rows: Sequence[Served], percentiles: Sequence[float]) -> VllmFigures:
    duration = duration_of([r.timed for r in rows])
    prompt = sum(r.prompt_tokens for r in rows)
    output = sum(r.output_tokens for r in rows)
    return VllmFigures(
        completed=len(rows),
        duration_s=duration,
        total_input_tokens=prompt,
        total_input_tokens_server=sum(r.server_prompt_tokens or 0 for r in rows),
        total_output_tokens=output,
        request_throughput=len(rows) / duration if duration else None,
        output_throughput=output / duration if duration else None,
        total_token_throughput=(prompt + output) / duration if duration else None,
        ttft=stats((r.timed.ttft for r in rows), percentiles),
        tpot=stats((r.timed.tpot for r in rows), percentiles),
        itl=_itl(rows, percentiles),
        e2el=stats((r.timed.end for r in rows), percentiles),
        first_answer=stats((r.timed.first_content for r in rows), percentiles),
        reasoning_tokens=stats((r.timed.reasoning_tokens for r in rows), percentiles),
        decode_per_user=stats((r.decode_rate for r in rows), percentiles),
    )


def _mean_std(values: Sequence[float]) -> MeanStd | None:
    if not values:
        return None
    mean = sum(values) / len(values)
    return MeanStd(mean=mean, std=math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)), n=len(values))


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
    # only for rows filtered to a send time: a list's filter does not narrow its items' fields
    return row.timed.sent_at  # type: ignore[return-value]


def peak(times: list[float], window: float = 1.0) -> float | None:
    """llama-benchy's peak t/s: the most tokens in any window of `window` seconds ending at a token, per
    second; over the span itself when every token falls within less than a window."""
    if not times:
        return None
    times = sorted(times)
    span = times[-1] - times[0]
    if 0 < span < window:
        return len(times) / span
    best, low = 0, 0
    for high, at in enumerate(times):
        while low < high and times[low] <= at - window:
            low += 1
        best = max(best, high - low + 1)
    return best / window


def _batch_rates(batch: Sequence[Served]) -> tuple[float | None, float | None, float | None]:
    """One batch's prompt processing, token generation and peak rates (tokens per second), where they can be
    told: llama-benchy's `_process_batch`."""
    timed = [r for r in batch if r.timed.sent_at is not None and r.timed.ttft is not None]
    if not timed:
        return None, None, None
    start = min(_sent(r) for r in timed)
    # `timed` holds only rows with a first token, so with a last one too; mypy cannot narrow through the filter
    firsts = [_sent(r) + r.timed.ttft / 1000.0 for r in timed]  # type: ignore[operator]
    lasts = [_sent(r) + r.last_token / 1000.0 for r in timed]  # type: ignore[operator]
    decoded = sum(r.output_tokens - 1 for r in timed if _tg_per_user(r) is not None)
    prompt = sum(r.benchy_prompt_tokens for r in timed)
    pp = prompt / (max(firsts) - start) if max(firsts) > start else None
    tg = decoded / (max(lasts) - min(firsts)) if max(lasts) > min(firsts) and decoded else None
    return pp, tg, peak([at for r in timed for at in r.token_times()])


def _tg_per_user(row: Served) -> float | None:
    """(tokens - 1) / (last token - first token): llama-benchy's tg t/s of one request."""
    first, last, n = row.timed.ttft, row.last_token, row.output_tokens
    if first is None or last is None or n < 2 or last <= first:
        return None
    return (n - 1) / ((last - first) / 1000.0)


def benchy_figures(rows: Sequence[Served]) -> BenchyFigures:
    """llama-benchy's table: pp, tg and peak t/s per batch (total over the batch); tg and peak t/s per request;
    ttfr and e2e_ttft; and the prompt tokens counted (its rule) and processed (llama.cpp's timings)."""
    batches = _batches(rows)
    rates = [_batch_rates(batch) for batch in batches]
    return BenchyFigures(
        runs=len(batches),
        pp_total=_mean_std([pp for pp, _, _ in rates if pp is not None]),
        tg_total=_mean_std([tg for _, tg, _ in rates if tg is not None]),
        peak_total=_mean_std([p for _, _, p in rates if p is not None]),
        tg_per_user=_mean_std([v for r in rows if (v := _tg_per_user(r)) is not None]),
        peak_per_user=_mean_std([v for r in rows if (v := peak(r.token_times())) is not None]),
        ttfr=_mean_std([r.first_byte for r in rows if r.first_byte is not None]),
        e2e_ttft=_mean_std([r.timed.ttft for r in rows if r.timed.ttft is not None]),
        prompt_tokens=_mean_std([float(r.benchy_prompt_tokens) for r in rows]),
        prompt_processed=_mean_std([float(r.processed) for r in rows if r.processed is not None]),
    )


def targets(rows: Sequence[Served]) -> Targets:
    """How many requests fell short of their target output length, and prompts off their target length. Only a
    synthetic prompt has a target output length: a task's item answers in its own words, and stopping before
    the budget is its answer ending, not a shortfall."""
    short = [(r, m) for r in rows if not r.scored and (m := r.shape.output_target) and r.output_tokens < m]
    off = [r for r in rows if (n := r.shape.prompt_target) and abs((r.shape.prompt_tokens or 0) - n) > max(1, n // 100)]
    counted = sorted({r.shape.prompt_count for r in rows if r.shape.prompt_count})
    return Targets(
        requests=len(rows),
        output_short=len(short),
        output_short_mean_ratio=(sum(r.output_tokens / target for r, target in short) / len(short) if short else None),
        prompt_off_target=len(off),
        prompt_count=counted,
    )


def _measured(row: Served) -> bool:
    """Counted in speed figures: neither a warm-up request nor one the model never answered."""
    return not row.timed.warmup and row.timed.the_models


def by_length(rows: Sequence[Served]) -> dict[str, dict[str, LengthFigures]]:
    """Per task and target context length: accuracy over the items answered (once each), the requests the
    endpoint failed (a context too long for the server is an error, not a wrong answer), TTFT and decode rate
    (warm-up left out)."""
    groups: dict[tuple[str, int], list[Served]] = defaultdict(list)
    for r in rows:
        if (length := r.shape.context_tokens) is not None:
            groups[(r.task, length)].append(r)
    out: dict[str, dict[str, LengthFigures]] = {}
    for (task, length), group in sorted(groups.items()):
        cell, failed = answered_cell((r.item, r.timed.correct, r.timed.status) for r in group)
        timed = [r for r in group if _measured(r)]
        out.setdefault(task, {})[str(length)] = LengthFigures(
            accuracy=cell,
            endpoint_errors=failed,
            prompt_tokens=stats((r.shape.prompt_tokens for r in group), ()),
            ttft=stats((r.timed.ttft for r in timed), (50, 90)),
            first_answer=stats((r.timed.first_content for r in timed), (50, 90)),
            decode_rate=stats((r.decode_rate for r in timed), (50,)),
        )
    return out


def _prompt_tokens(rows: Sequence[Served]) -> tuple[int, int]:
    """The prompts' tokens as shaping counted them, and as the server reported them (usage.prompt_tokens)."""
    return sum(r.prompt_tokens for r in rows), sum(r.server_prompt_tokens or 0 for r in rows)


def _workload(workload: ShapedWorkload, measured: list[Served], shaping: Shaping) -> WorkloadFigures:
    levels: dict[str, list[Served]] = defaultdict(list)
    for r in measured:
        levels[r.timed.level].append(r)
    percentiles = workload.percentiles or [50, 90, 95, 99]
    return WorkloadFigures(
        name=workload.name,
        style=workload.style,
        mirrors=workload.mirrors,
        prompts=workload.prompts,
        percentiles=workload.percentiles,
        levels={
            label: WorkloadLevel(vllm=vllm_figures(rows, percentiles), llama_benchy=benchy_figures(rows))
            for label, rows in levels.items()
        },
        targets=targets(measured),
        forcing=shaping.forcing,
        template=shaping.template,
        notes=rule_notes(workload, shaping, _prompt_tokens(measured)) if workload.prompts.kind != "task" else [],
    )


def collect(
    records: Iterable[Record], shaping: Shaping | None, slo: dict[str, float] | None = None
) -> ServingFigures | None:
    """Everything this module adds to summary.json, from the final records (one pass, kept compact); None when
    the run has none of it."""
    shaping = shaping or Shaping()
    workload = shaping.workload
    kept: list[Served] = []
    per_endpoint: dict[str, list[Timed]] = defaultdict(list)
    for record in records:
        if record.endpoint:
            per_endpoint[record.endpoint].append(record.timed())
        if workload or (record.shape is not None and record.shape.context_tokens is not None):
            kept.append(Served.of(record))  # nothing reads the others: a plain run of 100,000 records stays small
    out = ServingFigures()
    if workload:
        out.workload = _workload(workload, [r for r in kept if _measured(r)], shaping)
    lengths = by_length(kept)
    if lengths:
        out.context = ContextFigures(depth=shaping.context.depth if shaping.context else None, tasks=lengths)
    if len(per_endpoint) > 1:
        out.endpoints = {url: speed(rows, slo or {}) for url, rows in sorted(per_endpoint.items())}
    return out if out.workload or out.context or out.endpoints else None
