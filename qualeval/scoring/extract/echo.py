"""Text of a response that repeats its prompt: the prompt's words, never read as the model's answer.

A small model that degenerates repeats its prompt until `max_tokens`. Read as it stands, the anchor rung finds
`Answer: no` in the repeated instruction (`answer ... with "Answer: yes" or "Answer: no"`) and the last-line rung
a letter in each repeated option list. A run of at least ECHO_WORDS words that the prompt holds in the same order
(whitespace aside) is the prompt's text: it is masked before the ladder reads. A shorter run is the model's own
(`Answer: no` on its own line, an option's label). Two kinds of run are the model's though the prompt holds them:

- one option of the item, quoted: a run within one option line names a choice ("The answer is B. the
  mitochondria ..."), wherever else the prompt holds the same words (an example's option list);
- a closing statement in the examples' words. A model that follows few-shot chain of thought restates premises in
  its examples' phrasing and ends as they end ("we are not where we started. So the answer is No."): its closing
  is an example's sentence whenever its answer is that example's. A run is such a closing when words of the
  model's own come before it (a word it changed in a line it otherwise copies is its own: its working, in the
  examples' lines), it states one answer (one answer marker), its copy ends where a line of the prompt ends, and
  it holds at most one whole line of the prompt word for word (or no more words than the model's own before it).
  A copy is none of these: it comes first or alone, holds the instruction's forms, an option list or several
  examples, runs on mid-line (the budget cut it, or the model went on), or is a passage of the prompt.

A run whose copy crosses a blank line of the prompt is judged a piece at a time: a model that closes as an example
closes and runs on into a new question repeats the prompt's next `Q:` too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from qualeval.scoring.extract.anchors import anchored_spans

__all__ = ["ECHO_SHARE", "ECHO_WORDS", "Turns", "answers_after", "unechoed"]

ECHO_WORDS = 8
"""The shortest run of the prompt's words read as an echo: a sentence of the prompt, not a phrase it shares."""
ECHO_SHARE = 0.5
"""The share of a response's characters in echoed runs from which the response is mostly an echo."""

Turns = tuple[tuple[str, str], ...]
"""A prompt as it was sent: each message's role and text."""

_WORD = re.compile(r"\S+")
_ENDS = re.compile(r"[.!?:;][\"')\]*_`]*$")
"""A word that ends a sentence (or a clause a list or a quote follows)."""
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
    shown: tuple[bool, ...]
    """Whether each word is in an answer the prompt shows to an earlier question: an example's (`_answers`)."""


@dataclass(frozen=True, slots=True)
class _Run:
    at: int
    """The run's first word in the response."""
    end: int
    """One past its last word."""
    start: int
    """Where the prompt's copy of it begins."""
    back: int
    """How many of its first words were found going back from the words that match word for word (`_back`)."""
    changed: tuple[int, ...] = ()
    """The words among those the model changed (bridged by `_back`): words of its own."""


def _key(word: str) -> str:
    return word.strip("*_`").casefold()


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def _lines(turns: Turns) -> list[tuple[str, str]]:
    """Each line of the prompt with the role of its message; a blank line parts two messages."""
    rows: list[tuple[str, str]] = []
    for number, (role, text) in enumerate(turns):
        rows += [(role, "")] * bool(number)
        rows += [(role, line) for line in text.splitlines()]
    return rows


def _answers(rows: list[tuple[str, str]]) -> list[int | None]:
    """For each line, the first of its words that stands in an example's answer (None: none of them). An example's
    answer is an assistant message (chat few-shot), or what follows an earlier line that begins with the prompt's
    last line (its answer cue: `A: Let's think step by step.`, `A:`, a chat template's assistant header), to the end
    of that paragraph; a cue alone on its line may stand a blank line before its answer. A zero-shot prompt shows
    no answer: its instruction, its template and its question are never an example's."""
    said = [line.casefold().split() for _, line in rows]
    starts: list[int | None] = [
        0 if role == "assistant" and words else None for (role, _), words in zip(rows, said, strict=True)
    ]
    last = max((n for n, words in enumerate(said) if words), default=0)
    cue = said[last] if rows and rows[last][0] != "assistant" else []
    n = 0
    while cue and n < last:
        if said[n][: len(cue)] != cue:
            n += 1
            continue
        starts[n] = len(cue)
        n += 1
        if len(said[n - 1]) == len(cue):
            while n < last and not said[n]:
                n += 1
        while n < last and said[n]:
            starts[n] = 0
            n += 1
    return starts


@lru_cache(maxsize=8)  # the repeats of an item (--samples-per-item) read the same prompt
def _indexed(turns: Turns, choices: tuple[str, ...]) -> _Prompt:
    words: list[str] = []
    lines: list[int] = []
    shown: list[bool] = []
    options: set[int] = set()
    wanted = {_flat(c) for c in choices if c.strip()}
    rows = _lines(turns)
    for (number, (_, line)), first in zip(enumerate(rows), _answers(rows), strict=True):
        found = [_key(m.group(0)) for m in _WORD.finditer(line)]
        words += found
        lines += [number] * len(found)
        shown += [first is not None and i >= first for i in range(len(found))]
        if found and (_flat(line) in wanted or _flat(_LABEL.sub("", line)) in wanted):
            options.add(number)
    starts: dict[int, list[int]] = {}
    for i in range(len(words) - ECHO_WORDS + 1):
        starts.setdefault(hash(tuple(words[i : i + ECHO_WORDS])), []).append(i)
    held = {k: tuple(v) for k, v in starts.items()}
    return _Prompt(tuple(words), tuple(lines), held, frozenset(options), tuple(shown))


