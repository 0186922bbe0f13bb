"""Sending a planned answer at the model's pace: a queue for a decoding slot, the time to the first token, one
interval per token that stretches as more requests share the batch, and the gauges and log that follow it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from qualeval.records import UNKNOWN_QUESTION
from qualeval.sim.faults import cut_whole, ending, framed
from qualeval.sim.frames import Step
from qualeval.sim.httpio import head, send_json
from qualeval.sim.observe import log_record
from qualeval.sim.planning import Plan
from qualeval.sim.state import ServerState

__all__ = ["send_stream", "send_whole", "sleep_until"]


def _marks(plan: Plan) -> dict[str, str]:
    """The header that says an answer is the server's refusal of a question not in its key, not a model's."""
    return dict([UNKNOWN_QUESTION]) if plan.unknown else {}


async def sleep_until(when: float, precise: bool = False) -> None:
    """Sleep until `when`. The event loop's timers can wake up to a millisecond late, so for the first
    token (where TTFT precision matters) sleep short and yield-spin the last two milliseconds."""
    margin = 0.002 if precise else 0.0
    delay = when - time.perf_counter() - margin
    if delay > 0:
        await asyncio.sleep(delay)
    while precise and time.perf_counter() < when:
        await asyncio.sleep(0)


def _interval(state: ServerState, plan: Plan) -> float:
    return plan.decode_s * (1 + state.config.latency.batch_slowdown * max(state.in_flight - 1, 0))


@contextlib.asynccontextmanager
async def _running(state: ServerState, plan: Plan, received: float) -> AsyncIterator[tuple[float, list[int]]]:
    """Wait for a slot (the waiting gauge), then run (the running gauge, KV-cache use) until the body ends.
    Yields when prefill starts (queueing delays the first token) and a list that the pacing loop adds the
    tokens it sent to; the server's counters and log are updated at the end."""
    observed = state.observed
    queued = time.perf_counter()
    observed.waiting += 1
    admitted = False
    try:
        async with state.slots if state.slots is not None else contextlib.nullcontext():
            observed.waiting -= 1
            admitted = True
            start = received + (time.perf_counter() - queued)
            state.in_flight += 1
            held = observed.admitted(plan.prompt, plan.prompt_tokens, plan.tokens)
            sent = [0]
            try:
                yield start, sent
            finally:
                state.in_flight -= 1
                observed.add("generation_tokens", -sent[0])  # counted live already; the total is exact
                record = log_record(received, plan.prompt_tokens, plan.tokens, start + plan.ttft_s, time.perf_counter())
                observed.finished(held, plan.tokens, plan.spec, record)
    finally:
        if not admitted:
            observed.waiting -= 1


async def send_whole(
    state: ServerState, plan: Plan, writer: asyncio.StreamWriter, received: float, fault: str | None
) -> bool:
    """The non-stream answer, once the last token would be decoded. True when the connection may carry on."""
    async with _running(state, plan, received) as (start, _):
        if not state.config.latency.burst:
            await sleep_until(start + plan.ttft_s, precise=True)
            for _ in range(max(plan.tokens - 1, 0)):
                await asyncio.sleep(_interval(state, plan))
    if fault in ("drop", "malformed", "stall"):
        return await cut_whole(writer, plan.whole, fault, state.config.stall_s)
    await send_json(writer, 200, plan.whole, _marks(plan))
    return True


async def send_stream(
    state: ServerState, plan: Plan, writer: asyncio.StreamWriter, received: float, fault: str | None
) -> bool:
    """The event stream, each chunk when its tokens are decoded. True when the connection may carry on."""
    frames, end = framed(plan.steps, fault)
    chunked = {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache", **_marks(plan)}
    writer.write(head(200, "text/event-stream", chunked))
    async with _running(state, plan, received) as (start, sent):
        if state.config.latency.burst:
            writer.write(b"".join(data for _, data in frames if data))
            await writer.drain()
        else:
            await _pace(state, frames, plan, writer, start, sent)
        return await ending(end, writer, state.config.stall_s)


async def _pace(
    state: ServerState, frames: list[Step], plan: Plan, writer: asyncio.StreamWriter, start: float, sent: list[int]
) -> None:
    started = False
    due = start + plan.ttft_s
    for tokens, data in frames:
        first = not started
        for _ in range(tokens):
            if started:
                due += _interval(state, plan)
            started = True
        if tokens:
            await sleep_until(due, precise=first)
            sent[0] += tokens
            state.observed.add("generation_tokens", tokens)  # live, as an engine counts each step
        if data is not None:
            writer.write(data)
            await writer.drain()
