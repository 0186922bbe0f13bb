"""A name a free-form answer rejects or takes back: it names it, but does not give it as the answer.

Rejected: the words right before the name set it aside for another ("Canberra rather than Sydney", "Canberra
instead of Sydney", "as opposed to Sydney"), or the words right after it say it is not the answer ("Sydney is
wrong", "Sydney is not the capital"). Taken back: a later clause corrects it ("Sydney. No wait — Canberra",
"Sydney, sorry, I mean Canberra", "Sydney. That's wrong."). A correction needs a marker that starts its clause and,
but for a marker that judges ("that's wrong", "my mistake"), a new candidate after it; a bare "no" or "actually"
corrects only as a clause of its own, since "No other city comes close" goes on rather than corrects. Words are
written forms (qualeval.scoring.forms): lower case, no punctuation, no articles.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["SKIPPED", "rejected", "retracted"]

_REJECTING = (("rather", "than"), ("instead", "of"), ("opposed", "to"), ("in", "place", "of"))
"""Words right before a name that set it aside for another."""
_LEADING = (("no", "wait"), ("wait",), ("i", "mean"), ("i", "meant"), ("or", "rather"), ("correction",), ("oops",))
"""Markers that correct what came before and may lead straight into the new candidate: "I mean Canberra"."""
_ALONE = (("no", "actually"), ("no", "sorry"), ("no",), ("sorry",), ("actually",), ("hmm",))
"""Markers that correct only as a clause of their own: "Sydney. No, Canberra." (not "No other city ...")."""
_JUDGING = (
    ("thats", "wrong"),
    ("that", "is", "wrong"),
    ("thats", "incorrect"),
    ("that", "is", "incorrect"),
    ("thats", "not", "right"),
    ("my", "mistake"),
    ("i", "was", "wrong"),
    ("scratch", "that"),
)
"""Markers that take back what came before with no candidate after them."""
_COPULAS = (("is",), ("was",), ("are",), ("were",), ("would", "be"))
_WRONG = frozenset(("wrong", "incorrect", "false", "mistake", "mistaken", "wrongly"))
"""What a name is said to be, right after it, that sets it aside: "Cairo is incorrect"."""
_DENIED = frozenset(("isnt", "wasnt", "arent", "werent"))
SKIPPED = frozenset(("wait", "no", "sorry", "mean", "meant", "oops", "hmm", "obviously", "clearly", "thats"))
"""Words a correction may lead into its candidate with ("No wait, I mean Canberra"), beside filler words."""


def rejected(clause: list[str], at: int, end: int, quiet: frozenset[str]) -> bool:
    """Whether the words right before the name at `at` set it aside for another ("Canberra rather than Sydney"),
    or the words right after it, where it ends at `end`, say it is not the answer."""
    return any(tuple(clause[max(at - len(words), 0) : at]) == words for words in _REJECTING) or _disowned(
        clause[end:], quiet
    )


def _disowned(words: list[str], quiet: frozenset[str]) -> bool:
    """Whether the words after a name say it is not the answer: "Cairo is incorrect", "Tokyo is wrong", "Oslo is
    not the capital" (nothing after "not" but `quiet` words: filler, the question's). "Canberra is not the largest
    city" says something else of it."""
    if size := _starts(words, _COPULAS):
        if words[size : size + 1] and words[size] in _WRONG:
            return True
        rest = words[size + 1 :] if words[size : size + 1] == ["not"] else None
    else:
        rest = words[1:] if words[:1] and words[0] in _DENIED else None
    return rest is not None and all(w in quiet for w in rest)


def _starts(words: list[str], markers: tuple[tuple[str, ...], ...]) -> int:
    """How many words a marker that starts `words` holds (0: none does)."""
    return next((len(m) for m in markers if tuple(words[: len(m)]) == m), 0)


def retracted(parts: list[list[str]], clause: int, end: int, replaces: Callable[[list[str]], bool]) -> bool:
    """Whether a correction after the name that ends at word `end` of clause `clause` takes it back. `replaces`:
    whether words are a new candidate that no accepted answer matches. A name said again after the correction is
    judged where it stands again."""
    for k in range(clause, len(parts)):
        words = parts[k][end:] if k == clause else parts[k]
        after = parts[k + 1] if k + 1 < len(parts) else []
        if _starts(words, _JUDGING):
            return True
        if size := _starts(words, _LEADING):
            if replaces(words[size:] or after):
                return True
        elif (size := _starts(words, _ALONE)) and size == len(words) and replaces(after):
            return True
    return False
