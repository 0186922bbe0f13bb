"""A multiple-choice target names one option: by its index (a number), its letter, or its text; one that reads
two ways is read as the task's other targets are written, else refused; never silently another option."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.tasks import build_samples, load_task

TASK = """\
name: mc
samples:
SAMPLES
doc_to_text: "{{ question }}"
doc_to_choice: options
doc_to_target: answer
answer: {type: choice, labels: LABELS}
scorer: choice
"""


def _golds(tmp_path: Path, samples: list[str], labels: str = "letters") -> list[str]:
    path = tmp_path / "mc.yaml"
    rows = "\n".join(f"  - {{question: q{i}, options: {s}}}" for i, s in enumerate(samples))
    path.write_text(TASK.replace("SAMPLES", rows).replace("LABELS", labels), encoding="utf-8")
    return [s.gold for s in build_samples(load_task(str(path)))]


def test_a_target_that_is_an_options_text_names_that_option(tmp_path: Path) -> None:
    golds = _golds(tmp_path, ["[London, Paris], answer: Paris", '["3", "7", "1", "0"], answer: "7"'])
    assert golds == ["B", "B"]  # "7" is no index of four options: it is option B's text
    assert _golds(tmp_path, ["[London, Paris], answer: Paris"], labels="text") == ["Paris"]


def test_a_target_that_reads_two_ways_follows_the_tasks_other_targets(tmp_path: Path) -> None:
    texts = ["[London, Paris], answer: Paris", '["3", "7", "1", "0"], answer: "1"', "[B, C], answer: B"]
    assert _golds(tmp_path, texts) == ["B", "C", "A"]  # the others are option texts: "1" and "B" are texts too
    letters = ["[London, Paris], answer: B", '[A, "~A", B, "~B"], answer: B', "[L, R, 1/C, C], answer: C"]
    assert _golds(tmp_path, letters) == ["B", "B", "C"]  # MMLU's own: letters elsewhere, so B is the letter B


def test_a_target_nothing_disambiguates_is_one_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"document 0 of split 'test': 'B' is both the letter of option B and the "
                       r"text of option A, and no other target says which"):  # fmt: skip
        _golds(tmp_path, ["[B, C], answer: B"])


def test_a_number_is_an_index_and_one_out_of_range_says_so(tmp_path: Path) -> None:
    assert _golds(tmp_path, ['["3", "7", "1", "0"], answer: 1']) == ["B"]  # a number: the index, from 0
    with pytest.raises(InputError, match="7 names none of the 4 options"):
        _golds(tmp_path, ['["3", "7", "1", "0"], answer: 7'])
    path = tmp_path / "mc.yaml"  # as the command line says it: one error line
    done = subprocess.run(
        [sys.executable, "-m", "qualeval", "tasks", "show", str(path)], capture_output=True, text=True, timeout=120
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0] == (
        f"error: {path}: field 'doc_to_target': document 0 of split 'test': 7 names none of the 4 options: a number "
        "is an option's index, from 0 to 3; else give an option's letter (A-D) or its text (option B's text is 7: "
        "quote it to name that option)"
    )
