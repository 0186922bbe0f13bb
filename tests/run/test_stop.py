"""A run stopped by a signal says so in one line, keeps what it finished, and resumes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import sim_process


def test_sigterm_stops_a_run_as_ctrl_c_does_and_exits_143(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--decode-ms", "20") as url:
        command = [sys.executable, "-m", "qualeval", "run", "--base-url", url, "--model", "sim", "--task",
                   "knowledge_qa", "--limit", "12", "--concurrency", "1", "--no-probe", "--out", str(out)]  # fmt: skip
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        records = out / "records.jsonl"
        while proc.poll() is None and not (records.exists() and records.read_text().count("\n") >= 2):
            time.sleep(0.05)  # until the run has finished a request or two (no bound: the run ends either way)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 143, err
        said = [line for line in err.splitlines() if "SIGTERM" in line]
        assert len(said) == 1 and str(out) in said[0] and "resume" in said[0] and "Traceback" not in err
        kept = [json.loads(line) for line in records.read_text().splitlines()]
        assert 0 < len(kept) < 12
        again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    done = {json.loads(line)["sample_id"] for line in records.read_text().splitlines()}
    assert len(done) == 12 and {r["sample_id"] for r in kept} <= done
