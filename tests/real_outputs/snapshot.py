"""The committed per-item verdicts of each real-output corpus (tests/data/real_outputs/verdicts/), and the listing
of what moved against them.

A snapshot line is `[item id, correct, extracted, status]`, in the corpus's order; never the output itself. An
extracted value longer than LONG characters is kept as its head and a digest, so that any change still shows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from tests.conftest import ROOT
from tests.real_outputs.corpora import Corpus, Verdict

LONG = 80
TAIL = 160
"""How much of the end of an output a moved item shows."""
REWRITE = "python -m tests.real_outputs --write"

Held = tuple[str, bool, "str | None", str]


def compact(extracted: str | None) -> str | None:
    if extracted is None or len(extracted) <= LONG:
        return extracted
    digest = hashlib.sha256(extracted.encode("utf-8")).hexdigest()[:12]
    return f"{extracted[:60]}… ({len(extracted)} chars, sha256 {digest})"


def held(verdict: Verdict) -> Held:
    return verdict.id, verdict.correct, compact(verdict.extracted), verdict.status


def read(corpus: Corpus) -> list[Held] | None:
    """The committed snapshot, or None when there is none yet."""
    if not corpus.snapshot.exists():
        return None
    lines = corpus.snapshot.read_text(encoding="utf-8").splitlines()
    return [(str(i), bool(c), e, str(s)) for i, c, e, s in map(json.loads, lines)]


def write(corpus: Corpus, verdicts: Sequence[Verdict]) -> None:
    corpus.snapshot.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(held(v), ensure_ascii=False) + "\n" for v in verdicts]
    corpus.snapshot.write_text("".join(lines), encoding="utf-8")


def _said(correct: bool, extracted: str | None, status: str) -> str:
    shown = extracted if extracted is None or len(extracted) <= 40 else extracted[:40] + "…"
    return f"{'right' if correct else 'wrong'} {shown!r} {status}"


def tail(text: str) -> str:
    """How an output ends, on one line."""
    end = text.rstrip()[-TAIL:].replace("\n", "⏎")
    return ("…" if len(text.rstrip()) > TAIL else "") + end


def moved(corpus: Corpus, before: Sequence[Held], now: Sequence[Verdict]) -> list[str]:
    """One line per item whose verdict, extraction or status is not what the snapshot holds (or which one of the
    two does not have): the corpus, the item, before → after, and how its output ends."""
    was = {item[0]: item for item in before}
    out = []
    for verdict in now:
        after = held(verdict)
        old = was.pop(verdict.id, None)
        if old == after:
            continue
        before_said = "not in the snapshot" if old is None else _said(*old[1:])
        out.append(f"{corpus} {verdict.id}: {before_said} → {_said(*after[1:])} | ends: {tail(verdict.text)}")
    out += [f"{corpus} {key}: {_said(*old[1:])} → no longer scored" for key, old in was.items()]
    return out


def summary(corpus: Corpus, lines: Sequence[str], before: Sequence[Held], now: Sequence[Verdict]) -> str:
    """The failure: how many items moved, how many of them changed verdict, each item, and what to do."""
    was = {item[0]: item[1] for item in before}
    flipped = sum(1 for v in now if v.id in was and was[v.id] != v.correct)
    acc_before = 100 * sum(h[1] for h in before) / max(len(before), 1)
    acc_now = 100 * sum(v.correct for v in now) / max(len(now), 1)
    head = (
        f"{len(lines)} {'item' if len(lines) == 1 else 'items'} of {corpus} moved against "
        f"{corpus.snapshot.relative_to(ROOT)} ({flipped} {'verdict' if flipped == 1 else 'verdicts'} changed; "
        f"accuracy {acc_before:.2f} → {acc_now:.2f}). Read each one; when every one is shown right, rewrite the "
        f"snapshot with `{REWRITE} {corpus}` and commit it with the change."
    )
    return "\n".join([head, *lines])
