"""The reference server rehearses what a serving setting costs the answers: accuracy that falls with the requests in
flight (--load-harm), thinking switched off (--no-thinking-harm), a speculative-decoding bug (--spec-corrupt) and a
quantized KV cache's error growing with the output (--kv-quant-harm); each shown by runs with the flag and without."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.cli.serve_sim import sim_config, sim_parameters
from qualeval.errors import InputError
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.sim.harms import load_factor
from tests.conftest import ROOT, sim_process

FAST = Latency(burst=True)
EASY = Behaviour(reasoning_tokens=40, accuracy=1.0, trap_rate=0.0)
"""Every answer right without a harm, so what a harm takes is all the harm's."""


def _runs(tmp_path: Path, sim: SimConfig, *runs: tuple[str, ...], limit: int = 120) -> list[list[dict[str, Any]]]:
    """The scored records of each run (its own extra flags) against one fresh reference server."""
    out = []
    with running_server(dataclasses.replace(sim, port=0, tasks=("knowledge_qa",))) as url:
        for extra in runs or ((),):
            where = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
            done = CliRunner().invoke(
                app,
                ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", str(limit),
                 "--warmup", "0", "--no-probe", "--constraint", "off", "--out", str(where), *extra],
            )  # fmt: skip
            assert done.exit_code == 0, done.stderr
            rows = [json.loads(line) for line in (where / "records.jsonl").read_text().splitlines()]
            out.append(sorted((r for r in rows if not r["warmup"]), key=lambda r: r["sample_id"]))
    return out


def _right(records: list[dict[str, Any]]) -> set[str]:
    return {r["sample_id"] for r in records if r["status"] == "ok" and r["score"]["correct"]}


def _within(count: int, n: int, p: float) -> bool:
    """`count` successes of `n` are within five standard deviations of a Binomial(n, p)."""
    return abs(count - n * p) <= 5 * math.sqrt(n * p * (1 - p)) + 1


OFF = ("--no-thinking", "--thinking-switch", "chat_template_kwargs")
ON = ("--thinking", "--thinking-switch", "chat_template_kwargs")


def test_thinking_switched_off_costs_the_share_no_thinking_harm_says(tmp_path: Path) -> None:
    base = Behaviour(reasoning_tokens=40, accuracy=0.8, trap_rate=0.0)
    sim = SimConfig(behaviour=base, latency=FAST)
    on, off = _runs(tmp_path, sim, ON, OFF)
    assert _right(on) == _right(off) and len(_right(on)) > 60  # today, thinking off is free
    harm = dataclasses.replace(sim, behaviour=dataclasses.replace(base, no_thinking_harm=1.0))
    on_harmed, off_harmed = _runs(tmp_path, harm, ON, OFF)
    assert _right(off_harmed) == set()
    assert [r["content"] for r in on_harmed] == [r["content"] for r in on]  # thinking on: untouched
    half = dataclasses.replace(sim, behaviour=dataclasses.replace(base, no_thinking_harm=0.5))
    (off_half,) = _runs(tmp_path, half, OFF)
    # the same draw decides: an answer harm makes wrong was right, and half of the right ones stay right
    assert _right(off_half) < _right(off) and _within(len(_right(off_half)), len(_right(off)), 0.5)


def test_a_model_without_thinking_has_none_to_switch_off(tmp_path: Path) -> None:
    plain = SimConfig(flavour="plain", behaviour=EASY, latency=FAST)
    (unharmed,) = _runs(tmp_path, plain, limit=40)
    switched = dataclasses.replace(plain, behaviour=dataclasses.replace(EASY, no_thinking_harm=1.0))
    (harmed,) = _runs(tmp_path, switched, limit=40)
    assert len(_right(unharmed)) == 40 and _right(harmed) == _right(unharmed)


def test_speculative_decoding_corrupts_the_share_spec_corrupt_says_and_only_while_on(tmp_path: Path) -> None:
    spec = SimConfig(behaviour=EASY, latency=FAST, spec_draft=3, spec_accept=0.58)
    (clean,) = _runs(tmp_path, spec)
    assert len(_right(clean)) == 120
    every = dataclasses.replace(spec, behaviour=dataclasses.replace(EASY, spec_corrupt=1.0))
    (corrupted,) = _runs(tmp_path, every)
    assert _right(corrupted) == set() and all(r["status"] == "ok" for r in corrupted)  # wrong answers, no errors
    (off,) = _runs(tmp_path, dataclasses.replace(every, spec_draft=0))
    assert [r["content"] for r in off] == [r["content"] for r in clean]
    some = dataclasses.replace(spec, behaviour=dataclasses.replace(EASY, spec_corrupt=0.3))
    (first,) = _runs(tmp_path, some)
    (again,) = _runs(tmp_path, some)  # a fresh server: greedy requests draw the same, seed and request alike
    assert [r["content"] for r in again] == [r["content"] for r in first]
    assert _within(len(_right(first)), 120, 0.7)


def test_a_quantized_kv_cache_corrupts_more_the_longer_the_output(tmp_path: Path) -> None:
    long = dataclasses.replace(EASY, reasoning_tokens=300)
    sim = SimConfig(behaviour=long, latency=FAST)
    (clean,) = _runs(tmp_path, sim)
    assert len(_right(clean)) == 120
    (unharmed,) = _runs(tmp_path, dataclasses.replace(sim, behaviour=dataclasses.replace(long, kv_quant_harm=0.0)))
    assert [r["content"] for r in unharmed] == [r["content"] for r in clean]
    (ruined,) = _runs(tmp_path, dataclasses.replace(sim, behaviour=dataclasses.replace(long, kv_quant_harm=1000.0)))
    assert _right(ruined) == set()
    (some,) = _runs(tmp_path, dataclasses.replace(sim, behaviour=dataclasses.replace(long, kv_quant_harm=2.0)))
    # each answer survives with exp(-2 * n / 1000) for its n output tokens: long ones are corrupted more often
    kept = [math.exp(-2.0 * (r["usage"]["reasoning_tokens"] + r["usage"]["answer_tokens"]) / 1000) for r in clean]
    expected = sum(kept)
    assert abs(len(_right(some)) - expected) <= 5 * math.sqrt(sum(p * (1 - p) for p in kept)) + 2
    by_length = sorted(clean, key=lambda r: r["usage"]["reasoning_tokens"])
    short, longest = {r["sample_id"] for r in by_length[:40]}, {r["sample_id"] for r in by_length[-40:]}
    assert len(_right(some) & short) > len(_right(some) & longest)


