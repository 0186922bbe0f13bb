"""The public figures take run directories as plain strings, as `evaluate(out=...)` and `open_run` do."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.figures import board_runs, compare_runs, gate_runs
from tests.figures.test_board import flags, write_run
from tests.figures.test_gate import ACCURACY, policy


def test_compare_board_and_gate_take_string_paths(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(40, {1}), config={"temperature": 0.0})
    other = write_run(tmp_path / "other", flags(40, {1, 2, 3}), config={"temperature": 0.6})
    again = write_run(tmp_path / "again", flags(40, {1}), config={"temperature": 0.0})
    rule = policy(tmp_path, ACCURACY)
    assert compare_runs(str(base), str(other), again=str(again)) == compare_runs(base, other, again=again)
    as_text = board_runs([str(base), str(other)], baseline=str(base), rerun=str(again))
    assert as_text == board_runs([base, other], baseline=base, rerun=again)
    as_text = gate_runs(baseline=str(base), candidate=str(other), policy_path=str(rule), rerun=str(again))
    assert as_text == gate_runs(baseline=base, candidate=other, policy_path=rule, rerun=again)


def test_a_board_of_one_folder_name_is_refused_not_read_letter_by_letter(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(10, set()))
    with pytest.raises(InputError, match="a list of run directories"):
        board_runs(str(base))
