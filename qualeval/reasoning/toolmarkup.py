"""Tool calls a model wrote as markup that the server left in the content or the reasoning: the model right, the
server wrong. The formats are data (`parsers/tools/*.yaml`); this module finds the earliest one present and reads
every call of it, in order."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from qualeval.reasoning.toolmarkup_formats import MarkupFormat, markup_formats
from qualeval.reasoning.toolmarkup_readers import Step, read_call
from qualeval.records import ToolCall

__all__ = ["Markup", "find_markup"]


@dataclass(frozen=True, slots=True)
class Markup:
    """The tool-call markup found in a text: its format, the calls read whole, in order, and whether every call
    opened was read whole (False: one was cut off or malformed; `calls` holds those that were whole)."""

    format: str
    calls: tuple[ToolCall, ...]
    whole: bool


@dataclass(frozen=True, slots=True)
class _Opening:
    fmt: MarkupFormat
    start: int
    length: int
    step: Step | None
    """None: an opening cut off before a call could be read at all."""


_TAIL = 1024
"""A cut-off opening (`partial`) is a header: looked for in the text's last characters only, which keeps a text
that repeats an opening thousands of times (a model in a loop) linear to read."""


def _cut_opening(fmt: MarkupFormat, text: str, pos: int) -> int | None:
    partial = fmt.pattern("partial")
    found = partial.search(text, max(pos, len(text) - _TAIL)) if partial is not None else None
    return None if found is None else found.start()


@cache
def _trigger_groups() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The triggers under a punctuation character each holds (`<`, `[`, `"`, `=`): one character is found with
    memchr, so text holding none of them is passed over in well under a microsecond a kilobyte."""
    groups: dict[str, set[str]] = {}
    for trigger in {t for fmt in markup_formats() for t in fmt.triggers}:
        key = next((char for char in trigger if not (char.isalnum() or char in "_ ")), trigger[0])
        groups.setdefault(key, set()).add(trigger)
    return tuple((key, tuple(sorted(triggers))) for key, triggers in sorted(groups.items()))


def _may_hold_markup(text: str) -> bool:
    return any(key in text and any(t in text for t in triggers) for key, triggers in _trigger_groups())


def find_markup(text: str) -> Markup | None:
    """The tool-call markup in `text`, or None when it holds none of any known format. Markup only talked about
    (`the <tool_call> tag`) and JSON objects that are not calls are not markup."""
    # the pre-check: plain text (most content and reasoning) costs a few substring searches
    if not _may_hold_markup(text):
        return None
    best: _Opening | None = None
    for fmt in markup_formats():
        if not any(trigger in text for trigger in fmt.triggers):
            continue
        opening = _first_opening(fmt, text)
        # the earliest format wins; at one place, the longer opening (the more specific format)
        if opening is not None and (best is None or (opening.start, -opening.length) < (best.start, -best.length)):
            best = opening
    return None if best is None else _read_all(best, text)


def _first_opening(fmt: MarkupFormat, text: str) -> _Opening | None:
    found = None
    for match in fmt.needs("anchor").finditer(text):
        step = read_call(fmt, text, match)
        if step.kind != "reject":
            found = _Opening(fmt, match.start(), match.end() - match.start(), step)
            break
    cut = _cut_opening(fmt, text, 0)
    if cut is not None and (found is None or cut < found.start):
        return _Opening(fmt, cut, len(text) - cut, None)
    return found


def _read_all(opening: _Opening, text: str) -> Markup:
    fmt, step = opening.fmt, opening.step
    if step is None:
        return Markup(fmt.name, (), False)
    calls, whole, pos = list(step.calls), step.kind == "call", step.end
    following = fmt.pattern("next") or fmt.needs("anchor")
    while (match := following.search(text, pos)) is not None:
        step = read_call(fmt, text, match)
        pos = max(step.end, match.start() + 1)
        if step.kind == "reject":
            continue
        calls.extend(step.calls)
        whole = whole and step.kind == "call"
    if _cut_opening(fmt, text, pos) is not None:
        whole = False
    return Markup(fmt.name, tuple(calls), whole)
