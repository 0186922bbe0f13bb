"""serve-sim's banner counts what its answer key answers: a task's episodes as well as its single items, and warns
of no answer key only when there is none."""

from __future__ import annotations

import pytest

from qualeval.cli.serve_sim import _announce
from qualeval.sim import SimConfig
from qualeval.sim.server import SimServer


def banner(capsys: pytest.CaptureFixture[str], *tasks: str) -> tuple[str, str]:
    _announce(SimServer(SimConfig(port=0, tasks=tasks)), 8000)
    done = capsys.readouterr()
    return done.out, " ".join(done.err.split())


def test_a_task_of_episodes_is_an_answer_key(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = banner(capsys, "bfcl_multi_turn:base")
    assert "no answer key" not in err
    assert "answer key bfcl_multi_turn:base (" in out and " episodes)" in out and "items" not in out


def test_episodes_and_items_are_both_counted(capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = banner(capsys, "bfcl_multi_turn:base", "tool_weather")
    assert "(5 items, " in out and " episodes)" in out


def test_no_key_still_warns(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = banner(capsys)
    assert "answer key" not in out and "warning: no answer key" in err
