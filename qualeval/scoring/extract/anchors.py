"""Answer markers in the final content, and the span each one introduces.

A span runs to the end of its sentence: a full stop ends it, except in a decimal (3.5), after an initial
("John F. Kennedy") or after a common abbreviation ("Mt. Everest", "e.g.").

A marker takes a value only where it states one:
- a placeholder (`Answer: <answer>`, `the answer is [letter]`, `"answer": "___"`: the prompt's own template) and a
  marker with nothing after it state none;
- a marker in prose that judges an answer ("this answer is not correct because ...", "the answer is wrong") states
  none;
- a marker whose value opens a fenced block on a later line ("The answer is:\n```\n17\n```") states the block's
  text; a JSON object in the block is the json rung's to read.

The model's last word counts: a correction right after a span ("12... no wait, 7", "Answer: 12? No, 7.") is read
before the span; a span that asks between values ("Answer: A or B?") or denies one ("the answer is not A") states
nothing but what follows it says instead ("It's B."). "B is the answer." names its value first, and yields to a
plain marker after.

Boxes on one line joined only by separators (`\\boxed{1} and \\boxed{2}`, `$\\boxed{1}$, $\\boxed{2}$`, `x = \\boxed{1}
\\quad x = \\boxed{2}`) state one answer and give one span, their values joined by commas; a box after prose or on
a later line is a new statement, often a correction, and gives its own span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["anchored_spans", "boxed", "placeholder", "restatement", "stated_spans", "unfilled"]

_LINE = r"(?=(?P<v>[^\n]*))"  # a lookahead: a marker later on the same line is found too
_FIELD = re.compile(r"""["']answer["']\s*:\s*["'](?P<v>[^"'\n]*)["']""", re.IGNORECASE)
"""A JSON answer field written in prose, its value quoted."""
# an unquoted value: a number, or an expression where the model wrote one instead of its result
_UNQUOTED = re.compile(r"""["']answer["']\s*:\s*(?P<v>[^"'\s{\[][^\n]*?)\s*,?\s*(?:}|$)""", re.I | re.M)
# an adverb between the verb and the value is no part of the value: "the answer is therefore B"
_ADVERB = (
    r"(?:(?:therefore|thus|hence|clearly|indeed|definitely|certainly|obviously|then|still|simply|actually)\b,?\s*)?"
)
_STATES = re.compile(
    rf"(?<!incorrect )(?<!wrong )\b(?:(?:final|correct|best|right)\s+answer|answer"
    rf"|(?:correct|right|best)\s+(?:option|choice))\s+(?:is|would\s+be|should\s+be)\s*[:：]?\s*{_ADVERB}{_LINE}",
    re.IGNORECASE,
)
"""`the answer is X`: "the incorrect answer is (D)" names an option to reject."""
_MARKERS = [
    re.compile(rf"####\s*{_LINE}"),
    # `Answer: X`, `Answer = X` (not `answer == x` nor `my_answer = ...` in code), `Final: X`
    re.compile(
        rf"(?:(?:final\s+)?answer\s*\**\s*(?:is\s*)?[:：]|(?<![\w.])(?:final\s+)?answer\s*=(?!=)"
        rf"|\bfinal\s*\**\s*[:：])\**[ \t]*{_LINE}",
        re.IGNORECASE,
    ),
    _STATES,
    # "I'll answer B.": a value of a few words that ends the sentence; not "Before I answer, ...", "I'll answer in
    # 3 steps", "I will answer the question below"
    re.compile(
        rf"\bI(?:'ll|\s+will|\s+would|'d)?\s+answer\b[ \t]*[:：]?[ \t]*"
        rf"(?!(?:in|with|by|the|this|that|these|it|each|all|your|my|as|after|before|when|now|first|briefly|below"
        rf"|following|step|based|using|from|to|for|on|carefully|honestly)\b)"
        rf"(?=[^\s,;:.!?][^\s.!?]*(?:[ \t]+[^\s.!?]+){{0,2}}[ \t]*(?:[.!]|$)){_LINE}",
        re.IGNORECASE | re.MULTILINE,
    ),
    _FIELD,
    _UNQUOTED,
]
_PROSE = _MARKERS[:4]
"""The markers whose span is prose the model goes on writing, which a correction may follow."""
# `B is the answer.`, "So, (B) is the correct answer.": the value comes first. Not a sentence that only points at
# the answer ("Here is the answer in JSON", "The value of A is the answer to the problem"): a pronoun or an
# article opens none (but "The option (D) is ..."), and nothing but the sentence's end may follow "answer".
_NAMED_FIRST = re.compile(
    r"(?:^|(?<=[\n.!?;:,]))[ \t*]*(?:(?:so|thus|therefore|hence|then|clearly|finally)\b,?[ \t]*)?"
    r"(?!(?:the|this|that|these|those|which|what|here|there|it|none|each|all|one|any|such|my|our|your)\b"
    r"(?!\s+(?:option|choice|letter)\b))"
    r"(?P<v>(?:[^\n.!?;:,]|(?<=\d)\.(?=\d)){1,40}?)[ \t*]+is[ \t]+(?:the|my|our)[ \t]+"
    r"(?:(?:final|correct|right|best)[ \t]+)?answer\b(?=[ \t*]*(?:[.!,;)]|$|(?:because|since|as)\b))",
    re.IGNORECASE | re.MULTILINE,
)
_PLACEHOLDER = re.compile(
    r"(?:[<\[{(]{1,2}\s*(?:(?:your|the|final|correct|chosen|insert|a|an)\s+)*(?:answer|letter|number|choice|option"
    r"|value|result|response|solution|label|yes\s*/\s*no|yes\s+or\s+no)(?:\s+here)?\s*[>\]})]{1,2}|_{2,}|\.{3}|…)",
    re.IGNORECASE,
)
"""A template's slot where the value goes: `<answer>`, `[letter]`, `{{answer}}`, `___`, `...`."""
_JUDGED = re.compile(
    r"(?:(?:in)?correct|wrong|right)\b(?=\s*(?:$|[,;.!?]|(?:because|since|as|but|and|so)\b))|not\b|n't\b",
    re.IGNORECASE,
)
"""A value that judges an answer rather than states one: "this answer is not correct because ...", "the answer is
wrong". Read after an `is` marker only: `Answer: Not enough information` states a value."""
_HEDGE = re.compile(r"\bwould\s+be\b", re.IGNORECASE)
_LEAD = re.compile(r"[\s`*\"'$]*")
"""What may stand between a marker and a marker it introduces: space, quotes, emphasis, a math delimiter."""
_BLOCK = re.compile(r"\s*```[ \t]*\w*[ \t]*\n(?P<b>.*?)(?:```|\Z)", re.DOTALL)
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


def _block(content: str, at: int) -> str | None:
    """The text of a fenced block that opens at `at` (space and line breaks before it aside): "" for a JSON object or
    list, which the json rung reads; None when no block opens there."""
    match = _BLOCK.match(content, at)
    if match is None:
        return None
    body = match.group("b").strip()
    return "" if body[:1] in "{[" else body


def _judged(pattern: re.Pattern[str], match: re.Match[str]) -> bool:
    """Whether an `is` marker's value judges an answer rather than states one ("this answer is not correct")."""
    return pattern is _STATES and not re.search("[:：]", match.group(0)) and bool(_JUDGED.match(match.group("v")))


def _value(content: str, pattern: re.Pattern[str], match: re.Match[str]) -> str:
    """The span a marker introduces, or "" when it introduces none (a placeholder, nothing)."""
    value = match.group("v")
    if (block := _block(content, match.start("v"))) is not None:
        return block
    if pattern is _FIELD:  # a JSON string: `"\\sqrt{89}"` is \sqrt{89}
        value = value.replace("\\\\", "\\")
    span = sentence(value)
    return "" if placeholder(span) else span


def placeholder(span: str) -> bool:
    """Whether a span is a template's slot (`<answer>`, `[letter]`, `___`), which states no value."""
    core = span.strip().strip("*`\"'$").strip()
    return bool(core) and _PLACEHOLDER.fullmatch(core) is not None


# A correction: the model takes back what it just said and says it again ("12... no wait, 7", "12? No, 7.",
# "(B). Actually, (C)."). A cue follows the end of a clause; "no" is one only before more words ("No, 7"): alone
# ("Yes? No.") it is the answer.
_CUE = r"(?:no[,!]?\s+wait|wait|actually|correction|i\s+mean|scratch\s+that|no(?=[,!:—–]\s*\S))"
_SAYS = r"(?:it'?s|it\s+is|it\s+must\s+be|make\s+that|(?:so\s+)?the\s+(?:(?:correct|right|final)\s+)?answer\s+is)"
_AFTER_CUE = rf"\b[\s,:!—–-]*(?:{_SAYS}\b[\s:]*)?"
_RETRACTION = re.compile(rf"(?:(?<=[.…,;:!—–\n])|(?<=\s[-–—]))\s*{_CUE}{_AFTER_CUE}", re.IGNORECASE)
# a question, then the statement that answers it ("A or B? It's B.", "Yes? No.")
_ASKED = re.compile(rf"\?\s*(?:{_CUE}{_AFTER_CUE}|{_SAYS}\b[\s:]*)?", re.IGNORECASE)
# after a denial ("the answer is not A"), what the model says it is instead: "not A, it's B", "not 12, but 7",
# "not A. B."; a list after a comma ("not 12, 13 or 14") is more of what it denies
_DENIAL = re.compile(
    rf"(?<=[,;:—–])\s*(?:(?:but|rather|instead)\b[\s,]*(?:{_SAYS}\b[\s:]*)?|{_SAYS}\b[\s:]*)"
    rf"|(?:(?<=[.!;]\s)|(?<=\n))\s*(?:(?:but|rather|instead)\b[\s,]*)?(?:{_SAYS}\b[\s:]*)?",
    re.IGNORECASE,
)
# what a restatement is: a value, a few words with no verb; not a remark ("Actually, let me check", "No, because
# ...", "Actually, 7 is also possible", "Wait a moment", "No, really") nor another denial ("..., so the answer is
# not (D)")
_REMARK = re.compile(
    r"^(?:let|i|we|this|that|there|here|hmm|because|since|as|so|but|if|then|to|for|about|again|my|a|an|just"
    r"|quite|really|well|ok|okay|not|never|none)\b"
    r"|\b(?:is|are|was|were|be|been|seems?|could|might|may|also|would|should|will|can|does|do|did|has|have|had)\b",
    re.IGNORECASE,
)


_ALTERNATIVES = re.compile(r"\s(?:or|vs\.?|versus)\s", re.IGNORECASE)


def _restating(tail: str) -> bool:
    return bool(re.search(r"\w", tail)) and len(tail.split()) <= 4 and _REMARK.search(tail) is None


def restatement(text: str, *, denied: bool = False) -> str | None:
    """The value a text ends on after a retraction ("12... no wait, 7"), a question ("A or B? It's B.") or, where
    the text opens by denying a value (`denied`), after the denial ("not A. It's B."): the model's last word. None
    where it ends on no such value."""
    patterns = (_RETRACTION, _ASKED, _DENIAL) if denied else (_RETRACTION, _ASKED)
    ends = [m.end() for pattern in patterns for m in pattern.finditer(text) if text[: m.start()].strip()]
    if not ends:
        return None
    tail = sentence(text[max(ends) :]).strip()
    return tail if _restating(tail) else None


def _corrected(content: str, at: int, end: int, *, denied: bool) -> str | None:
    """The correction of the span content[at:end]: within the span, or in the sentence right after it (on the same
    line or the next)."""
    rest = re.match(r"[.!?。]?[ \t]*\n?[ \t]*", content[end:])
    after = end + (rest.end() if rest else 0)
    return restatement(content[at : after + len(sentence(content[after:]))], denied=denied)


@dataclass(frozen=True, slots=True)
class _Mark:
    start: int
    value_at: int
    span: str
    hedged: bool = False
    """The marker states the answer as a conditional ("the closest answer would be (E)")."""
    judged: bool = False
    """The marker judges an answer ("this answer is not correct because ..."): the model answered, no value."""
    weak: bool = False
    """The value comes before the words "is the answer": a plain marker after it wins."""
    asked: bool = False
    """The span is a question ("Answer: 12?"); one between values ("Answer: A or B?") states none of them."""
    correction: str | None = None
    """What the model says instead, right after the span ("12? No, 7.")."""

    @property
    def plain(self) -> bool:
        return not (self.hedged or self.weak)


def _marked(content: str, pattern: re.Pattern[str], match: re.Match[str], value: str) -> _Mark:
    at, judged = match.start("v"), _judged(pattern, match)
    hedged = _HEDGE.search(match.group(0)) is not None
    if pattern not in _PROSE or not content.startswith(value, at):  # a JSON field, a fenced block
        return _Mark(match.start(), at, value, hedged, judged)
    asked = content.startswith("?", at + len(value))
    correction = _corrected(content, at, at + len(value), denied=judged or asked)
    return _Mark(match.start(), at, value, hedged, judged, asked=asked, correction=correction)


def _found(content: str) -> list[_Mark]:
    """Every marker that introduces a span, in order. A marker whose value is another marker (`Answer: "answer":
    "15"`, `Answer: \\boxed{2}`) gives no span of its own: the inner one holds the value."""
    found: list[_Mark] = []
    for pattern in _MARKERS:
        for match in pattern.finditer(content):
            value = _value(content, pattern, match)
            if value.strip():
                found.append(_marked(content, pattern, match, value))
    for match in _NAMED_FIRST.finditer(content):
        value = match.group("v").strip(" \t*")
        if value and not placeholder(value):
            found.append(_Mark(match.start("v"), match.start("v"), value, weak=True))
    boxes = [_Mark(start, start, value) for start, value in _boxes(content) if not placeholder(value)]
    starts = {mark.start for mark in [*found, *boxes]}
    found = [mark for mark in found if not _introduces_another(content, mark.value_at, starts - {mark.start})]
    return sorted([*found, *boxes], key=lambda mark: mark.start)


def unfilled(line: str) -> bool:
    """Whether the last answer marker on a line states nothing: `Answer:` with nothing after it, `Answer: <answer>`.
    Such a line is no answer, not the words "Answer:"."""
    matches = [(m.start(), m) for pattern in _MARKERS for m in pattern.finditer(line)]
    if not matches:
        return False
    value = max(matches, key=lambda item: item[0])[1].group("v").strip()
    return not value or placeholder(sentence(value))


def anchored_spans(content: str) -> list[tuple[int, str]]:
    """Every (position, span) an answer marker introduces, in the order they appear: those that state no value
    (a judgement, a conditional a plain statement follows) too."""
    return [(mark.start, mark.span) for mark in _found(content)]


def stated_spans(content: str) -> list[tuple[int, tuple[str, ...]]]:
    """Each marker that states an answer, with what it states, the best reading first: a correction right after
    it ("12? No, 7."), then its own span. Not a judgement of one ("this answer is not correct because 5 is too
    big" states no 5) nor a question between values ("A or B?"), unless corrected ("The answer is not A. It's B."); a
    conditional ("would be") or a value before "is the answer" only where no plain marker follows it. "The
    closest answer would be (E) ... The answer is (D)." weighs an option, then answers."""
    found = _found(content)
    stated = []
    for n, mark in enumerate(found):
        if not mark.plain and any(later.plain for later in found[n + 1 :]):
            continue
        readings = [mark.correction] if mark.correction else []
        readings += [] if mark.judged or (mark.asked and _ALTERNATIVES.search(mark.span)) else [mark.span]
        if readings:
            stated.append((mark.start, tuple(readings)))
    return stated