def _one_option(prompt: _Prompt, start: int, length: int) -> bool:
    first, last = prompt.lines[start], prompt.lines[start + length - 1]
    return first == last and first in prompt.options


def _run(said: list[str], at: int, prompt: _Prompt) -> tuple[int, int]:
    """The longest run of the response's words from `at` that the prompt holds: its length and where it begins
    in the prompt (0, 0 when no run of ECHO_WORDS words does). Of runs as long, one within an option line wins:
    the same option may stand in an example's list and in the item's."""
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
        option = _one_option(prompt, start, length)
        if length > best or (length == best and option and not _one_option(prompt, where, best)):
            best, where = length, start
    return best, where


def _ragged(word: str, wanted: str, *, last: bool) -> bool:
    """Whether a word at the end of a run still belongs to it: the budget cut it off (the content's last word, a
    start of the prompt's), or the next copy of the prompt follows it with no space (`no".Premise`)."""
    return (last and wanted.startswith(word)) or (word.startswith(wanted) and len(word) > len(wanted))


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


def _back(said: list[str], at: int, start: int, prompt: _Prompt, floor: int) -> tuple[int, tuple[int, ...]]:
    """How many words before a run (from `floor` on) still repeat the prompt before it, and which of them the
    model changed: a changed word is bridged when the one before it matches again (`A. True, False` echoing the
    prompt's `A. True, True`)."""
    back, changed = 0, []
    while at - back > floor and start - back > 0:
        if said[at - back - 1] == prompt.words[start - back - 1]:
            back += 1
        elif at - back - 1 > floor and start - back > 1 and said[at - back - 2] == prompt.words[start - back - 2]:
            changed.append(at - back - 1)
            back += 2
        else:
            break
    return back, tuple(changed)


def _runs(said: list[str], prompt: _Prompt) -> list[_Run]:
    """The runs of the content that repeat the prompt, an option quoted alone aside."""
    runs: list[_Run] = []
    at = floor = 0
    while at + ECHO_WORDS <= len(said):
        length, start = _run(said, at, prompt)
        if length and not _one_option(prompt, start, length):
            back, changed = _back(said, at, start, prompt, floor)
            runs.append(_Run(at - back, at + length, start - back, back, changed))
            at = floor = at + length
        else:
            at += max(length, 1)
    return runs


def _whole_lines(prompt: _Prompt, start: int, stop: int) -> int:
    """How many whole lines of the prompt its words start:stop hold."""
    lines = prompt.lines
    count = len(set(lines[start:stop]))
    count -= start > 0 and lines[start - 1] == lines[start]  # begins partway through a line
    count -= stop < len(lines) and lines[stop] == lines[stop - 1]  # ends partway through one
    return count


def _closing(content: str, found: list[re.Match[str]], run: _Run, own: int, prompt: _Prompt) -> bool:
    """Whether a run is the model's closing statement in its examples' words (see the module's doc); `own`: how
    many words of the model's own come before it."""
    length = run.end - run.at
    stop = run.start + length
    if own == 0:
        return False  # none of the model's own words come before it
    if not all(prompt.shown[run.start : stop]):
        return False  # not an example's answer: an instruction, a template, a question
    if stop < len(prompt.words) and prompt.lines[stop] == prompt.lines[stop - 1]:
        return False  # a copy that ends mid-line of the prompt: the budget cut it off, or the model went on its own
    if _whole_lines(prompt, run.start + run.back, stop) > 1 and own < length:
        return False  # a passage of the prompt, longer than the model's own working before it
    return len(anchored_spans(content[found[run.at].start() : found[run.end - 1].end()])) == 1


def _pieces(run: _Run, prompt: _Prompt) -> list[_Run]:
    """A run cut where its copy in the prompt crosses a blank line: a model that closes as an example closes and
    runs on into a new question matches the prompt's next example as far as `Q:`."""
    pieces: list[_Run] = []
    at, start, back = run.at, run.start, run.back
    for j in range(run.start + 1, run.start + run.end - run.at):
        if prompt.lines[j] > prompt.lines[j - 1] + 1:
            cut = run.at + j - run.start
            pieces.append(_Run(at, cut, start, back, tuple(i for i in run.changed if at <= i < cut)))
            at, start, back = cut, j, 0
    pieces.append(_Run(at, run.end, start, back, tuple(i for i in run.changed if i >= at)))
    return pieces


def _masked(content: str, found: list[re.Match[str]], pieces: list[_Run], prompt: _Prompt) -> list[_Run]:
    """The pieces that are echoes: all but the model's closing statements."""
    masked: list[_Run] = []
    copied = 0  # words before the piece that repeat the prompt word for word
    for piece in pieces:
        if not _closing(content, found, piece, piece.at - copied + len(piece.changed), prompt):
            masked.append(piece)
        copied += piece.end - piece.at - len(piece.changed)
    return masked


