"""Answer markers in the final content, and the span each one introduces.

A span runs to the end of its sentence: a full stop ends it, except in a decimal (3.5), after an initial
("John F. Kennedy") or after a common abbreviation ("Mt. Everest", "e.g.").

Boxes on one line joined only by separators (`\\boxed{1} and \\boxed{2}`, `$\\boxed{1}$, $\\boxed{2}$`, `x = \\boxed{1}
\\quad x = \\boxed{2}`) state one answer and give one span, their values joined by commas; a box after prose or on
a later line is a new statement, often a correction, and gives its own span.
"""

from __future__ import annotations

import re

__all__ = ["anchored_spans", "boxed", "stated_spans"]

_LINE = r"(?=(?P<v>[^\n]*))"  # a lookahead: a marker later on the same line is found too
_FIELD = re.compile(r"""["']answer["']\s*:\s*["'](?P<v>[^"'\n]*)["']""", re.IGNORECASE)
"""A JSON answer field written in prose, its value quoted."""
_MARKERS = [
    re.compile(rf"####\s*{_LINE}"),
    re.compile(rf"(?:final\s+)?answer\s*\**\s*(?:is\s*)?[:：]\**[ \t]*{_LINE}", re.IGNORECASE),
    re.compile(
        # "the incorrect answer is (D)" names an option to reject
        rf"(?<!incorrect )(?<!wrong )\b(?:(?:final|correct|best|right)\s+answer|answer"
        rf"|(?:correct|right|best)\s+(?:option|choice))\s+(?:is|would\s+be|should\s+be)\s*[:：]?\s*{_LINE}",
        re.IGNORECASE,
    ),
    _FIELD,
    # an unquoted value: a number, or an expression where the model wrote one instead of its result
    re.compile(r"""["']answer["']\s*:\s*(?P<v>[^"'\s{\[][^\n]*?)\s*,?\s*(?:}|$)""", re.IGNORECASE | re.MULTILINE),
]
_HEDGE = re.compile(r"\bwould\s+be\b", re.IGNORECASE)
_LEAD = re.compile(r"[\s`*\"'$]*")
"""What may stand between a marker and a marker it introduces: space, quotes, emphasis, a math delimiter."""
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
# what may stand between two boxes of one answer: separators, math delimiters and a variable's name ("or $n = ")
_BOX_JOIN = re.compile(
    r"(?:[ \t]|[,;&$~]|\band\b|\bor\b|\\q?quad\b|\\[,;:! ]|\\(?:text|mbox|mathrm)\{\s*(?:and|or|,)?\s*\}"
    r"|\b[A-Za-z](?:_\{?\w+\}?)?\s*=)*"
)
_ABBREVIATIONS = frozenset(
    (
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "jr",
        "sr",
        "vs",
        "etc",
        "eg",
        "ie",
        "mt",
        "ft",
        "no",
        "vol",
        "approx",
        "ca",
        "prof",
        "gen",
        "col",
        "lt",
        "sgt",
        "fig",
        "al",
        "inc",
        "ltd",
        "co",
        "corp",
    )
)
_STOP = re.compile(r"[.!?。](?=\s|$|\*)|\n")


def boxed(text: str, start: int) -> str | None:
    """The balanced-brace argument of the `\\boxed{` whose brace ends at `start`."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return None


def _ends_sentence(span: str, at: int) -> bool:
    if span[at] != ".":
        return True
    before = re.search(r"([A-Za-z.]+)$", span[:at])
    word = before.group(1) if before else ""
    if len(word) == 1 and word.isupper():
        return False  # an initial: "John F. Kennedy"
    # "Mt. Everest", "e.g.", "U.S."
    return not (word.replace(".", "").lower() in _ABBREVIATIONS or "." in word)


def sentence(span: str) -> str:
    """The span up to the end of its first sentence."""
    for match in _STOP.finditer(span):
        if _ends_sentence(span, match.start()):
            return span[: match.start()]
    return span


def _boxes(content: str) -> list[tuple[int, str]]:
    """(position, value) of each box, or of each run of boxes that states one answer."""
    runs: list[tuple[int, int, list[str]]] = []  # start, end, values
    for match in _BOXED.finditer(content):
        value = boxed(content, match.end())
        if value is None or not value.strip():
            continue
        end = match.end() + len(value) + 1
        if runs and _BOX_JOIN.fullmatch(content, runs[-1][1], match.start()):
            runs[-1] = (runs[-1][0], end, [*runs[-1][2], value.strip()])
        else:
            runs.append((match.start(), end, [value.strip()]))
    return [(start, ", ".join(values)) for start, _, values in runs]


def _introduces_another(content: str, value_at: int, starts: set[int]) -> bool:
    """Whether the value a marker introduces begins with another marker (`Answer: "answer": "15"`)."""
    lead = _LEAD.match(content, value_at)
    end = lead.end() if lead else value_at
    return any(at in starts for at in range(value_at, end + 1))


def _found(content: str) -> list[tuple[int, str, bool]]:
    """Every (position, span, hedged) an answer marker introduces, in order. `hedged`: the marker states the answer
    as a conditional ("the closest answer would be (E)"). A marker whose value is another marker (`Answer: "answer":
    "15"`, `Answer: \\boxed{2}`) gives no span of its own: the inner one holds the value."""
    found: list[tuple[int, int, str, bool]] = []  # position, where the value begins, span, hedged
    for pattern in _MARKERS:
        for match in pattern.finditer(content):
            value = match.group("v")
            if pattern is _FIELD:  # a JSON string: `"\\sqrt{89}"` is \sqrt{89}
                value = value.replace("\\\\", "\\")
            if value.strip():
                hedged = _HEDGE.search(match.group(0)) is not None
                found.append((match.start(), match.start("v"), sentence(value), hedged))
    boxes = _boxes(content)
    starts = {start for start, *_ in found} | {start for start, _ in boxes}
    found = [item for item in found if not _introduces_another(content, item[1], starts)]
    found.extend((start, start, value, False) for start, value in boxes)
    found.sort(key=lambda item: item[0])
    return [(start, span, hedged) for start, _, span, hedged in found]


def anchored_spans(content: str) -> list[tuple[int, str]]:
    """Every (position, span) an answer marker introduces, in the order they appear."""
    return [(start, span) for start, span, _ in _found(content)]


def stated_spans(content: str) -> list[tuple[int, str]]:
    """The spans that state an answer: a conditional ("would be") only where no plain statement follows it. "The
    closest answer would be (E) ... The answer is (D)." weighs an option, then answers."""
    found = _found(content)
    return [
        (start, span)
        for n, (start, span, hedged) in enumerate(found)
        if not (hedged and any(not later for _, _, later in found[n + 1 :]))
    ]
