"""What a run adds for serving benchmarks, kept out of run.py: the client over one or several replicas, the
once-a-second sampler, and the serving figures for the summary."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from qualeval.records import ClientConfig, MeanMax, RunConfig, RunStore, ServingFigures, Shaping
from qualeval.serving.endpoints import Router
from qualeval.serving.figures import collect
from qualeval.serving.gaps import server_gaps
from qualeval.serving.lengths import headers_of
from qualeval.serving.timeseries import Sampler, server_summary

__all__ = ["endpoints_of", "serving_client", "serving_figures"]


def endpoints_of(config: RunConfig) -> list[str]:
    """Every replica: `--base-url` first, then any more given (`--base-url` repeated, or `endpoints`)."""
    more = [u for u in config.endpoints if u != config.base_url]
    return [config.base_url, *more]


@contextlib.asynccontextmanager
async def serving_client(
    config: RunConfig, client_config: ClientConfig, cap: int, on_record: Callable[[Any], None] | None
) -> AsyncIterator[tuple[Router, Callable[[Any], None]]]:
    """The run's client (a router over the replicas) and the time-series sampler around it. Yields the router
    and the record callback that tells both the sampler and the caller's own callback."""
    urls = endpoints_of(config)
    assert config.out is not None
    sampler = Sampler(config.out / "timeseries.jsonl", urls, headers_of(config.api_key), warmup=config.warmup)
    async with Router(urls, lambda url: client_config.model_copy(update={"base_url": url.rstrip("/")}), cap) as router:

        def recorded(record: Any) -> None:
            sampler.record(record)
            if on_record is not None:
                on_record(record)

        sampler.start(router)
        try:
            yield router, recorded
        finally:
            await sampler.stop()


def serving_figures(
    store: RunStore, config: RunConfig, shaping: Shaping | None, series: Path | None = None
) -> tuple[ServingFigures | None, dict[str, dict[str, MeanMax]] | None, dict[str, str] | None]:
    """The summary's `serving` (workload, context lengths, replicas), `server` (the server's own metrics) and
    `server_gaps` (why a metric has no figure), from the records in `store` and the time series in `series` (the
    store's own by default)."""
    root = series or store.root
    server = server_summary(root) or None
    return collect(store.records(), shaping, config.slo), server, server_gaps(root, server) or None
