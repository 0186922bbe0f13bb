"""Replay of real llama-server captures against the reference server's `llamacpp` flavour.

Each capture in shared/data/captures/llamacpp-b11434 is a byte-exact request and response of llama-server
b11434 serving a tiny random model. Its request goes to `serve-sim --flavor llamacpp` (model "tiny", a 4096
token context, like the captured server), and the two responses are compared field by field: status,
content type, key order, types, nulls, error bodies, the SSE event sequence, finish reasons, which tags and
edge whitespace the text keeps, and the token-count identities of `usage` and `timings`. Not compared: the
text the model wrote, ids, timestamps, timing numbers, and token counts (another tokenizer).

The model's free choices are inputs, not behaviour: where the captured random model skipped the optional
think block or never stopped, the replay tells the simulated model to do the same (MODEL_CHOICES).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.conftest import SHARED, fast_sim, sim_url

CAPTURES = SHARED / "captures" / "llamacpp-b11434"
# what the captured model chose where nothing constrained it (x-qualeval-sim directives)
MODEL_CHOICES = {
    "json_schema_nonstream": "think=no",  # seed 42 skipped the optional think block, JSON at once
    "json_schema_stream": "think=no",
    "json_schema_seed1_nonstream": "stop=no",  # its thinking never ended: max_tokens ran out inside it
    "fo_json_schema_nonstream": "stop=no",
    "fo_no_grammar_nonstream": "stop=no",
    "no_grammar_nonstream": "think=no,stop=no",  # gibberish with no think tag, up to max_tokens
    "no_grammar_stream": "think=no,stop=no",
    "err_unknown_model": "think=no,stop=no",
    "err_grammar_and_schema": "think=no",
}
# error messages that quote another program's diagnostics: compared up to this prefix
MESSAGE_PREFIX = {"err_bad_json": "[json.exception.parse_error.N] parse error at line N, column N: syntax error"}
EXACT = {"object", "role", "finish_reason", "index", "model", "system_fingerprint", "status", "type", "code", "n_ctx"}
EXACT |= {"prompt"}  # /apply-template: the chat template's output, not the model's
TEXT = {"content", "reasoning_content"}
MARKERS = ("<think>", "</think>", "<|im_start|>", "<|im_end|>")
Shaped = bool | None
"""None: the model wrote freely; False: a grammar shaped its text; True: and the text is complete."""
SCAN_ROWS = 3  # the first tokens are the grammar's own (`<think>`, a newline): beyond them tokenizers differ


@dataclass(frozen=True)
class Capture:
    name: str
    opened: bool
    method: str
    path: str
    body: bytes
    status: int
    kind: str
    response: bytes


def _capture(path: Path) -> Capture:
    raw = path.read_bytes()
    request = raw.split(b"### REQUEST\n", 1)[1].split(b"\n\n### RESPONSE", 1)[0]
    head, _, body = request.partition(b"\n\n")
    method, target, _ = head.split(b"\n", 1)[0].decode().split(" ")
    response = raw.split(b"### RESPONSE", 1)[1]
    status = int(response.split(b"\n", 2)[1].split(b" ")[1])
    found = re.search(rb"\nContent-Type: ([^\r\n]*)", response.split(b"### BODY", 1)[0])
    kind = found.group(1).decode() if found else ""
    payload = response.split(b"(verbatim bytes follow, up to the END marker)\n", 1)[1].rsplit(b"\n### END", 1)[0]
    name = path.stem.split("__", 1)[1]
    return Capture(name, path.stem.startswith("forcedopen"), method, target, body, status, kind, payload)


def _scans(path: Path) -> Iterator[Capture]:
    """A truncation scan: one request template, answered at each max_tokens from 1 up."""
    text = path.read_bytes()
    template = orjson.loads(text.split(b"(max_tokens varied)\n", 1)[1].split(b"\n", 1)[0])
    rows = re.findall(rb"### max_tokens=(\d+) HTTP (\d+)\n([^\n]*)", text)
    last = max(int(r[0]) for r in rows)
    for budget, status, body in rows:
        if int(budget) <= SCAN_ROWS or int(budget) == last:
            name = f"{path.stem.split('__', 1)[1]}_mt{int(budget)}"
            request = orjson.dumps({**template, "max_tokens": int(budget)})
            opened = path.stem.startswith("forcedopen")
            yield Capture(name, opened, "POST", "/v1/chat/completions", request, int(status), "application/json", body)


def _all() -> list[Capture]:
    if not CAPTURES.exists():
        return []
    found = [_capture(p) for p in sorted(CAPTURES.glob("*__*.txt")) if b"### SCENARIO" in p.read_bytes()[:20]]
    return found + [c for p in sorted(CAPTURES.glob("*trunc_scan*.txt")) for c in _scans(p)]


CASES = _all()


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _text_shape(text: str, shaped: Shaped) -> tuple[object, ...]:
    """What a client can rely on in generated text: empty or not; under a grammar (where the model's text
    has a known shape) also which tags are left in it and whether the server trimmed its edges."""
    if shaped is None:
        return (text == "",)
    tags = tuple(m for m in MARKERS if m in text)
    return text == "", tags, text.startswith("<think>"), text[:1].isspace(), text[-1:].isspace() if shaped else None


def compare(real: Any, sim: Any, path: str, shaped: Shaped) -> list[str]:
    """Differences between two JSON values, as `path: what` lines."""
    if _kind(real) != _kind(sim):
        return [f"{path}: {_kind(real)} vs {_kind(sim)}"]
    if isinstance(real, dict):
        if list(real) != list(sim):
            return [f"{path}: keys {list(real)} vs {list(sim)}"]
        return [d for k in real for d in compare(real[k], sim[k], f"{path}.{k}", shaped)]
    if isinstance(real, list):
        if len(real) != len(sim):
            return [f"{path}: {len(real)} items vs {len(sim)}"]
        return [
            d for i, (a, b) in enumerate(zip(real, sim, strict=True)) for d in compare(a, b, f"{path}[{i}]", shaped)
        ]
    field = path.rsplit(".", 1)[-1]
    if field in TEXT and isinstance(real, str):
        if _text_shape(real, shaped) != _text_shape(sim, shaped):
            return [f"{path}: text {real[:40]!r} vs {sim[:40]!r}"]
    elif field in EXACT and real != sim:
        return [f"{path}: {real!r} vs {sim!r}"]
    return []


def identities(obj: dict[str, Any], request: dict[str, Any]) -> list[str]:
    """How usage and timings hang together (llama.cpp: prompt_n + cache_n = prompt tokens)."""
    usage, timings = obj.get("usage"), obj.get("timings")
    out = []
    if usage:
        if usage["total_tokens"] != usage["prompt_tokens"] + usage["completion_tokens"]:
            out.append("usage: total is not prompt + completion")
        budget = request.get("max_tokens")
        if isinstance(budget, int) and budget >= 0 and usage["completion_tokens"] > budget:
            out.append("usage: more tokens than max_tokens")
    if usage and timings:
        if timings["predicted_n"] != usage["completion_tokens"]:
            out.append("timings.predicted_n is not usage.completion_tokens")
        if timings["cache_n"] != usage["prompt_tokens_details"]["cached_tokens"]:
            out.append("timings.cache_n is not usage.prompt_tokens_details.cached_tokens")
        if timings["prompt_n"] + timings["cache_n"] != usage["prompt_tokens"]:
            out.append("timings: prompt_n + cache_n is not usage.prompt_tokens")
    return out


def _events(body: bytes) -> list[Any]:
    parts = body.split(b"\n\n")
    assert parts[-1] == b"" and all(p.startswith(b"data: ") for p in parts[:-1]), body[:200]
    return [p[6:].decode() if p == b"data: [DONE]" else orjson.loads(p[6:]) for p in parts[:-1]]


def _event_kind(event: Any) -> object:
    if isinstance(event, str):
        return event
    choices = tuple((tuple(c), tuple(c["delta"]), c["finish_reason"]) for c in event["choices"])
    return tuple(event), choices


def _runs(events: list[Any]) -> list[Any]:
    """One event per run of events of the same kind (a run of reasoning deltas, of content deltas...)."""
    return [e for i, e in enumerate(events) if i == 0 or _event_kind(e) != _event_kind(events[i - 1])]


def _joined(events: list[Any], field: str) -> str:
    return "".join(
        str(e["choices"][0]["delta"].get(field) or "") for e in events if isinstance(e, dict) and e["choices"]
    )


def compare_stream(real: bytes, sim: bytes, request: dict[str, Any], shaped: Shaped) -> list[str]:
    a, b = _events(real), _events(sim)
    kinds_a, kinds_b = [_event_kind(e) for e in _runs(a)], [_event_kind(e) for e in _runs(b)]
    if kinds_a != kinds_b:
        return [f"event sequence:\n  {kinds_a}\n  vs\n  {kinds_b}"]
    diffs = [d for x, y in zip(_runs(a), _runs(b), strict=True) for d in compare(x, y, "$event", shaped=None)]
    for field in ("reasoning_content", "content"):
        joined = compare({field: _joined(a, field)}, {field: _joined(b, field)}, f"$stream.{field}", shaped)
        diffs += joined
    last = next(e for e in reversed(b) if isinstance(e, dict))
    return diffs + identities(last, request)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[bool, str]]:
    """The captured servers: tiny.gguf, and tiny-forced-open.gguf whose template opens the think block."""
    with (
        sim_url(fast_sim("llamacpp", model="tiny", max_model_len=4096)) as plain,
        sim_url(fast_sim("llamacpp", model="tiny", max_model_len=4096, thinking_opened=True)) as opened,
    ):
        yield {False: plain.removesuffix("/v1"), True: opened.removesuffix("/v1")}


def test_the_captures_are_all_here() -> None:
    if not CAPTURES.exists():
        pytest.skip(f"{CAPTURES} not present")
    assert sum(1 for c in CASES if "trunc_scan" not in c.name) == 61


@pytest.mark.parametrize("capture", CASES, ids=[c.name if not c.opened else f"fo-{c.name}" for c in CASES])
def test_replay(capture: Capture, servers: dict[bool, str]) -> None:
    headers = {"Content-Type": "application/json"} if capture.body else {}
    choice = MODEL_CHOICES.get(capture.name)
    if choice:
        headers["x-qualeval-sim"] = choice
    url = servers[capture.opened] + capture.path
    got = httpx.request(capture.method, url, content=capture.body, headers=headers, timeout=60)
    assert got.status_code == capture.status, got.text[:300]
    assert got.headers["content-type"].split(";")[0] == capture.kind.split(";")[0]
    try:
        request = orjson.loads(capture.body) if capture.body else {}
    except orjson.JSONDecodeError:
        request = {}
    shaped: Shaped = None
    if isinstance(request, dict) and "grammar" in request and "response_format" not in request:
        shaped = b'"finish_reason":"stop"' in capture.response
    if capture.kind.startswith("text/event-stream"):
        diffs = compare_stream(capture.response, got.content, request, shaped)
    else:
        real, sim = orjson.loads(capture.response), orjson.loads(got.content)
        diffs = compare(real, sim, "$", shaped) + identities(sim, request)
        assert identities(real, request) == []  # the identities hold on the real server
        diffs += _message(capture.name, real, sim)
    assert diffs == [], "\n".join(diffs)


def _message(name: str, real: dict[str, Any], sim: dict[str, Any]) -> list[str]:
    """Error messages are the server's own words: compared with numbers left out (token counts differ)."""
    if "error" not in real:
        return []
    a, b = (re.sub(r"\d+", "N", x["error"]["message"]) for x in (real, sim))
    prefix = MESSAGE_PREFIX.get(name)
    if prefix is not None:
        return [] if a.startswith(prefix) and b.startswith(prefix) else [f"message {b!r}"]
    return [] if a == b else [f"error message {a!r} vs {b!r}"]
