"""A recording proxy between qualeval and llama-server: it forwards every request as it came and every response
byte as it arrives (streamed responses chunk by chunk), and keeps each exchange (the request's JSON body, the
status and the raw response bytes), so that a test can hold a run's records against what the server really sent.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

__all__ = ["Exchange", "Wiretap", "merged"]


@dataclass
class Exchange:
    """One request through the proxy and the server's reply, as bytes."""

    path: str
    body: dict[str, Any]
    status: int = 0
    raw: bytes = b""


@dataclass
class Wiretap:
    """The proxy, listening on 127.0.0.1 (an ephemeral port) in a daemon thread."""

    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)

    def __post_init__(self) -> None:
        tap = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: the test output is the findings
                pass

            def do_GET(self) -> None:
                got = httpx.get(tap.upstream + self.path, timeout=600)
                self._reply(got.status_code, got.headers.get("content-type", ""), got.content)

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("content-length") or 0))
                exchange = Exchange(self.path, json.loads(data or b"{}"))
                tap.exchanges.append(exchange)
                headers = {"content-type": "application/json"}
                with httpx.stream("POST", tap.upstream + self.path, content=data, headers=headers,
                                  timeout=600) as got:  # fmt: skip
                    exchange.status = got.status_code
                    self.send_response(got.status_code)
                    self.send_header("content-type", got.headers.get("content-type", ""))
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for chunk in got.iter_raw():
                        exchange.raw += chunk
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")

            def _reply(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hung up (a metrics scrape given up): the exchange shows what was sent

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def merged(exchange: Exchange) -> dict[str, Any]:
    """What the server sent, as one message: content, reasoning_content, finish_reason and the calls (name and
    arguments text; streamed deltas joined by their index, written here apart from qualeval's own merge)."""
    if not exchange.body.get("stream"):
        choice = json.loads(exchange.raw)["choices"][0]
        message = choice["message"]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []]
        return {
            "content": message.get("content") or "",
            "reasoning": message.get("reasoning_content") or "",
            "finish_reason": choice["finish_reason"],
            "calls": calls,
        }
    out: dict[str, Any] = {"content": "", "reasoning": "", "finish_reason": None}
    names: dict[int, str] = {}
    arguments: dict[int, str] = {}
    for line in exchange.raw.split(b"\n"):
        if not line.startswith(b"data: {"):
            continue
        for choice in json.loads(line[len(b"data: ") :]).get("choices") or []:
            delta = choice.get("delta") or {}
            out["content"] += delta.get("content") or ""
            out["reasoning"] += delta.get("reasoning_content") or ""
            for piece in delta.get("tool_calls") or []:
                function = piece.get("function") or {}
                names[piece["index"]] = names.get(piece["index"], "") + (function.get("name") or "")
                arguments[piece["index"]] = arguments.get(piece["index"], "") + (function.get("arguments") or "")
            out["finish_reason"] = choice.get("finish_reason") or out["finish_reason"]
    out["calls"] = [(names[i], arguments.get(i, "")) for i in sorted(names)]
    return out
