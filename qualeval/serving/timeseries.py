"""A run sampled once a second, from both ends, into `timeseries.jsonl` in the run directory.

Client side: output tokens per second (of the requests that finished in the second), requests in flight and
queued, errors, and the right answers among the scored ones (for rolling accuracy). Server side: every replica's
Prometheus `/metrics`, parsed with prometheus_client's text parser (its OpenMetrics parser for an OpenMetrics
body) and read through the metric names in `servermetrics.yaml` (data, one block per server). A server without
`/metrics` is noted once and skipped. The file is read back here too: the report draws it over time, and serving
sums it up and resumes its sampler from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import yaml
from pydantic import ValidationError

from qualeval.errors import InputError
from qualeval.records import MeanMax, SeriesPoint, ServerSample
from qualeval.serving.lengths import root_of

__all__ = ["Sampler", "counts", "metric_maps", "read_metrics", "read_series", "server_summary", "timed"]

FIGURES = tuple(name for name in ServerSample.model_fields if name != "server")


@cache
def metric_maps(path: str | None = None) -> dict[str, dict[str, Any]]:
    """Each server's mapping from qualeval's figure names to its metric names; a bad file is one line."""
    where = path or "qualeval/serving/servermetrics.yaml"
    text = Path(path).read_text() if path else (resources.files("qualeval.serving") / "servermetrics.yaml").read_text()
    maps = yaml.safe_load(text)
    for server, spec in (maps or {}).items():
        if not isinstance(spec, dict) or "detect" not in spec:
            raise InputError(f"{where}: field '{server}.detect' is missing")
        for name, how in spec.items():
            if name == "detect":
                continue
            if name not in FIGURES or not isinstance(how, dict) or not {"gauge", "rate", "delta", "ratio"} & set(how):
                raise InputError(f"{where}: field '{server}.{name}': expected a figure with gauge/rate/delta/ratio")
    return maps


_SUFFIXES = ("", "_total", "_created", "_bucket", "_count", "_sum", "_info", "_gcount", "_gsum")


def _families(text: str, content_type: str) -> list[Any]:
    """The metric families of a scrape: an OpenMetrics body (by its content type, or its closing `# EOF`, as
    vLLM's newer frontend sends it whatever was asked) through prometheus_client's OpenMetrics parser, which
    a body it finds malformed falls back from; else the Prometheus text parser."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
    from prometheus_client.parser import text_string_to_metric_families as prometheus

    if "openmetrics" in content_type or text.rstrip().endswith("# EOF"):
        with contextlib.suppress(ValueError):
            return list(openmetrics(text))
    return list(prometheus(text))


def read_metrics(text: str, content_type: str = "") -> dict[str, float]:
    """Sample name -> value summed over label sets, from the Prometheus text or OpenMetrics exposition. A sample
    is named as its family's `# TYPE` line names it: prometheus_client's OpenMetrics exposition writes
    `vllm:x` there and `vllm_x` on the samples, and servermetrics.yaml names the metric, not the escaping."""
    families = _families(text, content_type)
    declared = {f.name.replace(":", "_"): f.name for f in families if ":" in f.name}
    out: dict[str, float] = {}
    counts: dict[str, int] = {}
    for family in families:
        for sample in family.samples:
            name = _declared_name(sample.name, declared)
            out[name] = out.get(name, 0.0) + float(sample.value)
            counts[name] = counts.get(name, 0) + 1
    out.update({f"#{k}": float(v) for k, v in counts.items()})  # label sets per name, for `reduce: mean`
    return out


def _declared_name(name: str, declared: dict[str, str]) -> str:
    if not declared:
        return name
    for suffix in _SUFFIXES:
        base = name[: len(name) - len(suffix)]
        if name.endswith(suffix) and base in declared:
            return declared[base] + suffix
    return name


def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _gauge(now: dict[str, float], how: dict[str, Any]) -> float | None:
    for name in _names(how["gauge"]):
        if name in now:
            return now[name] / now[f"#{name}"] if how.get("reduce") == "mean" else now[name]
    return None


def figures(
    spec: dict[str, Any], now: dict[str, float], before: dict[str, float] | None, seconds: float
) -> dict[str, float | None]:
    """The mapped figures from two scrapes `seconds` apart (counters need both)."""
    out: dict[str, float | None] = {}
    for name, how in spec.items():
        if name == "detect":
            continue
        if "gauge" in how:
            out[name] = _gauge(now, how)
            continue
        if before is None:
            continue
        if "ratio" in how:
            top, bottom = _names(how["ratio"])
            grown = now.get(bottom, 0.0) - before.get(bottom, 0.0)
            value = (now.get(top, 0.0) - before.get(top, 0.0)) / grown if grown > 0 else None
            out[name] = None if value is None else value + float(how.get("add", 0))
            continue
        counter = _names(how.get("rate") or how.get("delta"))[0]
        if counter in now:
            grown = now[counter] - before.get(counter, now[counter])
            out[name] = grown / seconds if "rate" in how and seconds > 0 else grown
    return out


def kind_of(now: dict[str, float], maps: dict[str, dict[str, Any]]) -> str | None:
    return next((server for server, spec in maps.items() if spec["detect"] in now), None)


class Sampler:
    """Writes one line a second while the run lasts; `record()` is told of every finished request."""

    def __init__(
        self, path: Path, urls: Sequence[str], headers: dict[str, str], interval: float = 1.0, warmup: int = 0
    ):
        self.path, self.interval = path, interval
        self.router: Any = None
        """What is in flight and queued (qualeval.serving.endpoints.Router), from `start()` on."""
        self.roots = [root_of(u) for u in urls]
        self.urls = list(urls)
        self.headers = headers
        self.counts = {"tokens": 0, "completed": 0, "errors": 0, "correct": 0, "scored": 0, "warmup": 0}
        self.measured = 0
        """Measured (not warm-up) requests finished in the current second."""
        self.warmup = warmup
        self.level: str | None = None
        self.warmed = 0
        self.warming = warmup > 0
        """A level's warm-up is under way: from the run's start, or a level's first warm-up, until its last
        warm-up or its first measured request is done (warm-ups go one at a time, before the level's requests)."""
        self.first: dict[str, dict[str, float]] = {}
        self.last: dict[str, dict[str, float]] = {}
        self.kinds: dict[str, str | None] = {}
        self.unread: dict[str, str] = {}
        """Why a replica gave no figure: kept for good where it has no /metrics qualeval reads."""
        self._task: asyncio.Task[None] | None = None
        self._started = time.perf_counter()

    def record(self, row: Any) -> None:
        """A finished request (a Record): its tokens, whether it failed, and whether it was right."""
        self.counts["completed"] += 1
        self.counts["tokens"] += row.usage.completion_tokens or 0
        self.counts["errors"] += row.status == "transport_error"
        scored = row.scored and row.status != "transport_error"
        self.counts["scored"] += scored
        self.counts["correct"] += bool(scored and row.score.correct)
        self.counts["warmup"] += bool(row.warmup)
        if not row.warmup:
            self.measured += 1
            self.level, self.warming = row.level, False
            return
        if row.level != self.level:
            self.level, self.warmed = row.level, 0
        self.warmed += 1
        self.warming = self.warmed < self.warmup

    async def _scrape(self, http: httpx.AsyncClient, url: str, root: str) -> dict[str, float] | None:
        """The replica's metrics now; None, with the reason in `unread`, where it gave none. Only a server that
        answered without metrics qualeval reads is given up on: a scrape that timed out or failed is tried again
        the next second (a busy server can be slow to answer)."""
        if self.kinds.get(url, "") is None:
            return None  # no /metrics there: noted once
        try:
            reply = await http.get(f"{root}/metrics")
        except httpx.TimeoutException:
            self.unread[url] = f"its /metrics did not answer within {http.timeout.read:g} s"
            return None
        except httpx.HTTPError as e:
            self.unread[url] = f"its /metrics could not be read ({type(e).__name__})"
            return None
        if reply.status_code >= 500:
            self.unread[url] = f"its /metrics answered HTTP {reply.status_code}"
            return None
        try:
            now = read_metrics(reply.text, reply.headers.get("content-type", "")) if reply.status_code == 200 else {}
        except ValueError:
            now = {}
        if url not in self.kinds:
            self.kinds[url] = kind_of(now, metric_maps())
            if self.kinds[url] is None:
                self.unread[url] = (
                    f"its server has no /metrics (HTTP {reply.status_code})"
                    if reply.status_code != 200
                    else "its /metrics names none of the metrics qualeval/serving/servermetrics.yaml maps"
                )
        if self.kinds[url] is None:
            return None
        self.unread.pop(url, None)
        return now

    async def _tick(self, http: httpx.AsyncClient, handle: Any, since: float) -> float:
        now = time.perf_counter()
        seconds = max(now - since, 1e-9)
        server: dict[str, ServerSample] = {}
        for url, root in zip(self.urls, self.roots, strict=True):
            got = await self._scrape(http, url, root)
            if got is None:
                continue
            kind = self.kinds[url]
            assert kind is not None
            sampled = figures(metric_maps()[kind], got, self.last.get(url), seconds)
            server[url] = ServerSample.model_validate({"server": kind, **sampled})
            self.first.setdefault(url, got)
            self.last[url] = got
        counts, measured = dict(self.counts), self.measured
        self.counts, self.measured = dict.fromkeys(self.counts, 0), 0
        flight = self.router.running
        point = SeriesPoint(
            t=round(now - self._started, 3),
            wall=time.time(),
            output_tokens_per_s=counts["tokens"] / seconds,
            in_flight=flight,
            queued=self.router.queued,
            **{**counts, "warmup": bool(counts["warmup"]) or self.warming},
            # warm-ups go one at a time: more than one in flight, or one once the warm-up is over, is measured work
            timed=bool(measured) or flight > 1 or (flight == 1 and not self.warming),
            span=round(seconds, 3),
            server=server,
            unread={url: why for url, why in self.unread.items() if url not in server},
        )
        handle.write(point.model_dump_json(exclude_none=True).encode() + b"\n")
        handle.flush()
        return now

    async def _before(self, http: httpx.AsyncClient) -> None:
        """One scrape before the run's first second, so that its counters' rates are read too (the busiest
        second of a short run is often its first)."""
        for url, root in zip(self.urls, self.roots, strict=True):
            got = await self._scrape(http, url, root)
            if got is not None:
                self.first.setdefault(url, got)
                self.last[url] = got

    async def _loop(self) -> None:
        async with httpx.AsyncClient(headers=self.headers, timeout=max(self.interval * 0.8, 0.2)) as http:
            with self.path.open("ab") as handle:
                await self._before(http)
                since = time.perf_counter()
                try:
                    while True:
                        await asyncio.sleep(self.interval - (time.perf_counter() - since) % self.interval)
                        since = await self._tick(http, handle, since)
                except asyncio.CancelledError:
                    await self._tick(http, handle, since)  # the last partial second counts too
                    raise

    def start(self, router: Any) -> None:
        """Sample `router`'s requests from now on."""
        self.router = router
        # a resumed run goes on from its last second, so the series stays in time order
        last = max((point.t for point in read_series(self.path.parent)), default=-1.0)
        self._started = time.perf_counter() - (last + 1.0 if last >= 0 else 0.0)
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def timed(point: SeriesPoint) -> bool:
    """The second held the run's own measured work (files of an older qualeval: it was no warm-up second)."""
    return point.timed if point.timed is not None else not point.warmup


def counts(point: SeriesPoint, how: dict[str, Any]) -> bool:
    """A figure of this sample is the run's: a gauge where requests were in flight when it was read, a figure
    over the second where the second held measured work (in flight at its end, or finished in it)."""
    if not timed(point):
        return False
    return bool(point.in_flight) if "gauge" in how else bool(point.in_flight or point.completed)


def server_summary(root: Path) -> dict[str, dict[str, MeanMax]]:
    """Per replica and figure: mean and max over the seconds of the run's own work, as the report and `compare`
    show them. A second in which a warm-up ended and the level's measured requests ran counts for the level; one
    that held only warm-up work does not. A gauge (running, KV-cache usage) is the server's state when sampled:
    it counts only where requests were in flight then. A figure over the second (a counter's rate, delta or
    ratio) counts where the second held work: requests in flight at its end, or some that finished in it (a small
    model finishes a request between two samples). A sample that meets neither reads an idle server: its zeros
    would pass for the run's figures. A rate's mean is over time, each sample weighted by the seconds it covers
    (the last one, taken as the run ends, covers part of one), so it is the counter's growth over those seconds.
    A replica with no figure is `{}` (`server_gaps` in qualeval.serving.gaps says why)."""
    maps = metric_maps()
    values: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for point in read_series(root):
        for url, got in point.server.items():
            figures = values.setdefault(url, {})
            for name, value in got.figures().items():
                how = maps.get(got.server, {}).get(name, {})
                if counts(point, how):
                    weight = (point.span or 1.0) if "rate" in how else 1.0
                    figures.setdefault(name, []).append((value, weight))
    return {url: {name: _mean_max(v) for name, v in figs.items()} for url, figs in values.items()}


def _mean_max(values: list[tuple[float, float]]) -> MeanMax:
    total = sum(w for _, w in values)
    mean = sum(v * w for v, w in values) / total if total > 0 else sum(v for v, _ in values) / len(values)
    return MeanMax(mean=mean, max=max(v for v, _ in values), n=len(values))


def read_series(root: Path) -> Iterator[SeriesPoint]:
    """The run's seconds; a line cut short by a kill is left out, as the sampler would have finished it."""
    path = root / "timeseries.jsonl"
    if not path.exists():
        return
    with path.open("rb") as handle:
        for line in handle:
            if line.endswith(b"\n"):
                with contextlib.suppress(ValidationError):
                    yield SeriesPoint.model_validate_json(line)