def _restated(run: _Run, after: int, prompt: _Prompt) -> bool:
    """Whether a run is a premise restated in a sentence of the model's own: words of its own come right before it
    (`after`: where the run before it ends) and its copy begins inside a sentence of the prompt ("Given that each
    level of the sandcastle has [half the square footage as the level below] it")."""
    start = run.start
    inside = start > 0 and prompt.lines[start - 1] == prompt.lines[start] and not _ENDS.search(prompt.words[start - 1])
    return run.at > after and inside


def _extent(run: _Run, found: list[re.Match[str]], said: list[str], prompt: _Prompt) -> list[tuple[int, int]]:
    """Where a run's words stand in the content. A last word that runs on past the prompt's (`_ragged`) in
    punctuation alone is the prompt's only as far as the prompt's word goes: `anakin.",` closes the model's JSON
    string. Running on in words, it is the prompt's next word or copy, written on with no space."""
    spans = [(m.start(), m.end()) for m in found[run.at : run.end]]
    last, wanted = said[run.end - 1], prompt.words[run.start + run.end - run.at - 1]
    if last != wanted and last.startswith(wanted) and not any(c.isalnum() for c in last[len(wanted) :]):
        word = found[run.end - 1]
        lead = len(word.group(0)) - len(word.group(0).lstrip("*_`"))
        spans[-1] = (word.start(), word.start() + lead + len(wanted))
    return spans


@dataclass(frozen=True, slots=True)
class _Masking:
    """The content's words as found and as keyed, the prompt indexed, the runs that repeat it cut into pieces, and
    the pieces masked as echoes."""

    found: list[re.Match[str]]
    said: list[str]
    prompt: _Prompt
    pieces: list[_Run]
    runs: list[_Run]


def _masking(content: str, turns: Turns, choices: tuple[str, ...]) -> _Masking | None:
    """What of the content echoes the prompt; None where nothing does (the prompt indexed only where some may)."""
    text = "\n\n".join(said for _, said in turns)
    found = list(_WORD.finditer(content))
    said = [_key(m.group(0)) for m in found]
    if len(said) < ECHO_WORDS or not _may_echo(said, text):
        return None
    indexed = _indexed(turns, choices)
    pieces = [piece for run in _runs(said, indexed) for piece in _pieces(run, indexed)]
    runs = _masked(content, found, pieces, indexed)
    return _Masking(found, said, indexed, pieces, runs) if runs else None


def _turns(prompt: str | Turns) -> Turns:
    return (("user", prompt),) if isinstance(prompt, str) else prompt


def unechoed(content: str, prompt: str | Turns, choices: tuple[str, ...] = ()) -> tuple[str, float]:
    """The content with every run that repeats the prompt blanked (its lines kept, so the last-line rung still
    reads the model's own last line), and the share of the content's characters that copy the prompt: a premise
    restated in a sentence of the model's own is masked but not counted there (`_restated`). `prompt`: its text,
    or its messages (an assistant message is an example's answer)."""
    masking = _masking(content, _turns(prompt), choices)
    if masking is None:
        return content, 0.0
    blanked = list(content)
    after = {piece.at: before.end for before, piece in pairwise([_Run(0, 0, 0, 0), *masking.pieces])}
    copied = 0
    for run in masking.runs:
        spans = _extent(run, masking.found, masking.said, masking.prompt)
        for start, end in spans:
            blanked[start:end] = " " * (end - start)
        copied += 0 if _restated(run, after[run.at], masking.prompt) else sum(end - start for start, end in spans)
    return "".join(blanked), copied / sum(len(w) for w in content.split())


def answers_after(content: str, prompt: str | Turns, choices: tuple[str, ...] = ()) -> bool:
    """Whether words of the model's own follow its echo that the prompt does not hold as they stand: a reply that
    repeats the question, then answers it ("Q: ... A: Paris"), and is cut off. A copy the budget cut short, or a
    few of the prompt's words between two copies, are pieces of the prompt: nothing of the model's own."""
    masking = _masking(content, _turns(prompt), choices)
    if masking is None:
        return False
    said, runs = masking.said, masking.runs
    masked = {i for run in runs for i in range(run.at, run.end)}
    own = [i for i in range(runs[0].end, len(said)) if i not in masked]
    return any(not _inside([said[i] for i in chunk], masking.prompt.words) for chunk in _consecutive(own))


def _consecutive(indices: list[int]) -> list[list[int]]:
    chunks: list[list[int]] = []
    for i in indices:
        if chunks and chunks[-1][-1] == i - 1:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


def _inside(chunk: list[str], words: tuple[str, ...]) -> bool:
    """Whether the words stand in the prompt in this order, one after another; the last may be cut short."""
    *whole, last = chunk
    n = len(whole)
    return any(
        list(words[i : i + n]) == whole and i + n < len(words) and words[i + n].startswith(last)
        for i in range(len(words) - n)
    )
