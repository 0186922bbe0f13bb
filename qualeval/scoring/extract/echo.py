"""Text of a response that repeats its prompt: the prompt's words, never read as the model's answer.

A small model that degenerates repeats its prompt until `max_tokens`. Read as it stands, the anchor rung finds
`Answer: no` in the repeated instruction (`answer ... with "Answer: yes" or "Answer: no"`) and the last-line rung
a letter in each repeated option list. A run of at least ECHO_WORDS words that the prompt holds in the same order
(whitespace aside) is the prompt's text: it is masked before the ladder reads. A shorter run is the model's own
(`Answer: no` on its own line, an option's label), and so is a run that lies within one option of the prompt's
list: quoting one option names a choice ("The answer is B. the mitochondria ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["ECHO_SHARE", "ECHO_WORDS", "unechoed"]

ECHO_WORDS = 8
"""The shortest run of the prompt's words read as an echo: a sentence of the prompt, not a phrase it shares."""
ECHO_SHARE = 0.5
"""The share of a response's characters in echoed runs from which the response is mostly an echo."""

_WORD = re.compile(r"\S+")
_LABEL = re.compile(r"^\s*(?:\(\s*\w{1,2}\s*\)|\[\s*\w{1,2}\s*\]|\w{1,2}\s*[.):])\s*")


@dataclass(frozen=True, slots=True)
class _Prompt:
    words: tuple[str, ...]
    lines: tuple[int, ...]
    """The prompt line each word is on."""
    starts: dict[int, tuple[int, ...]]
    """Where each run of ECHO_WORDS words begins in the prompt, by the run's hash: a long prompt's index stays small."""
    options: frozenset[int]
    """The prompt lines that are one option of its list: a label, maybe, then a choice's text."""


def _key(word: str) -> str:
    return word.strip("*_`").casefold()


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


@lru_cache(maxsize=8)  # the repeats of an item (--samples-per-item) read the same prompt
def _indexed(prompt: str, choices: tuple[str, ...]) -> _Prompt:
    words: list[str] = []
    lines: list[int] = []
    options: set[int] = set()
    wanted = {_flat(c) for c in choices if c.strip()}
    for number, line in enumerate(prompt.splitlines()):
        found = [_key(m.group(0)) for m in _WORD.finditer(line)]
        words += found
        lines += [number] * len(found)
        if found and (_flat(line) in wanted or _flat(_LABEL.sub("", line)) in wanted):
            options.add(number)
    starts: dict[int, list[int]] = {}
    for i in range(len(words) - ECHO_WORDS + 1):
        starts.setdefault(hash(tuple(words[i : i + ECHO_WORDS])), []).append(i)
    return _Prompt(tuple(words), tuple(lines), {k: tuple(v) for k, v in starts.items()}, frozenset(options))


def _run(said: list[str], at: int, prompt: _Prompt) -> tuple[int, int]:
    """The longest run of the response's words from `at` that the prompt holds: its length and where it begins
    in the prompt (0, 0 when no run of ECHO_WORDS words does)."""
    best, where = 0, 0
    head = tuple(said[at : at + ECHO_WORDS])
    for start in prompt.starts.get(hash(head), ()):
        if prompt.words[start : start + ECHO_WORDS] != head:  # another run with the same hash
            continue
        length = ECHO_WORDS
        while (
            at + length < len(said)
            and start + length < len(prompt.words)
            and said[at + length] == prompt.words[start + length]
        ):
            length += 1
        if at + length < len(said) and start + length < len(prompt.words):
            length += _ragged(said[at + length], prompt.words[start + length], last=at + length == len(said) - 1)
        if length > best:
            best, where = length, start
    return best, where


def _ragged(word: str, wanted: str, *, last: bool) -> bool:
    """Whether a word at the end of a run still belongs to it: the budget cut it off (the content's last word, a
    start of the prompt's), or the next copy of the prompt follows it with no space (`no".Premise`)."""
    return (last and wanted.startswith(word)) or (word.startswith(wanted) and len(word) > len(wanted))


def _one_option(prompt: _Prompt, start: int, length: int) -> bool:
    first, last = prompt.lines[start], prompt.lines[start + length - 1]
    return first == last and first in prompt.options


def _may_echo(said: list[str], prompt: str) -> bool:
    """Whether some ECHO_WORDS words in a row of the content are all words of the prompt: most answers have no
    such run, and are spared indexing the prompt."""
    vocabulary = {_key(word) for word in prompt.split()}
    row = 0
    for word in said:
        row = row + 1 if word in vocabulary else 0
        if row >= ECHO_WORDS:
            return True
    return False


def _back(said: list[str], at: int, start: int, prompt: _Prompt, floor: int) -> int:
    """How many words before a run (from `floor` on) still repeat the prompt before it: a word the model changed
    is bridged when the one before it matches again (`A. True, False` echoing the prompt's `A. True, True`)."""
    back = 0
    while at - back > floor and start - back > 0:
        if said[at - back - 1] == prompt.words[start - back - 1]:
            back += 1
        elif at - back - 1 > floor and start - back > 1 and said[at - back - 2] == prompt.words[start - back - 2]:
            back += 2
        else:
            break
    return back


def _echoed_words(found: list[re.Match[str]], said: list[str], prompt: _Prompt) -> list[re.Match[str]]:
    """The words of the content that are part of an echoed run."""
    echoed: list[re.Match[str]] = []
    at = floor = 0
    while at + ECHO_WORDS <= len(said):
        length, start = _run(said, at, prompt)
        if length and not _one_option(prompt, start, length):
            back = _back(said, at, start, prompt, floor)
            echoed += found[at - back : at + length]
            at = floor = at + length
        else:
            at += max(length, 1)
    return echoed


def unechoed(content: str, prompt: str, choices: tuple[str, ...] = ()) -> tuple[str, float]:
    """The content with every run that repeats the prompt blanked (its lines kept, so the last-line rung still
    reads the model's own last line), and the share of the content's characters those runs held."""
    found = list(_WORD.finditer(content))
    said = [_key(m.group(0)) for m in found]
    if len(said) < ECHO_WORDS or not _may_echo(said, prompt):
        return content, 0.0
    echoed = _echoed_words(found, said, _indexed(prompt, choices))
    if not echoed:
        return content, 0.0
    text = list(content)
    for match in echoed:
        text[match.start() : match.end()] = " " * (match.end() - match.start())
    share = sum(m.end() - m.start() for m in echoed) / sum(len(w) for w in content.split())
    return "".join(text), share
