"""HTTP/1.1 for the timed path: one asyncio Protocol per keep-alive connection, parsing where the bytes arrive.

Why not httpx or aiohttp: a client that measures servers must not be their bottleneck. With httpx every
network read of a paced stream passed through anyio's timeout scope, a pause/resume of reading and three
async-generator layers, and each request scanned every pooled connection; aiohttp is leaner but still wakes a
coroutine per read. Here `data_received` stamps the read, undoes the chunked framing and hands the body to a
sink (`StreamState.feed`: SSE events, orjson) in the same call, so a paced chunk costs one callback, and the
waiting coroutine wakes once per response. benchmarks/paced.py measures it beside an aiohttp loop.

The deadline is one timer per attempt. Idle connections are a stack: taking one is O(1) whatever the
concurrency. A reused connection the server had already closed is replaced once, transparently; any other
failure is an EndpointError for the caller's retry policy.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import zlib
from collections.abc import Coroutine
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from qualeval.errors import EndpointError, InputError, ProtocolFailure, TransportFailure

__all__ = ["Endpoint", "Reply", "Sink", "run_async"]

T = TypeVar("T")

_MAX_HEAD = 1 << 16
_NEED_SIZE, _NEED_CRLF = 0, -2  # chunked-body states (a positive number: bytes left in the chunk)


class Sink(Protocol):
    def feed(self, data: bytes, now: float) -> None: ...


@dataclass(slots=True)
class Reply:
    status: int
    headers: dict[str, str]
    """Lower-case names; a repeated header keeps its last value."""
    sent: float
    """perf_counter() right before the request was handed to the socket."""
    first_byte: float
    """When the read that completed the response head arrived."""
    end: float
    body: bytes = b""
    """The body, unless it went to the sink."""
    streamed: bool = False


class _Stale(Exception):
    """A reused connection closed before answering: the server dropped it while idle."""


class _Connection(asyncio.Protocol):
    """One connection; at most one exchange at a time. Every read is handled inside `data_received`."""

    sink: Sink | None
    decompress: zlib._Decompress | None
    parts: list[bytes]
    headers: dict[str, str]

    def __init__(self, label: str) -> None:
        self.label = label
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.waiter: asyncio.Future[Reply] | None = None
        self._reset(None)

    def _reset(self, sink: Sink | None) -> None:
        self.sink, self.streamed, self.decompress = sink, False, None
        self.buf, self.parts, self.left = b"", [], _NEED_SIZE
        self.status, self.headers, self.mode, self.length, self.keep = 0, {}, "", 0, False
        self.got_bytes, self.sent, self.first_byte = False, 0.0, 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is None:
            return
        if self.mode == "close" and self.status:
            self._done(perf_counter())  # the body is delimited by the close
        elif not self.got_bytes:
            self._fail(_Stale())
        else:
            self._fail(TransportFailure(f"{self.label}: peer closed connection without sending complete message body"))

    def start(self, request: bytes, sink: Sink | None) -> asyncio.Future[Reply]:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self._reset(sink)
        # stamped before the write: writing wakes a server on the same machine, which may take the CPU
        # before this process stamps anything, and the server's own clock must never exceed ours
        self.sent = perf_counter()
        self.transport.write(request)
        return self.waiter

    def expire(self, message: str) -> None:
        if self.waiter is not None:
            self._fail(TransportFailure(f"{self.label}: {message}"))

    def abort(self) -> None:
        self.closed = True
        self.waiter = None
        if self.transport is not None:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        now = perf_counter()
        if self.waiter is None or self.waiter.done():
            self.abort()  # bytes nobody asked for: the connection cannot be trusted any more
            return
        self.got_bytes = True
        try:
            if not self.status:
                data = self._head(data, now)
                if not self.status or self.waiter is None:
                    return
            if self.mode == "chunked":
                self._chunked(data, now)
            elif self.mode == "length":
                self._length(data, now)
            elif data:
                self._emit(data, now)
        except EndpointError as exc:
            self._fail(exc)

    def _head(self, data: bytes, now: float) -> bytes:
        """Parse the status line and headers once they are whole; return the body bytes that followed."""
        buf = self.buf + data if self.buf else data
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > _MAX_HEAD:
                raise ProtocolFailure(f"{self.label}: response head larger than {_MAX_HEAD} bytes")
            self.buf = buf
            return b""
        self.buf = b""
        lines = buf[:end].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise ProtocolFailure(f"{self.label}: illegal status line: {lines[0][:60]!r}")
        status = int(parts[1])
        if 100 <= status < 200:  # an interim answer (100 Continue): the real head follows
            return self._head(buf[end + 4 :], now)
        headers = self.headers
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        self.status, self.first_byte = status, now
        self._body_mode(parts[0], headers)
        if self.mode == "length" and self.length == 0:
            self._done(now)
        return buf[end + 4 :]

    def _body_mode(self, version: str, headers: dict[str, str]) -> None:
        self.keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if self.status in (204, 304):
            self.mode, self.length = "length", 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self.mode = "chunked"
        elif "content-length" in headers:
            length = headers["content-length"]
            if not length.isdigit():
                raise ProtocolFailure(f"{self.label}: bad Content-Length {length[:20]!r}")
            self.mode, self.length = "length", int(length)
        else:
            self.mode, self.keep = "close", False
        kind = headers.get("content-type", "")
        self.streamed = self.sink is not None and self.status == 200 and kind.startswith("text/event-stream")
        coding = headers.get("content-encoding", "").lower()
        if coding in ("gzip", "deflate"):
            self.decompress = zlib.decompressobj(wbits=47)  # gzip or zlib header, detected

    def _emit(self, data: bytes, now: float) -> None:
        if self.decompress is not None:
            data = self.decompress.decompress(data)
        if self.streamed:
            self.sink.feed(data, now)  # type: ignore[union-attr]
        else:
            self.parts.append(data)

    def _length(self, data: bytes, now: float) -> None:
        take = data[: self.length]
        self.length -= len(take)
        if take:
            self._emit(take, now)
        if self.length == 0:
            self._done(now)

    def _chunked(self, data: bytes, now: float) -> None:
        """Undo the chunked framing; a frame and its size line may be split anywhere between reads. The
        payload of one read goes to the sink in one piece: it all carries the same stamp anyway."""
        buf = self.buf + data if self.buf else data
        pos, size = 0, len(buf)
        pieces: list[bytes] = []
        if self.left:  # the rest of a chunk begun in an earlier read, or the CRLF after it
            pos = self._chunk_rest(buf, pieces)
        while pos < size:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                break
            try:
                length = int(buf[pos:eol].split(b";", 1)[0], 16)
            except ValueError:
                raise ProtocolFailure(f"{self.label}: malformed chunk size {buf[pos:eol][:20]!r}") from None
            if length == 0:  # the last chunk; the body ends with the (empty) trailer line after it
                if buf.find(b"\r\n", eol + 2) < 0:
                    break
                self._flush(pieces, now)
                self._done(now)
                return
            stop = eol + 2 + length
            if stop + 2 > size:  # the chunk goes on in the next read
                self.left = length
                pos = self._chunk_rest(buf, pieces, eol + 2)
                break
            if buf[stop : stop + 2] != b"\r\n":
                raise ProtocolFailure(f"{self.label}: malformed chunked body")
            pieces.append(buf[eol + 2 : stop])
            pos = stop + 2
        self._flush(pieces, now)
        self.buf = buf[pos:]

    def _chunk_rest(self, buf: bytes, pieces: list[bytes], pos: int = 0) -> int:
        """Take what `buf` holds of the current chunk (`self.left` bytes, or the CRLF after it if negative)."""
        if self.left > 0:
            stop = min(len(buf), pos + self.left)
            if stop > pos:
                pieces.append(buf[pos:stop])
            self.left = (self.left - (stop - pos)) or _NEED_CRLF
            pos = stop
        if self.left == _NEED_CRLF and len(buf) - pos >= 2:
            if buf[pos : pos + 2] != b"\r\n":
                raise ProtocolFailure(f"{self.label}: malformed chunked body")
            pos, self.left = pos + 2, _NEED_SIZE
        return pos

    def _flush(self, pieces: list[bytes], now: float) -> None:
        if pieces:
            self._emit(pieces[0] if len(pieces) == 1 else b"".join(pieces), now)

    def _done(self, now: float) -> None:
        if self.decompress is not None:
            self._emit_tail(now)  # may raise for a bad stream: the waiter is still there to take it
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            body = b"".join(self.parts)
            waiter.set_result(Reply(self.status, self.headers, self.sent, self.first_byte, now, body, self.streamed))
        if not self.keep and self.transport is not None:
            self.closed = True
            self.transport.close()

    def _emit_tail(self, now: float) -> None:
        assert self.decompress is not None  # called only while a compressed body is open
        tail = self.decompress.flush()
        self.decompress = None
        if tail:
            self._emit(tail, now)

    def _fail(self, exc: BaseException) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)
        self.abort()


def _ssl_context() -> ssl.SSLContext:
    """Verified TLS with the CA bundle httpx would use: SSL_CERT_FILE / SSL_CERT_DIR when set, else certifi's
    (some Python builds find no system certificates at all)."""
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context()
    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


class Endpoint:
    """Keep-alive connections to one base URL. Not safe across event loops; one per ChatClient session."""

    def __init__(self, base_url: str, headers: dict[str, str], connect_timeout: float) -> None:
        url = urlsplit(base_url)
        self.base_url = base_url
        self.host = url.hostname or ""
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.prefix = url.path.rstrip("/")
        self.ssl = _ssl_context() if url.scheme == "https" else None
        self.connect_timeout = connect_timeout
        host = self.host if url.port is None else f"{self.host}:{url.port}"
        fixed = {"Host": host, "User-Agent": "qualeval", "Accept": "*/*", **headers}
        for name, value in fixed.items():
            if "\r" in name + value or "\n" in name + value:  # never echo the value: it may be the key
                raise InputError(f"header '{name.strip()[:40]}': line breaks are not allowed in HTTP headers")
        # built once: per request only the request line and Content-Length are formatted
        self.fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode("latin-1")
        self.idle: list[_Connection] = []

    async def send(self, method: str, path: str, body: bytes | None, sink: Sink | None, timeout: float) -> Reply:
        """One exchange within `timeout` seconds, connecting included. Raises EndpointError."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        request = self._request(method, path, body)
        conn = self._take()
        if conn is not None:
            try:
                return await self._exchange(conn, request, sink, deadline, timeout)
            except _Stale:
                pass  # closed by the server while idle: the request never reached it
        try:
            return await self._exchange(await self._connect(deadline), request, sink, deadline, timeout)
        except _Stale:
            raise TransportFailure(f"{self.base_url}: server closed the connection without answering") from None

    async def _exchange(
        self, conn: _Connection, request: bytes, sink: Sink | None, deadline: float, timeout: float
    ) -> Reply:
        timer = asyncio.get_running_loop().call_at(deadline, conn.expire, f"no complete response within {timeout:g}s")
        try:
            try:
                waiter = conn.start(request, sink)
            except (OSError, RuntimeError):  # the connection died before the request left
                raise _Stale from None
            reply = await waiter
        except BaseException:
            conn.abort()  # failed or cancelled: what is left on this connection is unknown
            raise
        finally:
            timer.cancel()
        if not conn.closed:
            self.idle.append(conn)
        return reply

    def _request(self, method: str, path: str, body: bytes | None) -> bytes:
        line = f"{method} {self.prefix}{path} HTTP/1.1\r\n".encode("latin-1")
        if body is None:
            return line + self.fixed + b"\r\n"
        return line + self.fixed + b"Content-Length: %d\r\n\r\n" % len(body) + body

    def _take(self) -> _Connection | None:
        while self.idle:
            conn = self.idle.pop()  # the most recently used: least likely to have been closed by the server
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn
        return None

    async def _connect(self, deadline: float) -> _Connection:
        loop = asyncio.get_running_loop()
        limit = min(self.connect_timeout, max(0.0, deadline - loop.time()))
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(
                    lambda: _Connection(self.base_url),
                    self.host,
                    self.port,
                    ssl=self.ssl,
                    server_hostname=self.host if self.ssl else None,
                ),
                limit,
            )
        except asyncio.TimeoutError:
            raise TransportFailure(f"{self.base_url}: connect timed out after {limit:g}s") from None
        except (OSError, ssl.SSLError) as exc:
            raise TransportFailure(f"{self.base_url}: cannot connect: {exc.strerror or exc}") from None
        return conn

    async def close(self) -> None:
        for conn in self.idle:
            conn.abort()
        self.idle.clear()


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run` on uvloop where it is installed: its C read path cost the client 8-21% less CPU per chunk
    here (benchmarks/paced.py, --loop uvloop against --loop asyncio). The reference server keeps asyncio's
    loop, whose timers are finer than uvloop's 1 ms."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)
