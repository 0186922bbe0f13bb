"""Reading one tool call where a markup format's anchor matched: the four readers a format names in `reader:`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from qualeval.reasoning.toolmarkup_formats import MarkupFormat
from qualeval.records import ToolCall

__all__ = ["Step", "read_call"]

_WS = re.compile(r"\s*")
_CALL_START = re.compile(r'\{\s*"name"\s*:\s*"')


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON: arguments holding them would not be a JSON text once written back
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


@dataclass(frozen=True, slots=True)
class Step:
    """What one reading gave: `call` (the calls read whole), `bad` (markup whose call could not be read whole: cut
    off or malformed) or `reject` (no markup here after all: prose, or a JSON object that is not a call)."""

    kind: Literal["call", "bad", "reject"]
    calls: tuple[ToolCall, ...]
    end: int


def read_call(fmt: MarkupFormat, text: str, match: re.Match[str]) -> Step:
    if fmt.reader == "params":
        return _read_params(fmt, text, match)
    if fmt.reader == "name_json":
        return _read_name_json(fmt, text, match)
    return _read_json(fmt, text, match)


def _decode(text: str, pos: int) -> tuple[Any, int] | None:
    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]  # \s* always matches
    try:
        return _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return None


def _runs_out(text: str, pos: int) -> bool:
    """The JSON value starting at pos is still open where the text ends: cut off, not malformed."""
    depth, in_string, escaped = 0, False, False
    for char in text[pos:]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth <= 0:
                return False
    return True


def _closed(fmt: MarkupFormat, text: str, pos: int) -> int | None:
    found = fmt.needs("close").match(text, pos)
    if found is not None:
        return found.end()
    if fmt.end_closes and not text[pos:].strip():
        return len(text)
    return None


def _bad(fmt: MarkupFormat, text: str, pos: int) -> Step:
    """A call that cannot be read whole: reading goes on after its closing marker, if it has one."""
    found = fmt.needs("close").search(text, pos)
    return Step("bad", (), found.end() if found and found.end() > pos else len(text))


def _as_object(value: Any) -> dict[str, Any] | None:
    """Arguments as a JSON object; some models write them as a JSON text inside a string."""
    if isinstance(value, str):
        decoded = _decode(value, 0)
        if decoded is None or value[decoded[1] :].strip():
            return None
        value = decoded[0]
    return value if isinstance(value, dict) else None


def _call_of(fmt: MarkupFormat, obj: Any) -> ToolCall | None:
    """A JSON object naming a call and its arguments, as the format keys them; None if it is not one."""
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    keys = [key for key in fmt.args_keys if key in obj]
    if not keys:
        return None if fmt.args_required else ToolCall(name=obj["name"], arguments="{}")
    args = _as_object(obj[keys[0]])
    return None if args is None else ToolCall(name=obj["name"], arguments=json.dumps(args))


def _read_list(fmt: MarkupFormat, text: str, match: re.Match[str]) -> Step:
    """json_list (Mistral's older form): a JSON list of calls, read item by item so that the calls before a cut
    are kept."""
    pos = _WS.match(text, match.end()).end() + 1  # type: ignore[union-attr]  # the anchor saw the "["
    calls: list[ToolCall] = []
    while (decoded := _decode(text, pos)) is not None:
        call = _call_of(fmt, decoded[0])
        if call is None:
            return _bad(fmt, text, decoded[1])
        calls.append(call)
        pos = _WS.match(text, decoded[1]).end()  # type: ignore[union-attr]
        if text.startswith("]", pos):
            closed = _closed(fmt, text, pos + 1)
            return Step("call", tuple(calls), closed) if closed is not None else _bad(fmt, text, pos + 1)
        if not text.startswith(",", pos):
            break
        pos += 1
    return Step("bad", tuple(calls), len(text))


def _read_json(fmt: MarkupFormat, text: str, match: re.Match[str]) -> Step:
    """json_object (Hermes, Llama 3): the name inside the JSON object."""
    if fmt.reader == "json_list":
        return _read_list(fmt, text, match)
    start = match.end()
    decoded = _decode(text, start)
    if decoded is None:
        body = _WS.match(text, start).end()  # type: ignore[union-attr]
        # an unreadable object is markup only if it begins as a call; a bare one only if the text cut it off
        if _CALL_START.match(text, body) is not None and (not fmt.bare or _runs_out(text, body)):
            return _bad(fmt, text, start)
        return Step("reject", (), start)
    call, closed = _call_of(fmt, decoded[0]), _closed(fmt, text, decoded[1])
    if call is None or closed is None:
        return Step("reject", (), start) if fmt.bare else _bad(fmt, text, decoded[1])
    return Step("call", (call,), closed)


def _read_name_json(fmt: MarkupFormat, text: str, match: re.Match[str]) -> Step:
    """name_json (Kimi K2, Harmony, DeepSeek, Mistral): the anchor named the call, a JSON object follows."""
    decoded = _decode(text, match.end())
    if decoded is None:
        return _bad(fmt, text, match.end())
    args = _as_object(decoded[0])
    closed = _closed(fmt, text, decoded[1])
    if args is None or closed is None:
        return _bad(fmt, text, decoded[1])
    return Step("call", (ToolCall(name=match["name"], arguments=json.dumps(args)),), closed)


_BAD = object()


def _value(fmt: MarkupFormat, param: re.Match[str]) -> Any:
    raw = param["value"]
    if fmt.trim_newline:
        raw = raw.removeprefix("\n").removesuffix("\n")
    string = param.groupdict().get("string")
    if string == "true":
        return raw
    decoded = _decode(raw, 0)
    whole = decoded is not None and not raw[decoded[1] :].strip()
    if string == "false":
        return decoded[0] if decoded is not None and whole else _BAD
    # no type written: JSON where the value reads as JSON, otherwise the text (as vLLM's parsers do without a schema)
    return decoded[0] if decoded is not None and whole else raw


def _read_params(fmt: MarkupFormat, text: str, match: re.Match[str]) -> Step:
    """params (Qwen3 XML, GLM, MiniMax, DSML): one tag pair per argument, then the call's closing tag."""
    param = fmt.needs("param")
    args: dict[str, Any] = {}
    pos = match.end()
    while (found := param.match(text, pos)) is not None:
        value = _value(fmt, found)
        if value is _BAD:
            return _bad(fmt, text, found.end())
        args[found["key"]] = value
        pos = found.end()
    closed = _closed(fmt, text, pos)
    if closed is None:
        return _bad(fmt, text, pos)
    return Step("call", (ToolCall(name=match["name"], arguments=json.dumps(args)),), closed)
