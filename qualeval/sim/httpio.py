"""HTTP/1.1 by hand: reading a request, writing heads, bodies and chunked frames.

Hand-written so that the server controls every byte it sends: faults such as a connection dropped mid-stream
or a malformed SSE line need that, and burst mode must outrun the client. Every response carries
`x-qualeval-simulated: true`.
"""

from __future__ import annotations

import asyncio

__all__ = ["END", "REASONS", "Request", "chunk", "head", "read_request", "send", "send_json", "send_stream"]

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
END = b"0\r\n\r\n"
"""The last chunk of a chunked body."""

Request = tuple[str, str, dict[str, str], bytes]
"""(method, target, headers with lower-case names, body)."""


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on the connection; None when the client has closed it."""
    line = await reader.readline()
    if not line.strip():
        return None
    method, target, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    body = await reader.readexactly(length) if length else b""
    return method, target, headers, body


def head(status: int, kind: str, extra: dict[str, str]) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}",
        f"Content-Type: {kind}",
        "x-qualeval-simulated: true",
        *(f"{k}: {v}" for k, v in extra.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    """One frame of a chunked body."""
    return b"%x\r\n%b\r\n" % (len(data), data)


async def send(
    writer: asyncio.StreamWriter, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None
) -> None:
    writer.write(head(status, kind, {"Content-Length": str(len(body)), **(extra or {})}) + body)
    await writer.drain()


async def send_json(
    writer: asyncio.StreamWriter, status: int, body: bytes, extra: dict[str, str] | None = None
) -> None:
    await send(writer, status, body, "application/json", extra)


async def send_stream(writer: asyncio.StreamWriter, events: list[bytes]) -> None:
    """A whole event stream at once: each event in a frame of its own, then the last chunk."""
    writer.write(head(200, "text/event-stream", {"Transfer-Encoding": "chunked"}))
    writer.write(b"".join(chunk(e) for e in events) + END)
    await writer.drain()
