"""compare, board and gate pair two runs item by item, so the paired items must have sent the same prompts: what
was sent is compared (a digest of each record's messages), whatever made it differ — a workload's seed, an edited
task file, a run of an older version. An item whose messages one run alone keeps cannot be compared: a warning
says how many."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qualeval.errors import InputError, QualevalWarning
from qualeval.figures import board_runs, compare_runs, gate_runs
from qualeval.records import Manifest
from tests.figures.test_board import write_run

RIGHT = [True, True, False, True, True, False]


def _with_prompts(root: Path, asked: str = "What is {i}?", only: set[int] | None = None) -> Path:
    """The run's records as having sent `asked` (item i's), those in `only` alone where given."""
    rows = [json.loads(line) for line in (root / "records.jsonl").read_text().splitlines()]
    for i, row in enumerate(rows):
        if only is None or i in only:
            row["request"] = {"model": "m", "messages": [{"role": "user", "content": asked.format(i=i)}]}
    (root / "records.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "gate.yaml"
    path.write_text("default:\n  accuracy: {max_drop: 0.5}\n")
    return path


def test_runs_that_sent_the_same_prompts_pair(tmp_path: Path) -> None:
    a = _with_prompts(write_run(tmp_path / "a", RIGHT))
    b = _with_prompts(write_run(tmp_path / "b", RIGHT, config={"temperature": 0.5}))
    assert compare_runs(a, b).tasks["t"].pairs == len(RIGHT)
    assert board_runs([a, b]).tasks["t"].configs
    assert gate_runs(baseline=a, candidate=b, policy_path=_policy(tmp_path)).tasks


def test_one_item_that_sent_another_prompt_is_refused_by_every_tool(tmp_path: Path) -> None:
    a = _with_prompts(write_run(tmp_path / "a", RIGHT))
    b = _with_prompts(_with_prompts(write_run(tmp_path / "b", RIGHT)), "Another question {i}", only={3})
    said = f"{b}: sent other prompts than {a} for 1 of the 6 items both ran \\(e.g. t/test/3\\)"
    with pytest.raises(InputError, match=said):
        compare_runs(a, b)
    with pytest.raises(InputError, match=said):
        board_runs([a, b])
    with pytest.raises(InputError, match=said):
        gate_runs(baseline=a, candidate=b, policy_path=_policy(tmp_path))
    again = _with_prompts(_with_prompts(write_run(tmp_path / "again", RIGHT)), "Another question {i}", only={3})
    with pytest.raises(InputError, match=r"A2, a rerun of A, is paired with .*a item by item"):
        compare_runs(a, _with_prompts(write_run(tmp_path / "c", RIGHT)), again=again)


def test_records_that_keep_messages_in_one_run_only_are_said_not_known(tmp_path: Path) -> None:
    a = _with_prompts(write_run(tmp_path / "a", RIGHT), only={0, 1, 2, 3})  # request {} in the last two
    b = _with_prompts(write_run(tmp_path / "b", RIGHT))
    with pytest.warns(QualevalWarning, match="2 of the 6 items it shares with .* keep their messages in one run only"):
        assert compare_runs(a, b).tasks["t"].pairs == len(RIGHT)


def test_an_older_manifest_that_measured_the_cache_still_loads() -> None:
    """`cache: measure` (the same prompts every run, before that was the default) reads as `same`."""
    prompts = {"kind": "random", "seed": 42, "cache": "measure"}
    manifest = Manifest.model_validate({"fingerprint": "f", "shaping": {"workload": {"name": "w", "prompts": prompts}}})
    assert manifest.shaping is not None and manifest.shaping.workload is not None
    assert manifest.shaping.workload.prompts.cache == "same"
