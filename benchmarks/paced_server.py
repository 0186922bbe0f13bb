"""A paced OpenAI-style streaming server that logs when it really sent each chunk (for benchmarks/paced.py).

    python benchmarks/paced_server.py [--port 0] [--cpu N]

It answers POST /v1/chat/completions with a vLLM-style reasoning stream: headers and a role chunk at once,
the first reasoning chunk `ttft_ms` after the request arrived, then `reasoning` reasoning chunks and `answer`
answer chunks `pace_ms` apart, each its own write (its own TCP segment), then the finish chunk, a usage chunk
and `[DONE]`. The pacing comes from the request body (`ttft_ms`, `pace_ms`, `reasoning`, `answer`, `seed` as
the request's id); `pace_ms: 0` with `ttft_ms: 0` is burst mode: every chunk written at once, still one write each.
`calls: true` streams the answer as one tool call's deltas instead of text (vLLM's shape: the first delta gives
index, id and name, the rest an argument fragment each), ending `tool_calls`.

Each stream's chunks are due on a fixed schedule from the request's arrival, so a late chunk does not delay
the next. `GET /log` returns, and forgets, one row per finished request: id, arrival, first reasoning chunk
and first answer chunk, as `time.perf_counter()` seconds (CLOCK_MONOTONIC, the same clock in every process
of the machine) taken right before the write.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
import time
from typing import Any

import orjson

HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"transfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n"
)
LOG: list[list[float]] = []


def frame(event: bytes) -> bytes:
    """One SSE event as one HTTP chunk, the way uvicorn frames vLLM's writes."""
    data = b"data: " + event + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return frame(
        orjson.dumps(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion.chunk",
                "created": 1760000000,
                "model": "bench",
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
        )
    )


def call_deltas(answer: int) -> list[dict[str, Any]]:
    """The answer as one tool call streamed the way vLLM streams it: index, id, type and name first, then
    fragments of the arguments carrying only the index."""
    head = {"index": 0, "id": "chatcmpl-tool-bench", "type": "function"}
    out = [{"tool_calls": [{**head, "function": {"name": "get_weather", "arguments": ""}}]}] if answer else []
    out += [{"tool_calls": [{"index": 0, "function": {"arguments": f" word{i}"}}]} for i in range(1, answer)]
    return out


@functools.lru_cache(maxsize=8)
def frames(reasoning: int, answer: int, calls: bool = False) -> list[bytes]:
    """Role chunk, reasoning chunks, answer chunks (text, or `calls`: tool-call deltas), finish, usage, [DONE]
    and the last HTTP chunk."""
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning": f" step{i}"}) for i in range(reasoning)]
    if calls:
        out += [chunk(delta) for delta in call_deltas(answer)]
    else:
        out += [chunk({"content": f" word{i}"}) for i in range(answer)]
    usage = {"prompt_tokens": 12, "total_tokens": 12 + reasoning + answer, "completion_tokens": reasoning + answer}
    tail = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "bench", "choices": []}
    # the ending is one write: timers due at the same moment may run in any order
    out.append(
        chunk({}, "tool_calls" if calls else "stop")
        + frame(orjson.dumps({**tail, "usage": usage}))
        + frame(b"[DONE]")
        + b"0\r\n\r\n"
    )
    return out


class Stream:
    """One paced response: one timer at a time, each due on the request's absolute schedule."""

    def __init__(self, transport: asyncio.Transport, body: dict[str, Any], arrived: float) -> None:
        self.transport = transport
        reasoning, answer = int(body.get("reasoning", 64)), int(body.get("answer", 64))
        # built once per shape: a wave of 64 requests must not keep the server from reading the next one
        self.frames = frames(reasoning, answer, bool(body.get("calls")))
        self.first_answer = 1 + reasoning
        self.row = [float(body.get("seed", -1)), arrived, 0.0, 0.0]
        ttft, self.pace = float(body.get("ttft_ms", 100)) / 1000, float(body.get("pace_ms", 5)) / 1000
        self.loop = asyncio.get_running_loop()
        if ttft == 0 and self.pace == 0:
            self.row[2] = self.row[3] = time.perf_counter()
            transport.write(HEAD)
            for data in self.frames:  # each its own write: the client reads whatever the kernel coalesced
                transport.write(data)
            LOG.append(self.row)
            return
        transport.write(HEAD + self.frames[0])
        # loop.time() and perf_counter() are both CLOCK_MONOTONIC here
        self.start = self.loop.time() + ttft - (time.perf_counter() - arrived)
        self.loop.call_at(self.start, self.send, 1)

    def send(self, i: int) -> None:
        if self.transport.is_closing():
            return
        now = time.perf_counter()
        if i == 1:
            self.row[2] = now
        if i == self.first_answer:
            self.row[3] = now
        self.transport.write(self.frames[i])
        if i == len(self.frames) - 1:
            LOG.append(self.row)
        else:  # the next chunk's time comes from the schedule, so a late chunk does not delay the rest
            self.loop.call_at(self.start + self.pace * i, self.send, i + 1)


class Handler(asyncio.Protocol):
    def __init__(self) -> None:
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        arrived = time.perf_counter()
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].decode("latin-1").split("\r\n")
            fields = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:])}
            size = int(fields.get("content-length", "0"))
            if len(self.buf) < end + 4 + size:
                return
            body, self.buf = self.buf[end + 4 : end + 4 + size], self.buf[end + 4 + size :]
            self.answer(head[0], body, arrived)

    def answer(self, line: str, body: bytes, arrived: float) -> None:
        assert self.transport is not None
        if line.startswith("GET /log"):
            data = orjson.dumps(LOG)
            LOG.clear()
            self.transport.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data)
            )
        elif line.startswith("POST") and "/chat/completions" in line:
            Stream(self.transport, orjson.loads(body), arrived)
        else:
            self.transport.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")


async def serve(port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Handler, "127.0.0.1", port, backlog=1024)
    print(f"listening on http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cpu", type=int, default=None, help="pin the server to this core")
    args = parser.parse_args()
    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    try:
        asyncio.run(serve(args.port))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
