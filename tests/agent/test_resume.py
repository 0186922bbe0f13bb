"""An agent run killed mid-episode (SIGKILL) resumes without sending a step twice, and never scores half an
episode: `qualeval run` in its own process against a tiny server that answers each turn with three calls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT

SERVER = Path(__file__).with_name("agent_server.py")
STEPS_PER_TURN = 4  # three calls and an answer

WHEEL_CACHED = (Path.home() / ".cache/qualeval/bfcl_eval-2026.3.23-py3-none-any.whl").exists()
pytestmark = pytest.mark.skipif(not WHEEL_CACHED, reason="the bfcl-eval wheel is not cached")


@contextmanager
def agent_server(tmp: Path, *more: str) -> Iterator[tuple[str, Path]]:
    port, log = tmp / "port", tmp / "requests.jsonl"
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port), str(log), *more])
    try:
        deadline = time.monotonic() + 30
        while not port.exists() or not port.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, "the agent server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port.read_text()}/v1", log
    finally:
        proc.kill()
        proc.wait()


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1]] if path.exists() else []


def _command(url: str, out: Path, limit: int = 3) -> list[str]:
    return [
        sys.executable, "-m", "qualeval", "run", "--base-url", url, "--model", "fake", "--task",
        "bfcl_multi_turn:base", "--limit", str(limit), "--concurrency", "1", "--no-stream", "--no-probe",
        "--warmup", "0", "--reasoning-passback", "reasoning_content", "--out", str(out),
    ]  # fmt: skip


def test_a_run_killed_mid_episode_resumes_without_a_step_twice(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with agent_server(tmp_path) as (url, log):
        proc = subprocess.Popen(_command(url, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 180
        while sum(s["sample_id"].endswith("_1") for s in _lines(out / "steps.jsonl")) < 5:  # in the 2nd episode
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed = _lines(out / "records.jsonl")
        written = len(_lines(out / "steps.jsonl"))
        sent_before = len(_lines(log))
        done = subprocess.run(_command(url, out), capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr
    # the half episode was never recorded as finished
    assert [r["sample_id"] for r in killed] == ["bfcl_multi_turn/base/test/multi_turn_base_0"]
    records = _lines(out / "records.jsonl")
    assert len(records) == 3
    for r in records:  # every episode whole: each turn's three calls and its answer
        assert r["episode"]["steps"] == STEPS_PER_TURN * len(r["episode"]["turns"])  # type: ignore[index]
    total = sum(r["episode"]["steps"] for r in records)  # type: ignore[index]
    keys = Counter((s["sample_id"], s["turn"], s["step"]) for s in _lines(out / "steps.jsonl"))
    assert sum(keys.values()) == total and set(keys.values()) == {1}  # no step written twice
    assert {s["tool_status"] for s in _lines(out / "steps.jsonl")} == {"ok"}  # each step's wire status
    # sent again: at most the one request in flight when the kill came
    assert sent_before <= written + 1 and len(_lines(log)) - sent_before <= total - written + 1
    assert all(r["episode"]["passback"] == "reasoning_content" for r in records)  # type: ignore[index]
    assert all(line["passed_back"] for line in _lines(log))  # the replayed history carried the reasoning back too
    figures = json.loads((out / "summary.json").read_text())["tasks"]["bfcl_multi_turn:base"]["episodes"]
    assert figures["episodes"] == 3 and figures["ended"] == {"done": 3} and figures["by_turn"]
    assert "## Episodes" in (out / "report.md").read_text() and 'id="episodes"' in (out / "report.html").read_text()
    # a rescore judges the episodes again from steps.jsonl, offline, to the same verdicts
    again = subprocess.run(
        [sys.executable, "-m", "qualeval", "rescore", str(out)], capture_output=True, text=True, timeout=240, env=env
    )
    assert again.returncode == 0, again.stderr
    rescored = _lines(out / "rescore" / "records.jsonl")
    assert [(r["score"], r["episode"]) for r in rescored] == [(r["score"], r["episode"]) for r in records]
    assert all(r["episode"]["error_type"] for r in rescored)  # type: ignore[index]


def test_a_passback_field_the_server_rejects_is_an_endpoint_error_never_a_wrong_answer(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with agent_server(tmp_path, "reject") as (url, log):
        done = subprocess.run(_command(url, out, limit=1), capture_output=True, text=True, timeout=240, env=env)
    assert len(_lines(log)) == 2  # the second step carried the reasoning back, and was refused: not retried
    (record,) = _lines(out / "records.jsonl")
    assert record["status"] == "transport_error" and record["score"]["correct"] is None
    assert "400" in str(record["error"]) and record["episode"]["ended"] == "endpoint_error"  # type: ignore[index]
    assert "turn 0 step 1, reasoning passed back as reasoning_content: HTTP 400" in done.stderr


def test_shards_of_an_agent_run_merge_with_their_steps_and_rescore(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with agent_server(tmp_path) as (url, _):
        for k in (0, 1):
            shard = [*_command(url, tmp_path / f"s{k}", limit=2), "--shard", f"{k}/2"]
            done = subprocess.run(shard, capture_output=True, text=True, timeout=240, env=env)
            assert done.returncode == 0, done.stderr
    merged = tmp_path / "merged"
    qualeval = [sys.executable, "-m", "qualeval"]
    steps = (tmp_path / "s1" / "steps.jsonl").read_bytes()
    (tmp_path / "s1" / "steps.jsonl").unlink()  # a shard copied without its steps: refused, naming it
    done = subprocess.run([*qualeval, "merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(merged)],
                          capture_output=True, text=True, timeout=240, env=env)  # fmt: skip
    assert done.returncode == 2 and f"{tmp_path / 's1'}: its records hold multi-turn episodes" in done.stderr
    assert done.stderr.count("error") == 1 and not (merged / "records.jsonl").exists()
    (tmp_path / "s1" / "steps.jsonl").write_bytes(steps)
    done = subprocess.run([*qualeval, "merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(merged)],
                          capture_output=True, text=True, timeout=240, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(_lines(merged / "steps.jsonl")) == sum(len(_lines(tmp_path / f"s{k}" / "steps.jsonl")) for k in (0, 1))
    records = _lines(merged / "records.jsonl")
    for r in records:  # as a run written before the step digests were kept: the rescore writes them
        r["episode"]["digests"] = None  # type: ignore[index]
    (merged / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    again = subprocess.run([*qualeval, "rescore", str(merged)], capture_output=True, text=True, timeout=240, env=env)
    assert again.returncode == 0, again.stderr
    rescored = _lines(merged / "rescore" / "records.jsonl")
    assert len(rescored) == 2
    assert all(len(r["episode"]["digests"]) == r["episode"]["steps"] for r in rescored)  # type: ignore[index,arg-type]
