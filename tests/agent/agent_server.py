"""A tiny OpenAI-compatible server for the agent loop's kill-and-resume test, run as its own process: to every
user turn it answers with CALLS calls of `pwd` (one a step, each after DELAY seconds), then with text. Each
request it receives is appended to LOG as one JSON line (its turn, how many tool results it carried, whether its
assistant turns carried their reasoning back), so the test can count what was sent twice.

    python tests/agent/agent_server.py PORT_FILE LOG [reject]

With `reject` it answers HTTP 400 to a request whose assistant turns carry `reasoning_content`, as DeepSeek-style
servers refuse a field they do not take.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CALLS = 3
DELAY = 0.03


def _reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    since = 0
    for message in reversed(messages):
        if message["role"] == "user":
            break
        since += message["role"] == "tool"
    users = sum(m["role"] == "user" for m in messages)
    message: dict[str, Any] = {"role": "assistant", "content": "", "reasoning_content": f"turn {users} step {since}"}
    if since < CALLS:
        call = {"id": f"c{users}_{since}", "type": "function", "function": {"name": "pwd", "arguments": "{}"}}
        message["tool_calls"] = [call]
        finish = "tool_calls"
    else:
        message["content"] = "Done."
        finish = "stop"
    return {
        "id": "x",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class Handler(BaseHTTPRequestHandler):
    log_path = ""
    reject = False

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _json(self, body: dict[str, Any], status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._json({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        assistants = [m for m in messages if m["role"] == "assistant"]
        seen = {
            "first": messages[0]["content"][:40],
            "messages": len(messages),
            "passed_back": all("reasoning_content" in m for m in assistants),
        }
        with open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(seen) + "\n")
        time.sleep(DELAY)
        if self.reject and any("reasoning_content" in m for m in assistants):
            self._json({"error": {"message": "unknown field: messages[1].reasoning_content"}}, 400)
            return
        with contextlib.suppress(BrokenPipeError):  # the client was killed while it waited
            self._json(_reply(messages))


def main() -> None:
    port_file, Handler.log_path = sys.argv[1], sys.argv[2]
    Handler.reject = sys.argv[3:] == ["reject"]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file, "w", encoding="utf-8") as handle:
        handle.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
