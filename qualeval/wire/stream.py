"""One response read off the wire, before splitting: SSE events gathered into channels with arrival stamps, or a
whole JSON body. Nothing here waits or retries; the transport calls `StreamState.feed` with each network read
and the stamp taken when that read arrived.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import orjson

from qualeval.errors import EndpointError, HTTPFailure, ProtocolFailure
from qualeval.reasoning import REASONING_FIELDS, known_finish, pick_reasoning
from qualeval.records import CallTiming, ToolCall
from qualeval.wire.calls import CallMerger, calls_of_message
from qualeval.wire.sse import SSEDecoder

__all__ = ["Attempt", "StreamState", "in_band_error", "read_whole"]


def in_band_error(err: Any) -> EndpointError:
    """An `error` object a server sent with status 200 (vLLM mid-stream, some proxies)."""
    message = str(err.get("message") or err) if isinstance(err, dict) else str(err)
    code = err.get("code") if isinstance(err, dict) else None
    if isinstance(code, int) and 400 <= code < 600:
        return HTTPFailure(code, message)
    return ProtocolFailure(f"server sent an error inside a 200 response: {message}")


@dataclass(slots=True)
class Attempt:
    """What one successful attempt read off the wire. Times are perf_counter() seconds."""

    content: str | None
    fields: dict[str, str]
    finish: str | None
    usage: dict[str, Any] | None
    timings: dict[str, Any] | None
    sent: float
    """When the request was written: every timing is measured from here."""
    first_byte: float
    end: float
    ttft: float | None = None
    reasoning_t: float | None = None
    gaps: list[float] = field(default_factory=list)
    stream: StreamState | None = None  # kept to map content positions back to arrival times
    unknown_question: bool = False
    """The reference server marked the answer as its refusal of a question not in its key (UNKNOWN_QUESTION)."""
    calls: tuple[ToolCall, ...] = ()
    call_timing: CallTiming | None = None
    """When the streamed tool-call deltas arrived, in seconds from `sent` (None: no delta, or not streamed)."""
    delta_without_index: bool = False


class StreamState:
    """Accumulates one streamed response. `feed` and `event` are the per-chunk path: keep them lean."""

    __slots__ = (
        "calls",
        "content",
        "content_at",
        "content_len",
        "content_t",
        "decoder",
        "done",
        "finish",
        "gaps",
        "last_tok",
        "reasoning",
        "reasoning_t",
        "seen_choice",
        "timings",
        "ttft",
        "usage",
    )

    def __init__(self) -> None:
        self.decoder = SSEDecoder()
        self.done = False
        self.content: list[str] = []
        self.content_at: list[int] = []  # where each content delta starts in the joined content
        self.content_t: list[float] = []
        self.content_len = 0
        self.reasoning: dict[str, list[str]] = {}
        self.reasoning_t: float | None = None
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None
        self.timings: dict[str, Any] | None = None
        self.ttft: float | None = None
        self.last_tok = 0.0
        self.gaps: list[float] = []
        self.seen_choice = False
        self.calls: CallMerger | None = None

    def feed(self, data: bytes, now: float) -> None:
        """One network read's body bytes, stamped when they arrived. Raises EndpointError for a bad stream."""
        loads = orjson.loads
        for payload in self.decoder.feed(data):
            if payload == b"[DONE]":
                self.done = True
                continue
            try:
                obj = loads(payload)
            except orjson.JSONDecodeError:
                raise ProtocolFailure(f"malformed SSE data line: {payload[:80]!r}") from None
            if type(obj) is not dict:
                raise ProtocolFailure(f"SSE data is not a JSON object: {payload[:80]!r}")
            try:
                self.event(obj, now)
            except (AttributeError, TypeError):  # a choice or delta that is not an object
                raise ProtocolFailure(f"SSE event is not a chat completion chunk: {payload[:80]!r}") from None

    def event(self, obj: dict[str, Any], now: float) -> None:
        if "error" in obj:
            raise in_band_error(obj["error"])
        usage = obj.get("usage")
        if usage:
            self.usage = usage
        if "timings" in obj:
            self.timings = obj["timings"]  # llama.cpp: on the usage chunk, or on the finish chunk
        choices = obj.get("choices")
        if not choices:
            return
        choice = choices[0]
        self.seen_choice = True
        finish = choice.get("finish_reason")
        if finish:
            self.finish = finish
        delta = choice.get("delta")
        if not delta:
            return
        calls = delta.get("tool_calls")
        if calls and len(delta) == 1 and self.calls is not None:
            # a delta that is only a fragment of the calls under way (vLLM and llama.cpp send them so): nothing
            # else to read in it. A tool-call delta is output: it counts for TTFT and the gaps as content does
            self.calls.add(calls, now)
            got = True
        else:
            got = False
            for name in REASONING_FIELDS:
                text = delta.get(name)
                if text:
                    self.reasoning.setdefault(name, []).append(text)
                    got = True
            if not got and delta.get("reasoning_details"):
                got = self._details(delta)
            if got and self.reasoning_t is None:
                self.reasoning_t = now
            text = delta.get("content")
            if text:
                self.content.append(text)
                self.content_at.append(self.content_len)
                self.content_t.append(now)
                self.content_len += len(text)
                got = True
            if calls:
                (self.calls or self._merger()).add(calls, now)
                got = True
            elif (legacy := delta.get("function_call")) and type(legacy) is dict:
                # the field before `tool_calls` (OpenAI's `functions=`): one call, read as index 0
                (self.calls or self._merger()).add_legacy(legacy, now)
                got = True
        if got:
            if self.ttft is None:
                self.ttft = now
            else:
                self.gaps.append((now - self.last_tok) * 1000.0)
            self.last_tok = now

    def _details(self, delta: dict[str, Any]) -> bool:
        """OpenRouter's `reasoning_details`, where the delta has no plain reasoning field."""
        picked = pick_reasoning(delta)
        if picked:
            self.reasoning.setdefault(picked[0], []).append(picked[1])
        return bool(picked)

    def _merger(self) -> CallMerger:
        """The stream's first tool-call delta: the merger starts, counting the reasoning pieces before it."""
        self.calls = CallMerger(sum(map(len, self.reasoning.values())))
        return self.calls

    def time_of(self, index: int | None) -> float | None:
        """Arrival time of the content character at `index`."""
        if index is None or not self.content_t:
            return None
        return self.content_t[max(0, bisect_right(self.content_at, index) - 1)]

    def finish_attempt(self, sent: float, first_byte: float, end: float) -> Attempt:
        """The attempt once the body ended; raises ProtocolFailure for a stream that is not a whole answer."""
        for payload in self.decoder.close():
            if payload == b"[DONE]":
                self.done = True
        if not self.seen_choice:
            raise ProtocolFailure("stream carried no choices")
        if not self.done and self.finish is None:
            raise ProtocolFailure("stream ended before a finish_reason or [DONE]")
        merged = self.calls
        cut = known_finish(self.finish) == "length" if self.finish else False
        calls, call_timing = merged.result(sent, cut) if merged else ((), None)
        return Attempt(
            content="".join(self.content) if self.content else None,
            fields={k: "".join(v) for k, v in self.reasoning.items()},
            finish=self.finish,
            usage=self.usage,
            timings=self.timings,
            sent=sent,
            first_byte=first_byte,
            end=end,
            ttft=self.ttft,
            reasoning_t=self.reasoning_t,
            gaps=self.gaps,
            stream=self,
            calls=calls,
            call_timing=call_timing,
            delta_without_index=merged.no_index if merged else False,
        )