def test_accuracy_falls_with_the_requests_in_flight(tmp_path: Path) -> None:
    assert load_factor(0.2, 1) == 1.0 and math.isclose(load_factor(0.2, 4), 0.8**2)
    # each request takes a second before its first token, so a batch sent at once is decoded together
    slow = Latency(ttft_ms=1000.0, decode_ms=1.0, jitter=0.0)
    harmed = SimConfig(behaviour=dataclasses.replace(EASY, reasoning_tokens=10, load_harm=1.0), latency=slow)
    alone, together = _runs(tmp_path, harmed, ("--concurrency", "1"), ("--concurrency", "8", "--batch"), limit=8)
    assert len(_right(alone)) == 8  # one request in flight: no harm
    assert len(_right(together)) <= 1  # only the first of the batch arrived alone


def test_harm_flags_are_checked() -> None:
    defaults = {p.name: p.default for p in sim_parameters()}
    for name, value in (("spec_corrupt", 1.5), ("no_thinking_harm", -0.1), ("load_harm", 2.0), ("kv_quant_harm", -1.0)):
        with pytest.raises(InputError, match=f"--{name.replace('_', '-')}"):
            sim_config({**defaults, name: value})


def test_harm_flags_that_cannot_apply_are_refused() -> None:
    """A harm the other flags leave nothing to act on is refused, naming both flags, not served unharmed."""
    defaults = {p.name: p.default for p in sim_parameters()}
    for given, names in (
        ({"spec_corrupt": 0.9}, ("--spec-corrupt", "--spec-draft")),
        ({"load_harm": 0.3, "burst": True}, ("--load-harm", "--burst")),
        ({"load_harm": 0.3, "max_running": 1}, ("--load-harm", "--max-running")),
        ({"no_thinking_harm": 0.5, "flavour": "plain"}, ("--no-thinking-harm", "plain")),
        ({"working_harm": 0.3, "ignore_constraints": True}, ("--working-harm", "--ignore-constraints")),
    ):
        with pytest.raises(InputError) as refused:
            sim_config({**defaults, **given})
        assert all(name in str(refused.value) for name in names)
    assert sim_config({**defaults, "spec_corrupt": 0.9, "spec_draft": 4}).behaviour.spec_corrupt == 0.9
    assert sim_config({**defaults, "load_harm": 0.3, "max_running": 4}).behaviour.load_harm == 0.3


def _walkthrough() -> list[list[str]]:
    """The commands of the docs' "Rehearse a serving decision" (docs/reference-server.md), as the page writes them."""
    page = (ROOT / "docs" / "reference-server.md").read_text(encoding="utf-8")
    section = page[page.index("## Rehearse a serving decision") :]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)[:2]  # the runs, then board and gate
    lines = "".join(blocks).replace("\\\n", " ").splitlines()
    return [shlex.split(line.removesuffix("&")) for line in lines if line]


def _policy() -> str:
    """The walkthrough's gate.yaml (docs/reference-server.md)."""
    page = (ROOT / "docs" / "reference-server.md").read_text(encoding="utf-8")
    section = page[page.index("## Rehearse a serving decision") :]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_the_readme_rehearsal_finds_the_tuned_profiles_corruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = _walkthrough()
    servers = [c[2:] for c in commands if c[:2] == ["qualeval", "serve-sim"]]
    rest = [c[1:] for c in commands if c[:2] != ["qualeval", "serve-sim"]]
    assert len(servers) == 2 and [c[0] for c in rest] == ["run", "run", "run", "compare", "board", "gate"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gate.yaml").write_text(_policy())
    codes = {"gate": 1}  # NO-GO: the tuned profile loses more than the policy allows
    with contextlib.ExitStack() as stack:
        urls = {}
        for args in servers:  # each on a free port instead of the page's
            at = args.index("--port")
            urls[f"http://127.0.0.1:{args[at + 1]}/v1"] = stack.enter_context(sim_process(*args[:at], *args[at + 2 :]))
        for args in rest:
            args = [urls.get(a, a) for a in args]
            if "--limit" in args:
                args[args.index("--limit") + 1] = "40"
            done = CliRunner().invoke(app, args)
            assert done.exit_code == codes.get(args[0], 0), done.stdout + done.stderr
    tuned = rest[3][-1]
    result = json.loads((tmp_path / tuned / "compare" / "compare.json").read_text())
    task = result["tasks"]["knowledge_qa"]
    assert result["noise"]["knowledge_qa"]["pairs"] == 40
    assert task["difference"] < 0 and task["within_noise"] is False
    board = json.loads((tmp_path / "runs" / "board" / "board.json").read_text())["tasks"]["knowledge_qa"]
    tuned_figures = [c for name, c in board["configs"].items() if name != board["best"]]
    assert len(tuned_figures) == 1 and tuned_figures[0]["difference"] == task["difference"]
    gate = json.loads((tmp_path / "runs" / "gate" / "gate.json").read_text())
    assert gate["verdict"] == "NO-GO"
