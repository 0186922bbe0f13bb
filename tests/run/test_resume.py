"""Resume: items that failed for good (transport_error) are sent again; their failed attempts stay counted."""

from __future__ import annotations

import asyncio
import io
import json
import socket
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from qualeval.records import Manifest, RunConfig
from qualeval.records.store import RunStore
from qualeval.run.driver import execute
from qualeval.run.progress import progress_bar
from qualeval.sim import Behaviour, Latency, SimConfig, running_server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _sim(port: int, **faults: float) -> SimConfig:
    return SimConfig(
        port=port,
        tasks=("knowledge_qa",),
        behaviour=Behaviour(reasoning_tokens=20),
        latency=Latency(burst=True),
        faults=dict(faults),
    )


def test_resume_retries_transport_errors_and_keeps_their_faults(tmp_path: Path) -> None:
    port = _free_port()
    config = RunConfig(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="sim",
        tasks=["knowledge_qa"],
        limit=30,
        out=tmp_path,
        max_retries=0,
        probe=False,
        warmup=0,
    )
    with running_server(_sim(port, **{"503": 0.4})):  # an outage: many items fail for good
        first = asyncio.run(execute(config))
    failed = first.tasks["knowledge_qa"].summary.statuses.get("transport_error", 0)
    assert failed >= 3
    with running_server(_sim(port)):  # the server is back
        second = asyncio.run(execute(config))
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    finals = [r for r in rows if r.get("final", True)]
    assert Counter(r["sample_id"] for r in finals) == Counter({r["sample_id"]: 1 for r in finals})
    assert len(finals) == 30 and all(r["status"] == "ok" for r in finals)
    stale = [r for r in rows if r.get("final") is False]
    assert len(stale) == failed and all(r["status"] == "transport_error" for r in stale)
    # the failed attempt is counted in the record that replaced it, and in the summary's faults
    redone = [r for r in finals if r["sample_id"] in {s["sample_id"] for s in stale}]
    assert len(redone) == failed and all(r["retried"] == ["503"] for r in redone)
    summary = second.tasks["knowledge_qa"]
    assert summary.summary.n == 30 and summary.summary.statuses == {"ok": 30}
    assert summary.faults == {"503": failed}
    assert sum(1 for _ in RunStore(tmp_path).records()) == 30  # readers see final records only


def _row(sample: str, status: str, retried: list[str]) -> bytes:
    return json.dumps(
        {"sample_id": sample, "attempt": 0, "level": "c=1", "status": status, "retried": retried}
    ).encode()


def test_a_request_that_fails_again_carries_each_fault_once(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.open(Manifest(fingerprint="f"))
    store.append(_row("t/0", "transport_error", ["503"]))
    store.append(_row("t/1", "ok", []))
    store.close()
    again = RunStore(tmp_path)
    assert again.open(Manifest(fingerprint="f")) == {("t/1", 0, "c=1")}
    assert again.history == {("t/0", 0, "c=1"): ["503"]}
    again.append(_row("t/0", "transport_error", ["503", "timeout"]))  # failed again: history plus its own
    again.close()
    third = RunStore(tmp_path)
    assert third.open(Manifest(fingerprint="f")) == {("t/1", 0, "c=1")}
    assert third.history == {("t/0", 0, "c=1"): ["503", "timeout"]}
    third.close()
    assert [r["sample_id"] for r in third.rows()] == ["t/1"]
    assert [r.get("final", True) for r in third.rows(superseded=True)] == [False, True, False]


def test_after_a_resume_the_bar_shows_the_run_s_accuracy_not_the_session_s(tmp_path: Path) -> None:
    """The records a resume keeps are counted into the bar, so it says what the summary says."""
    port = _free_port()
    config = RunConfig(
        base_url=f"http://127.0.0.1:{port}/v1", model="sim", tasks=["knowledge_qa"], limit=30, out=tmp_path,
        probe=False, warmup=0,
    )  # fmt: skip
    with running_server(_sim(port)):
        asyncio.run(execute(config))
        # an interrupted first session whose twelve answers were all wrong: the run's accuracy is not the session's
        path = tmp_path / "records.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()[:12]]
        for row in rows:
            row["score"]["correct"] = False
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        with progress_bar(Console(file=io.StringIO(), width=200)) as bar:
            summary = asyncio.run(execute(config, on_record=bar.on_record, on_start=bar.on_start))
            line = bar.line()
    cell = summary.tasks["knowledge_qa"].summary.accuracy
    assert cell is not None and 0 < cell < 1
    assert line.startswith(f"acc {cell:.1%} · "), line
    assert bar.progress.tasks[0].completed == 30


def test_a_resumed_session_warms_up_again_before_it_times_anything(tmp_path: Path) -> None:
    """An uninterrupted run's timed requests follow a warm-up; a resumed session's must too (a fresh connection,
    maybe a restarted server), and the warm-up sent again is recorded nowhere: its item keeps its first record."""
    port = _free_port()
    config = RunConfig(
        base_url=f"http://127.0.0.1:{port}/v1", model="sim", tasks=["knowledge_qa"], limit=20, out=tmp_path,
        probe=False, warmup=1, concurrency=[1],
    )  # fmt: skip
    log = tmp_path.parent / f"{tmp_path.name}-server.jsonl"
    with running_server(replace(_sim(port), log=log)):
        asyncio.run(execute(config))
        path = tmp_path / "records.jsonl"
        path.write_text("".join(path.read_text().splitlines(keepends=True)[:8]))  # killed after eight records
        sent_before = len(log.read_text().splitlines())
        asyncio.run(execute(config))
    sent = [json.loads(line) for line in log.read_text().splitlines()[sent_before:]]
    assert len(sent) == 12 + 1  # the twelve left, after the warm-up sent again
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 20 and sum(r["warmup"] for r in rows) == 1
    assert len({r["session"] for r in rows}) == 2
    warm = next(r for r in rows if r["warmup"])
    assert warm["session"] == rows[0]["session"]  # the first session's warm-up record, kept as it was


def test_a_run_resumed_within_the_second_it_was_killed_is_two_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sessions told apart by the second merged a kill and a resume within one: the pause counted in the rates."""
    import qualeval.run.driver as driver

    monkeypatch.setattr(driver, "_now", lambda: "2026-12-02T18:00:00+00:00")  # both sessions within one second
    port = _free_port()
    config = RunConfig(
        base_url=f"http://127.0.0.1:{port}/v1", model="sim", tasks=["knowledge_qa"], limit=10, out=tmp_path,
        probe=False, warmup=0,
    )  # fmt: skip
    with running_server(_sim(port)):
        asyncio.run(execute(config))
        path = tmp_path / "records.jsonl"
        path.write_text("".join(path.read_text().splitlines(keepends=True)[:4]))
        summary = asyncio.run(execute(config))
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert len({r["session"] for r in rows}) == 2
    speed = summary.tasks["knowledge_qa"].speed
    assert speed.requests == 10 and speed.duration_s is None and speed.output_throughput is None
    from qualeval.cli.views import print_speed

    print_speed(summary)  # the terminal says why its rates are –
    assert "span sessions" in " ".join(capsys.readouterr().err.split())
