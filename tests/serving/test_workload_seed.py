"""A workload sends the same prompts every run unless told otherwise (`cache=fresh`): the same command twice is a
rerun, and a candidate pairs with its baseline item by item. Runs whose paired items sent other prompts are refused
by compare, board and gate, whatever made them differ, with the seed that sends the baseline's prompts again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import qualeval
from qualeval.errors import InputError
from qualeval.figures import board_runs, compare_runs, gate_runs
from qualeval.sim import Behaviour, Latency, SimConfig, running_server

SETS = ["num_prompts=4", "input_len=80", "output_len=8"]


def _sim() -> SimConfig:
    latency = Latency(burst=True)
    return SimConfig(flavour="llamacpp", port=0, behaviour=Behaviour(reasoning_tokens=10), latency=latency)


def _run(url: str, out: Path, *sets: str) -> qualeval.RunResult:
    return qualeval.evaluate(
        model="sim", tasks=[], base_url=url, out=out, workload="benchy-pp1024-tg1024", workload_set=[*SETS, *sets],
        probe=False, constraint="off", warmup=0,
    )  # fmt: skip


def _seed(out: Path) -> int:
    manifest = json.loads((out / "manifest.json").read_text())
    return int(manifest["shaping"]["workload"]["prompts"]["seed"])


def _prompts(out: Path) -> list[Any]:
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return sorted(json.dumps(r["request"]["messages"]) for r in rows)


def _share(result: qualeval.RunResult) -> float:
    cache = next(iter(result.summary.tasks.values())).speed.prompt_cache
    assert cache is not None
    return cache.share


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "gate.yaml"
    path.write_text("default:\n  endpoint_errors: {max: 0}\n")
    return path


def test_the_same_command_twice_sends_the_same_prompts_and_is_a_rerun(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        _run(url, tmp_path / "a")
        again = _run(url, tmp_path / "again")
        _run(url, tmp_path / "b")
    assert _seed(tmp_path / "a") == _seed(tmp_path / "again") == 42  # the workload file's own seed
    assert _prompts(tmp_path / "a") == _prompts(tmp_path / "again")
    assert _share(again) >= 0.5  # a live server's prefix cache served them: compare says so beside TTFT
    a, a2, b = tmp_path / "a", tmp_path / "again", tmp_path / "b"
    assert compare_runs(a, b, again=a2).noise  # A2 is A's rerun
    assert board_runs([a, b], rerun=a2).rerun == str(a2)
    assert gate_runs(baseline=a, candidate=b, policy_path=_policy(tmp_path), rerun=a2).tasks  # gated, not refused


def test_prompts_of_another_seed_are_refused_by_compare_board_and_gate(tmp_path: Path) -> None:
    """Paired by position, `benchy/3` under another seed is another prompt: its ratio of latencies says nothing."""
    with running_server(_sim()) as url:
        _run(url, tmp_path / "a")
        _run(url, tmp_path / "b", "seed=7")
    a, b = tmp_path / "a", tmp_path / "b"
    said = "sent other prompts than .*a for 4 of the 4 items both ran .*--workload-set seed=42"
    with pytest.raises(InputError, match=said):
        compare_runs(a, b)
    with pytest.raises(InputError, match=said):
        board_runs([a, b])
    with pytest.raises(InputError, match=said):
        gate_runs(baseline=a, candidate=b, policy_path=_policy(tmp_path))


def test_fresh_prompts_are_drawn_for_each_run_kept_and_not_paired(tmp_path: Path) -> None:
    """`cache=fresh` draws new prompts each run, as llama-benchy does: no run is served from the cache the last one
    filled; the seed drawn is kept, and given again it sends the same prompts."""
    with running_server(_sim()) as url:
        _run(url, tmp_path / "a", "cache=fresh")
        again = _run(url, tmp_path / "b", "cache=fresh")
        _run(url, tmp_path / "c", f"seed={_seed(tmp_path / 'a')}")
        _run(url, tmp_path / "d", "cache=fresh", f"seed={_seed(tmp_path / 'a')}")
    assert _seed(tmp_path / "a") != _seed(tmp_path / "b")
    assert not set(_prompts(tmp_path / "a")) & set(_prompts(tmp_path / "b"))
    assert _share(again) < 0.5
    with pytest.raises(InputError, match="sent other prompts"):
        compare_runs(tmp_path / "a", tmp_path / "b")
    assert _prompts(tmp_path / "c") == _prompts(tmp_path / "a")
    assert compare_runs(tmp_path / "a", tmp_path / "c").tasks  # the drawn seed given again: the same prompts
    assert compare_runs(tmp_path / "a", tmp_path / "d", again=tmp_path / "c").noise  # and a rerun of A


def test_a_resumed_run_keeps_its_seed(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        _run(url, tmp_path / "a", "cache=fresh")
        seed = _seed(tmp_path / "a")
        before = _prompts(tmp_path / "a")
        rows = (tmp_path / "a" / "records.jsonl").read_text().splitlines()
        (tmp_path / "a" / "records.jsonl").write_text("\n".join(rows[:2]) + "\n")  # stopped after two requests
        _run(url, tmp_path / "a", "cache=fresh")  # resumed: the same prompts, the two left sent
    assert _prompts(tmp_path / "a") == before and _seed(tmp_path / "a") == seed
    assert len((tmp_path / "a" / "records.jsonl").read_text().splitlines()) == 4
