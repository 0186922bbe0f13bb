"""What repeats between requests that sent the same thing: the prompt tokens a server took from its prefix cache
(recorded, summed, shown, and named in a comparison), and whether identical greedy inputs gave identical outputs
across load levels and between two runs. Against the reference server's llama.cpp flavour, which keeps its
slots' prompts and, like llama-server's `--cache-ram`, the prompts they gave up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.figures.compare import compare_runs
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.wire.response import usage_of


def _sim(flavour: str = "llamacpp") -> SimConfig:
    return SimConfig(
        flavour=flavour,
        port=0,
        tasks=("knowledge_qa",),
        behaviour=Behaviour(reasoning_tokens=20),
        latency=Latency(burst=True),
    )


def _run(url: str, out: Path, *extra: str) -> tuple[dict[str, Any], str]:
    done = CliRunner().invoke(
        app,
        ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "8", "--no-probe",
         "--constraint", "off", "--warmup", "0", "--out", str(out), *extra],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    return json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"], " ".join(done.stderr.split())


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def _write(run: Path, rows: list[dict[str, Any]]) -> None:
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize(
    ("usage", "timings", "cached"),
    [
        ({"prompt_tokens": 40, "prompt_tokens_details": {"cached_tokens": 32}}, None, 32),  # vLLM, OpenAI
        ({"prompt_tokens": 40, "prompt_cache_hit_tokens": 24, "prompt_cache_miss_tokens": 16}, None, 24),  # DeepSeek
        (None, {"prompt_n": 1, "cache_n": 255, "predicted_n": 8}, 255),  # llama.cpp without a usage chunk
        ({"prompt_tokens": 40, "prompt_tokens_details": None}, None, None),  # vLLM without prompt details
    ],
)
def test_cached_prompt_tokens_are_read_where_each_server_reports_them(
    usage: dict[str, Any] | None, timings: dict[str, Any] | None, cached: int | None
) -> None:
    assert usage_of(usage, timings, "", "answer").cached_tokens == cached


def test_a_rerun_served_from_the_cache_is_shown_and_its_ttft_is_flagged_in_compare(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        first, _ = _run(url, tmp_path / "a", "--temperature", "0")
        again, said = _run(url, tmp_path / "b", "--temperature", "0")
    cold, warm = first["speed"]["prompt_cache"], again["speed"]["prompt_cache"]
    assert cold["requests"] == warm["requests"] == 8
    # a prompt seen before is served from the cache but for its last token; the first run shares only its start
    assert warm["cached_tokens"] == warm["prompt_tokens"] - 8 and cold["share"] < 0.5 <= warm["share"]
    records = _rows(tmp_path / "b")
    assert all(r["usage"]["cached_tokens"] == r["server_timings"]["cache_n"] for r in records)
    assert f"prompt tokens from the server's cache: {warm['share']:.0%}" in said
    assert "prompt tokens from the server's cache" in (tmp_path / "b" / "report.md").read_text()
    assert "prompt tokens from the server&#39;s cache" in (tmp_path / "b" / "report.html").read_text()
    result = compare_runs(tmp_path / "a", tmp_path / "b")
    assert result.tasks["knowledge_qa"].prompt_cache == (cold["share"], warm["share"])
    done = CliRunner().invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert done.exit_code == 0, done.stderr
    assert f"B's prompts were {warm['share']:.0%} cached, A's {cold['share']:.0%}: its TTFT is not comparable" in (
        " ".join(done.stderr.split())
    )
    assert "its TTFT is not comparable" in (tmp_path / "b" / "compare" / "compare.html").read_text()


def test_a_server_that_reports_no_cache_shows_no_share(tmp_path: Path) -> None:
    with running_server(_sim("vllm")) as url:  # vLLM sends no prompt_tokens_details unless started with a flag
        report, said = _run(url, tmp_path / "a", "--temperature", "0")
    assert report["speed"]["prompt_cache"] is None and "server's cache" not in said


def test_a_greedy_load_sweep_lists_outputs_that_differ_and_verdicts_that_flip(tmp_path: Path) -> None:
    run = tmp_path / "sweep"
    with running_server(_sim()) as url:
        report, said = _run(url, run, "--temperature", "0", "--concurrency", "1,4")
    expected = {"pairs": 8, "identical": 8, "flipped": [], "judged_apart": []}
    assert report["levels"]["c=4"]["vs_first"]["identical"] == expected
    assert "0 of 8 greedy answers to identical input differ between c=1 and c=4" in said
    # batching that changes an answer: one reply at c=4 comes back other than at c=1, and now wrong
    rows = _rows(run)
    changed = next(r for r in rows if r["level"] == "c=4" and r["score"]["correct"])
    changed["content"] = "I could not say.\n\nAnswer: Atlantis"
    _write(run, rows)
    done = CliRunner().invoke(app, ["rescore", str(run)])
    assert done.exit_code == 0, done.stderr
    rescored = json.loads((run / "rescore" / "summary.json").read_text())["tasks"]["knowledge_qa"]
    found = rescored["levels"]["c=4"]["vs_first"]["identical"]
    assert found == {"pairs": 8, "identical": 7, "flipped": [changed["sample_id"]], "judged_apart": []}
    flipped = f"and 1 of them flipped verdict: {changed['sample_id']}"
    line = f"1 of 8 greedy answers to identical input differ between c=1 and c=4, {flipped}"
    assert line in (run / "rescore" / "report.md").read_text()


def test_sampled_sweeps_and_different_inputs_are_no_identical_output_pairs(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        sampled, said = _run(url, tmp_path / "sampled", "--temperature", "0.7", "--concurrency", "1,4")
    assert sampled["levels"]["c=4"]["vs_first"]["identical"] is None and "greedy answers" not in said


def test_compare_at_temperature_0_counts_identical_outputs_and_flipped_verdicts(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        _run(url, tmp_path / "a", "--temperature", "0")
        _run(url, tmp_path / "b", "--temperature", "0")
    rows = _rows(tmp_path / "b")
    right = [r for r in rows[:-1] if r["score"]["correct"]]
    right[0]["content"] += " "  # a byte of difference, the same verdict
    right[1]["content"], right[1]["score"]["correct"] = "Answer: Atlantis", False
    rows[-1]["request"]["seed"] = 7  # the same messages under another key: not the same input, no pair of this kind
    _write(tmp_path / "b", rows)
    found = compare_runs(tmp_path / "a", tmp_path / "b").tasks["knowledge_qa"].identical
    assert found is not None
    assert (found.pairs, found.identical, found.flipped) == (7, 5, [right[1]["sample_id"]])
    done = CliRunner().invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert done.exit_code == 0, done.stderr
    flipped = f"and 1 of them flipped verdict: {right[1]['sample_id']}"
    line = f"2 of 7 greedy answers to identical input differ between A and B, {flipped}"
    assert line in " ".join(done.stderr.split())
    assert line in (tmp_path / "b" / "compare" / "compare.html").read_text()
