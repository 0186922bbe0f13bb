"""The same exchange as `qualeval.wire.transport.Endpoint`, through httpx: for a proxy from the environment
(HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, as the openai SDK honours them) and for an injected
`httpx.AsyncBaseTransport` (tests replay recorded bytes through `httpx.MockTransport`).

Slower per chunk than the direct transport, and its stamps are taken a few layers above the socket; the
bytes go to the same sink, so the result is the same.
"""

from __future__ import annotations

import asyncio
import urllib.request
from time import perf_counter
from urllib.parse import urlsplit

import httpx

from qualeval.errors import TransportFailure
from qualeval.wire.transport import Reply, Sink

__all__ = ["HttpxEndpoint", "proxy_for"]


def proxy_for(base_url: str) -> str | None:
    """The proxy the environment sets for this URL, or None."""
    url = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(url.hostname or ""):
        return None
    return proxy


def _describe(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]


class HttpxEndpoint:
    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        connect_timeout: float,
        concurrency: int,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url
        self.http = httpx.AsyncClient(
            base_url=base_url,
            headers=headers,
            timeout=httpx.Timeout(None, connect=connect_timeout),  # the deadline is send()'s
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
            transport=transport,
        )

    async def send(self, method: str, path: str, body: bytes | None, sink: Sink | None, timeout: float) -> Reply:
        try:
            return await asyncio.wait_for(self._send(method, path, body, sink), timeout)
        except asyncio.TimeoutError:
            raise TransportFailure(f"{self.base_url}: no complete response within {timeout:g}s") from None
        except httpx.HTTPError as exc:
            raise TransportFailure(f"{self.base_url}: {_describe(exc)}") from None

    async def _send(self, method: str, path: str, body: bytes | None, sink: Sink | None) -> Reply:
        sent = perf_counter()  # httpx does not say when the request was written; this is just before
        async with self.http.stream(method, path, content=body) as resp:
            first_byte = perf_counter()
            headers = {k.lower(): v for k, v in resp.headers.items()}
            kind = headers.get("content-type", "")
            if sink is not None and resp.status_code == 200 and kind.startswith("text/event-stream"):
                async for chunk in resp.aiter_raw():
                    sink.feed(chunk, perf_counter())
                return Reply(resp.status_code, headers, sent, first_byte, perf_counter(), streamed=True)
            raw = await resp.aread()
            return Reply(resp.status_code, headers, sent, first_byte, perf_counter(), raw)

    async def close(self) -> None:
        await self.http.aclose()
