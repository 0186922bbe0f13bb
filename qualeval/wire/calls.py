"""Tool calls read off the wire: streamed `tool_calls` deltas merged by `index`, and a whole message's calls.

A streamed call arrives in pieces: the first delta of a call usually carries its `index`, `id` and
`function.name`, the later ones only `index` and a fragment of `function.arguments`. The fragments of one index
are joined in arrival order; the name and id are the ones the delta that gave them gave. Runs only for a chunk
that carries `tool_calls`, so a response without calls pays nothing here.
"""

from __future__ import annotations

from typing import Any

from qualeval.records import CallTiming, ToolCall, arguments_text

__all__ = ["CallMerger", "calls_of_message"]


class _Call:
    __slots__ = ("args", "done", "id", "index", "name")

    def __init__(self, index: int | None) -> None:
        self.index = index
        self.done = 0.0
        """When this call's last delta so far arrived (perf_counter seconds)."""
        self.id: str | None = None
        self.name: str | None = None
        self.args: list[str] = []


class CallMerger:
    """Accumulates one stream's tool-call deltas. `arrivals` holds each delta's arrival (perf_counter seconds)."""

    __slots__ = ("arrivals", "by_index", "calls", "last", "no_index", "ready", "reasoning_before")

    def __init__(self, reasoning_before: int) -> None:
        self.calls: list[_Call] = []
        self.by_index: dict[int, _Call] = {}
        self.last: _Call | None = None
        self.ready: _Call | None = None
        """The last call touched, if its index, name and id are known: where the next fragment most likely goes."""
        self.arrivals: list[float] = []
        self.no_index = False
        self.reasoning_before = reasoning_before
        """Reasoning pieces received before the first tool-call delta."""

    def add(self, items: Any, now: float) -> None:
        """One chunk's `delta.tool_calls` (a list; a lone object is read as a list of one). Runs per tool-call
        chunk, so the common chunk takes the short way: one fragment of the call in progress, by its index."""
        ready = self.ready
        if ready is not None and type(items) is list and len(items) == 1:
            item = items[0]
            # `is`: orjson returns small ints as CPython's shared objects, and a bool or float index is never one
            # of them; any other index (or none) takes the long way, which decides the same for an int
            if type(item) is dict and item.get("index") is ready.index:
                self.arrivals.append(now)
                ready.done = now
                func = item.get("function")
                if type(func) is dict:
                    args = func.get("arguments")
                    if args:
                        ready.args.append(args if type(args) is str else arguments_text(args))
                return
        self._add(items if type(items) is list else [items], now)

    def add_legacy(self, function: dict[str, Any], now: float) -> None:
        """One chunk's `delta.function_call`, the field before `tool_calls`: one call, read as index 0."""
        self._add([{"index": 0, "function": function}], now)

    def _add(self, items: list[Any], now: float) -> None:
        for item in items:
            if type(item) is not dict:
                continue
            self.arrivals.append(now)
            index = item.get("index")
            call = self.by_index.get(index) if type(index) is int else None
            if call is None or call.name is None or call.id is None:  # a new call, or one still to be named
                call = self._first(item)
            call.done = now
            func = item.get("function")
            if type(func) is dict:
                args = func.get("arguments")
                if args:
                    call.args.append(args if type(args) is str else arguments_text(args))
            self.last = call
            # the short way is for a call whose index, name and id are all known: nothing later changes it
            named = call.index is not None and call.name is not None and call.id is not None
            self.ready = call if named else None

    def _first(self, item: dict[str, Any]) -> _Call:
        """The call a delta belongs to, taking the name and id it gives if its call has none yet."""
        call = self._call_for(item)
        func = item.get("function")
        name = func.get("name") if type(func) is dict else None
        if name and isinstance(name, str) and call.name is None:
            call.name = name
        given_id = item.get("id")
        if given_id and isinstance(given_id, str) and call.id is None:
            call.id = given_id
        return call

    def _call_for(self, item: dict[str, Any]) -> _Call:
        index = item.get("index")
        if type(index) is int:
            call = self.by_index.get(index)
            if call is None:
                call = self.by_index[index] = _Call(index)
                self.calls.append(call)
            return call
        # no integer index: the delta is placed by what it says of itself, never silently merged into a call
        # it names otherwise. A new id or a second name starts a call; a bare fragment goes to the last call.
        self.no_index = True
        given_id = item.get("id")
        func = item.get("function")
        given_name = func.get("name") if isinstance(func, dict) else None
        if given_id:
            known = next((c for c in self.calls if c.id == given_id), None)
            if known is not None:
                return known
        last = self.last
        if last is None or (given_id and last.id is not None) or (given_name and last.name is not None):
            call = _Call(None)
            self.calls.append(call)
            return call
        return last

    def result(self, sent: float, cut: bool) -> tuple[tuple[ToolCall, ...], CallTiming]:
        """The merged calls in the order they were first seen, and their timing in seconds from `sent`.
        `cut`: the stream ended by `length`, so the last call was never completed (no `complete` time)."""
        calls = tuple(
            ToolCall(name=c.name or "", arguments="".join(c.args), id=c.id, index=c.index) for c in self.calls
        )
        arrivals = tuple([t - sent for t in self.arrivals])
        complete = None if cut or not arrivals else arrivals[-1]
        # the call whose last delta came first was the first whole (interleaved streams included); a cut stream's
        # last call never was
        ends = sorted(c.done for c in (self.calls[:-1] if cut else self.calls))
        first_whole = ends[0] - sent if ends else None
        timing = CallTiming(
            first_delta=arrivals[0] if arrivals else None,
            complete=complete,
            first_whole=first_whole,
            fragments=len(arrivals),
            arrivals=arrivals,
            reasoning_tokens_before=self.reasoning_before,
        )
        return calls, timing


def calls_of_message(message: dict[str, Any]) -> tuple[ToolCall, ...]:
    """A whole message's calls: `tool_calls` (each `function.name`, `function.arguments`), or the legacy
    `function_call`. Arguments sent as a JSON object (Ollama) are kept as that object's JSON text."""
    found: list[ToolCall] = []
    listed = message.get("tool_calls")
    if isinstance(listed, list):
        for item in listed:
            func = item.get("function") if isinstance(item, dict) else None
            if not isinstance(func, dict):
                continue
            call_id = item.get("id")
            found.append(
                ToolCall(
                    name=str(func.get("name") or ""),
                    arguments=arguments_text(func.get("arguments")),
                    id=call_id if isinstance(call_id, str) else None,
                )
            )
    legacy = message.get("function_call")
    if not found and isinstance(legacy, dict):
        found.append(ToolCall(name=str(legacy.get("name") or ""), arguments=arguments_text(legacy.get("arguments"))))
    return tuple(found)
