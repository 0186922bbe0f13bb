"""Several replicas of one model as one client: each request goes to the replica with the fewest in flight.

A layer over one ChatClient per base URL (`--base-url` given several times). The run's cap on requests in
flight holds across all replicas together; a request waiting for a free slot is queued here, and that wait is
added to its `timing.queued` (never to a server time). Each response says which replica answered it
(`endpoint`), so speed is reported per replica and overall. The counts of requests in flight and queued are
what the time-series sampler reads every second.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

from qualeval.records import ClientConfig
from qualeval.wire import ChatClient, ChatRequest, ChatResponse

__all__ = ["Router"]


class Router:
    """`async with Router(urls, make_config, cap) as router:` then `await router.chat(request)`; quacks like the
    one ChatClient it replaces (`config`, `chat`, `models`)."""

    def __init__(self, urls: Sequence[str], make_config: Callable[[str], ClientConfig], cap: int) -> None:
        if not urls:
            raise ValueError("a router needs at least one base URL")
        self.urls = [u.rstrip("/") for u in urls]
        # each client may hold the whole cap: the router's own slots are what bound the total
        self.clients = [ChatClient(make_config(u)) for u in urls]
        self.in_flight = [0] * len(urls)
        self.queued = 0
        self._slots = asyncio.Semaphore(cap)
        self._stack = contextlib.AsyncExitStack()

    @property
    def config(self) -> ClientConfig:
        return self.clients[0].config

    async def __aenter__(self) -> Router:
        await self._stack.__aenter__()
        for client in self.clients:
            await self._stack.enter_async_context(client)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.__aexit__(*exc)

    async def models(self) -> dict[str, Any]:
        return await self.clients[0].models()

    def pick(self) -> int:
        """The replica with the fewest requests in flight; ties go to the one listed first."""
        return min(range(len(self.clients)), key=lambda i: (self.in_flight[i], i))

    @property
    def running(self) -> int:
        return sum(self.in_flight)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        asked = perf_counter()
        self.queued += 1
        try:
            await self._slots.acquire()
        finally:
            self.queued -= 1
        waited = (perf_counter() - asked) * 1000.0
        try:
            index = self.pick()
            self.in_flight[index] += 1
            try:
                response = await self.clients[index].chat(request)
            finally:
                self.in_flight[index] -= 1
        finally:
            self._slots.release()
        response.timing.queued = (response.timing.queued or 0.0) + waited
        response.endpoint = self.urls[index]
        return response
