"""--reasoning-passback auto sends what the run's probe found the server consumes: the reference server's vLLM reads
earlier reasoning only under `reasoning`, its llama.cpp under `reasoning_content`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.test_resume import WHEEL_CACHED
from tests.conftest import ROOT, sim_process


@pytest.mark.skipif(not WHEEL_CACHED, reason="the bfcl-eval wheel is not cached")
@pytest.mark.parametrize(("flavour", "field"), [("vllm", "reasoning"), ("llamacpp", "reasoning_content")])
def test_auto_applies_the_field_the_probe_found_consumed(tmp_path: Path, flavour: str, field: str) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "syllogisms", "--burst", "--flavour", flavour) as url:
        subprocess.run(
            [sys.executable, "-m", "qualeval", "run", "--base-url", url, "--model", "sim", "--task",
             "bfcl_multi_turn:base", "--limit", "1", "--probe-time", "20", "--out", str(out)],
            capture_output=True, text=True, timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    record = json.loads((out / "records.jsonl").read_text().splitlines()[0])
    assert (record["episode"]["passback"], record["episode"]["asked"]) == (field, "auto")
    summary = json.loads((out / "summary.json").read_text())
    assert f"--reasoning-passback auto: {field} (the probe found the server consumes it)" in summary["notes"]
    assert json.loads((out / "manifest.json").read_text())["pinned"]["passback"] == field  # compare shows it
