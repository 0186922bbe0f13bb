"""A workload's synthetic prompts are new each run, as llama-benchy's are: a rerun is not served from the prefix
cache the last run filled. The seed drawn is kept in the manifest (a resumed run keeps it, and
`--workload-set seed=N` repeats it); `cache=measure` or a given seed sends the same prompts on purpose."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import qualeval
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


def test_each_run_draws_its_own_prompts_and_a_rerun_finds_no_cache(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        _run(url, tmp_path / "a")
        again = _run(url, tmp_path / "b")
    assert _seed(tmp_path / "a") != _seed(tmp_path / "b")
    assert not set(_prompts(tmp_path / "a")) & set(_prompts(tmp_path / "b"))
    assert _share(again) < 0.5


def test_measuring_the_cache_or_fixing_the_seed_repeats_the_prompts(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        _run(url, tmp_path / "a", "cache=measure")
        again = _run(url, tmp_path / "b", "cache=measure")
        _run(url, tmp_path / "c", "seed=7")
        _run(url, tmp_path / "d", "seed=7")
    assert _seed(tmp_path / "a") == _seed(tmp_path / "b") == 42  # the workload file's own seed
    assert _prompts(tmp_path / "a") == _prompts(tmp_path / "b")
    assert _share(again) >= 0.5
    assert _seed(tmp_path / "c") == _seed(tmp_path / "d") == 7 and _prompts(tmp_path / "c") == _prompts(tmp_path / "d")


def test_a_drawn_seed_reproduces_the_run_and_a_resumed_run_keeps_it(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        _run(url, tmp_path / "a")
        seed = _seed(tmp_path / "a")
        _run(url, tmp_path / "again", f"seed={seed}")
        rows = (tmp_path / "a" / "records.jsonl").read_text().splitlines()
        (tmp_path / "a" / "records.jsonl").write_text("\n".join(rows[:2]) + "\n")  # stopped after two requests
        _run(url, tmp_path / "a")  # resumed: the same prompts, the two left sent
    assert _prompts(tmp_path / "again") == _prompts(tmp_path / "a") and _seed(tmp_path / "a") == seed
    assert len((tmp_path / "a" / "records.jsonl").read_text().splitlines()) == 4
