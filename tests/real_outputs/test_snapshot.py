"""The snapshot's listing of moved items, on made-up verdicts (no shared data needed)."""

from __future__ import annotations

from tests.real_outputs import snapshot
from tests.real_outputs.corpora import CORPORA, Verdict


def test_a_moved_item_is_listed_with_before_after_and_how_its_output_ends() -> None:
    corpus = CORPORA["bbh/navigate"]
    long = "x" * 100
    before = [("a", True, "Yes", "ok"), ("b", False, "No", "ok"), ("c", True, snapshot.compact(long), "ok")]
    now = [
        Verdict("a", False, None, "echoed", "We start at the origin.\n(1) ... So the answer is Yes."),
        Verdict("b", False, "No", "ok", "unchanged"),
        Verdict("c", True, long[:-1] + "y", "ok", "a long answer, changed in its last character"),
        Verdict("d", True, "No", "ok", "an item the snapshot does not have"),
    ]
    lines = snapshot.moved(corpus, before, now)
    assert lines[0] == (
        "bbh/navigate a: right 'Yes' ok → wrong None echoed | "
        "ends: We start at the origin.⏎(1) ... So the answer is Yes."
    )
    assert lines[1].startswith("bbh/navigate c: right 'xxxx") and lines[1].count("sha256") == 0  # shown short
    assert lines[2].startswith("bbh/navigate d: not in the snapshot → right 'No' ok")
    assert len(lines) == 3
    said = snapshot.summary(corpus, lines, before, now)
    assert said.startswith(
        "3 items of bbh/navigate moved against tests/data/real_outputs/verdicts/bbh/navigate.jsonl (1 verdict "
        "changed; accuracy 66.67 → 50.00)."
    )
    assert f"`{snapshot.REWRITE} bbh/navigate`" in said and said.endswith(lines[-1])


def test_an_item_no_longer_scored_is_listed() -> None:
    corpus = CORPORA["gsm/command-r"]
    lines = snapshot.moved(
        corpus, [("a", True, "1", "ok"), ("b", True, "2", "ok")], [Verdict("a", True, "1", "ok", "")]
    )
    assert lines == ["gsm/command-r b: right '2' ok → no longer scored"]


def test_a_long_extraction_is_kept_short_and_still_changes_with_its_last_character() -> None:
    one, other = "y" * 300, "y" * 299 + "z"
    assert snapshot.compact("short") == "short" and snapshot.compact(None) is None
    assert len(snapshot.compact(one) or "") < 120 and snapshot.compact(one) != snapshot.compact(other)
    assert "(300 chars, sha256 " in (snapshot.compact(one) or "")