def read_whole(raw: bytes, kind: str, sent: float, first_byte: float, end: float) -> Attempt:
    """A non-streamed chat completion body (or a streamed request the server answered whole)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        snippet = raw[:60].decode("utf-8", "replace").strip().replace("\n", " ")
        if "json" in kind:
            raise ProtocolFailure(f"malformed JSON in the response body: '{snippet}'") from None
        kind = kind or "no content type"
        raise ProtocolFailure(f"expected a JSON chat completion, got {kind}: '{snippet}'") from None
    if not isinstance(obj, dict):
        raise ProtocolFailure("chat completion body is not a JSON object")
    if "error" in obj:
        raise in_band_error(obj["error"])
    choices = obj.get("choices")
    if not choices or not isinstance(choices, list):
        raise ProtocolFailure("chat completion has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    fields = {n: v for n in REASONING_FIELDS if isinstance(v := message.get(n), str) and v}
    picked = pick_reasoning(message)
    if picked and picked[0] == "reasoning_details":
        fields["reasoning_details"] = picked[1]
    content = message.get("content")
    return Attempt(
        calls=calls_of_message(message) if isinstance(message, dict) else (),
        content=content if isinstance(content, str) else None,
        fields=fields,
        finish=choice.get("finish_reason"),
        usage=obj.get("usage"),
        timings=obj.get("timings"),
        sent=sent,
        first_byte=first_byte,
        end=end,
    )
