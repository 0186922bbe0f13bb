"""The probe's time: one budget for every request it sends, and how many it keeps in flight; and `asker`, the one
place a probe request is made.

A slow server whose model never stops (a small model on a few CPU cores) would otherwise take every request to
its token budget, all at once, and the probe would fail after many minutes. Here each request is cut off where the
budget ends, and comes back as an error that says so (`OUT_OF_TIME`): the check it served is inconclusive, never
failed, rejected or ignored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from qualeval.wire import ChatClient, ChatRequest, ChatResponse, ChatSender, Message, failed_response

__all__ = ["OUT_OF_TIME", "QUESTION", "Ask", "Pace", "asker", "is_late"]

QUESTION = "What is the capital of France? Answer in one word."
"""The probe's question: where the reasoning comes back, which thinking switch works, whether a budget holds."""

OUT_OF_TIME = "out of time"
"""How the error of a request the probe's time budget cut off begins."""


def is_late(resp: ChatResponse) -> bool:
    """Whether the probe's time budget ran out before this response came."""
    return resp.error is not None and resp.error.startswith(OUT_OF_TIME)


@dataclass(slots=True)
class Pace:
    """The clock of one probe: `seconds` in all from its start, and a gate on the requests in flight."""

    seconds: float
    widest: int
    """The most requests in flight, however fast the server."""
    ends: float = 0.0
    gate: asyncio.Semaphore | None = field(default=None)
    late: int = 0
    """Requests the budget cut off or never let out."""

    def __post_init__(self) -> None:
        self.ends = asyncio.get_running_loop().time() + self.seconds

    def left(self) -> float:
        return self.ends - asyncio.get_running_loop().time()

    def widen(self, took: float) -> int:
        """After the first requests, which took `took` seconds: as many in flight as requests of that length fit
        in the time left, between 2 and `widest`. A slow server then gets a few at a time, which finish, rather
        than every request at once, none of which does."""
        rounds = self.left() / took if took > 0 else float(self.widest)
        width = max(2, min(self.widest, int(rounds)))
        self.gate = asyncio.Semaphore(width)
        return width

    async def send(self, client: ChatSender, request: ChatRequest) -> ChatResponse:
        if self.gate is None:
            return await self._timed(client, request)
        async with self.gate:
            return await self._timed(client, request)

    async def _timed(self, client: ChatSender, request: ChatRequest) -> ChatResponse:
        left = self.left()
        if left > 0:
            try:
                return await asyncio.wait_for(client.chat(request), left)
            except asyncio.TimeoutError:
                pass
        self.late += 1
        return failed_response(request, 0, None, f"{OUT_OF_TIME}: the probe's {self.seconds:g}s ran out")


Ask = Callable[..., Awaitable[ChatResponse]]
"""(text, seed, budget, stream=False, body=None) -> the endpoint's response: every request the probe sends."""


def asker(client: ChatClient, model: str, pace: Pace) -> Ask:
    """The one place a probe request is made: the model and a user message, with a check's own seed, budget and
    body, within the probe's time (`pace`)."""

    def ask(
        text: str, seed: int, budget: int, *, stream: bool = False, body: dict[str, Any] | None = None
    ) -> Awaitable[ChatResponse]:
        message = Message(role="user", content=text)
        request = ChatRequest(
            model=model, messages=(message,), max_tokens=budget, seed=seed, stream=stream, extra_body=body or {}
        )
        return pace.send(client, request)

    return ask
