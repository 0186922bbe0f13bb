"""How a level's requests are offered to the endpoint: in batches (llama-benchy), by a fixed number of workers
(a closed loop) or on their own arrival clock (an open loop, as vllm bench serve sends them)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["Send", "batch_loop", "closed_loop", "open_loop"]

T = TypeVar("T")
Send = Callable[[T], Coroutine[Any, Any, None]]
"""One item's request, recorded; a coroutine, not any awaitable: the open loop makes each a task of its own."""


async def batch_loop(todo: list[T], size: int, run: Send[T]) -> None:
    """llama-benchy's load: `size` requests sent at once, the next batch only when all of them have ended."""
    for start in range(0, len(todo), size):
        await asyncio.gather(*(run(item) for item in todo[start : start + size]))


async def closed_loop(todo: list[T], workers: int, run: Send[T]) -> None:
    """A fixed number of requests in flight: each worker sends its next item as soon as one finishes."""
    queue = iter(todo)

    async def worker() -> None:
        for item in queue:  # workers share one iterator: each item is taken once
            await run(item)

    await asyncio.gather(*(worker() for _ in range(min(workers, max(len(todo), 1)))))


async def open_loop(todo: list[T], rate: float, burstiness: float, rng: random.Random, run: Send[T]) -> None:
    """Requests arrive on their own clock, as in vllm bench serve: gamma-distributed gaps with mean 1/rate
    (shape `burstiness`: 1 is a Poisson process). The client's cap still bounds requests in flight."""
    pending: list[asyncio.Task[None]] = []
    for index, item in enumerate(todo):
        if index:
            await asyncio.sleep(rng.gammavariate(burstiness, 1.0 / (rate * burstiness)))
        pending.append(asyncio.create_task(run(item)))
    await asyncio.gather(*pending)
