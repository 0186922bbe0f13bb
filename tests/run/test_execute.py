"""Runs: the run directory, resume after a kill, rescore, reports, the API, exit codes, the demo."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.figures.accuracy import Repeat, repeated
from qualeval.records import Manifest
from qualeval.records.store import RunStore
from qualeval.report.numbers import at_k
from qualeval.run.options import load_config
from tests.conftest import GSM8K, ROOT, SHARED, chromium_dom, sim_process

needs_data = pytest.mark.skipif(not (SHARED / "mmlu").exists() or not GSM8K.exists(), reason="shared data missing")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def qualeval(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=timeout)


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1] if path.exists() else []


@needs_data
def test_gsm8k_and_mmlu_stem_with_a_kill_resume_and_rescore(tmp_path: Path) -> None:
    out = tmp_path / "run"
    sim = (
        "--answers",
        str(GSM8K),
        "--task",
        "mmlu:stem",
        "--data",
        str(SHARED / "mmlu"),
        "--ttft-ms",
        "15",
        "--decode-ms",
        "0.5",
        "--reasoning-tokens",
        "100",
        "--jitter",
        "0",
    )
    with sim_process(*sim) as url:
        command = [
            sys.executable,
            "-m",
            "qualeval",
            "run",
            "--base-url",
            url,
            "--model",
            "sim",
            "--task",
            "gsm8k",
            "--task",
            "mmlu:stem",
            "--data",
            f"gsm8k={SHARED / 'gsm8k'}",
            "--data",
            f"mmlu:stem={SHARED / 'mmlu'}",
            "--limit",
            "100",
            "--limit-per-subject",
            "3",
            "--concurrency",
            "4",
            "--out",
            str(out),
        ]
        # a long first run, killed with SIGKILL mid-way
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 180  # a busy machine takes longer to start; a quiet one stops at 40
        while len(lines(out / "records.jsonl")) < 40 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        partial = len(lines(out / "records.jsonl"))
        assert 40 <= partial < 154
        done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in lines(out / "records.jsonl")]
    keys = [(r["sample_id"], r["repeat"]) for r in records]
    assert len(records) == 100 + 18 * 3 and len(set(keys)) == len(keys)
    assert {r["task"] for r in records} == {"gsm8k", "mmlu:stem"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["simulated"] is True and manifest["server"]["probe"]["reasoning_source"] == "field:reasoning"
    assert manifest["tasks"]["gsm8k"]["samples"] == 100 and len(manifest["resumed"]) == 1
    assert "api_key" not in json.dumps(manifest)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["records"] == 154
    assert set(summary["tasks"]["mmlu:stem"]["summary"]["breakdowns"]) == {"subject", "category"}
    assert 0.6 <= summary["tasks"]["gsm8k"]["summary"]["accuracy"] <= 0.95
    assert (out / "report.md").read_text().count("Simulated server") == 1
    assert 'id="items"' in (out / "report.html").read_text()
    rescored = qualeval("rescore", str(out))
    assert rescored.returncode == 0, rescored.stderr
    again = json.loads((out / "rescore" / "summary.json").read_text())
    assert again["rescored"] is True and again["records"] == 154
    for name in ("gsm8k", "mmlu:stem"):
        assert again["tasks"][name]["summary"]["correct"] == summary["tasks"][name]["summary"]["correct"]
    assert (out / "rescore" / "report.html").exists() and (out / "summary.json").exists()


def test_a_torn_last_line_is_dropped_on_resume(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    manifest = Manifest(fingerprint="f")
    store.open(manifest)
    store.append(json.dumps({"sample_id": "t/0", "attempt": 0}).encode())
    store.append(json.dumps({"sample_id": "t/1", "attempt": 0}).encode())
    store.close()
    with (tmp_path / "records.jsonl").open("ab") as handle:
        handle.write(b'{"sample_id": "t/2", "att')  # killed mid-write
    again = RunStore(tmp_path)
    assert again.open(manifest) == {("t/0", 0, ""), ("t/1", 0, "")}
    again.append(json.dumps({"sample_id": "t/2", "attempt": 0}).encode())
    again.close()
    assert [json.loads(line)["sample_id"] for line in lines(tmp_path / "records.jsonl")] == ["t/0", "t/1", "t/2"]
    with pytest.raises(InputError, match="holds a run of other tasks"):
        RunStore(tmp_path).open(Manifest(fingerprint="other"))


def _quick_run(url: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return qualeval(
        "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "12", "--out", str(out), *extra
    )


def test_report_html_in_headless_chromium(tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        assert _quick_run(url, tmp_path / "run").returncode == 0
    dom = chromium_dom(CHROMIUM, (tmp_path / "run" / "report.html"), tmp_path / "profile")
    for section in ("accuracy", "breakdowns", "statuses", "speed", "items", "simulated"):
        assert f'id="{section}"' in dom
    assert dom.count('class="item"') == 12
    assert "12 shown" in dom  # the filter script ran, within the page's content security policy
    assert "knowledge_qa/test/" in dom and "reasoning" in dom


def test_python_api(tmp_path: Path) -> None:
    import qualeval

    with sim_process("--task", "syllogisms", "--burst") as url:
        result = qualeval.evaluate(
            model="sim",
            tasks=["syllogisms"],
            base_url=url,
            out=tmp_path / "api",
            limit=16,
            sample_seed=3,
            samples_per_item=3,
            temperature=0.7,
            concurrency=8,
        )
    summary = result.summary.tasks["syllogisms"].summary
    assert (summary.n, summary.records) == (16, 48)  # accuracy counts items, each the mean of its 3 samples
    rep = result.summary.tasks["syllogisms"].repeated
    assert rep is not None and rep.k == 3 and rep.items == 16 and rep.pass_at_k >= rep.maj_at_k - 1e-9
    assert summary.accuracy == pytest.approx(rep.mean)
    assert len(result.records) == 48
    frame = result.to_pandas()
    assert len(frame) == 48 and {
        "sample_id",
        "correct",
        "timing_ttft",
        "timing_tpot",
        "timing_reasoning_duration",
        "level",
        "meta_validity",
    } <= set(frame.columns)


def test_repeated_sampling_arithmetic() -> None:
    attempts = [
        Repeat("a", True, "1"),
        Repeat("a", False, "2"),
        Repeat("a", True, "1"),
        Repeat("b", False, "3"),
        Repeat("b", False, "3"),
        Repeat("b", True, "4"),
        Repeat("c", False, None),
        Repeat("c", False, None),
        Repeat("c", False, "9"),
    ]
    r = repeated(attempts, 3)
    assert r.items == 3
    assert r.mean == pytest.approx((2 / 3 + 1 / 3 + 0) / 3)
    assert r.maj_at_k == pytest.approx(1 / 3) and r.pass_at_k == pytest.approx(2 / 3)
    # clustered: the standard error of the per-item means
    per_item = [2 / 3, 1 / 3, 0.0]
    mean = sum(per_item) / 3
    assert r.mean_se == pytest.approx((sum((p - mean) ** 2 for p in per_item) / 2 / 3) ** 0.5)


def test_maj_and_pass_at_k_are_over_the_items_with_all_k_samples_answered() -> None:
    # item b's other two requests failed at the endpoint: its one right sample is no pass@3
    attempts = [Repeat("a", False, "1"), Repeat("a", False, "1"), Repeat("a", True, "2"), Repeat("b", True, "3")]
    r = repeated(attempts, 3)
    assert (r.items, r.complete, r.maj_at_k, r.pass_at_k) == (2, 1, 0.0, 1.0)
    line = at_k(r)
    assert "over the 1 of 2 items with all 3 samples answered" in line
    none = repeated([Repeat("b", True, "3")], 3)
    assert (none.maj_at_k, none.pass_at_k) == (None, None) and "maj@3 100" not in at_k(none)
    assert "no item has all 3 samples answered" in at_k(none)


def test_exit_codes(tmp_path: Path) -> None:
    with sim_process("--task", "knowledge_qa", "--burst", "--accuracy", "0.3", "--api-key", "right") as url:
        os.environ["OPENAI_API_KEY"] = "right"
        try:
            below = _quick_run(url, tmp_path / "a", "--fail-under", "0.9")
            fine = _quick_run(url, tmp_path / "b", "--fail-under", "0.0")
        finally:
            del os.environ["OPENAI_API_KEY"]
        refused = _quick_run(url, tmp_path / "c")
    assert below.returncode == 1 and "accuracy below 90%" in below.stderr
    assert fine.returncode == 0
    assert refused.returncode == 3 and "refused us" in refused.stderr and "Traceback" not in refused.stderr
    unreachable = _quick_run("http://127.0.0.1:9/v1", tmp_path / "d", "--max-retries", "0")
    assert unreachable.returncode == 3 and "cannot reach the endpoint" in unreachable.stderr
    for bad, words in (
        (["--concurrency", "0"], "--concurrency: every level must be at least 1"),
        (["--constraint", "maybe"], "--constraint"),
        (["--fail-under", "80"], "--fail-under"),
    ):
        done = _quick_run("http://127.0.0.1:9/v1", tmp_path / "e", *bad)
        assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


def test_profiles_validate_and_flags_override(tmp_path: Path) -> None:
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        config = load_config(path, {"model": "m", "base_url": "http://x/v1", "tasks": ["gsm8k"], "out": tmp_path})
        assert config.tasks == ["gsm8k"]
    config = load_config(
        ROOT / "configs" / "vllm-qwen3-thinking.yaml", {"tasks": ["gsm8k"], "out": tmp_path, "concurrency": 3}
    )
    assert (config.thinking, config.concurrency, config.model) == (True, [3], "Qwen/Qwen3-8B")
    bad = tmp_path / "bad.yaml"
    bad.write_text("concurency: 4\n")
    with pytest.raises(InputError, match="unknown option 'concurency'"):
        load_config(bad, {})


def test_demo_runs_and_says_simulated(tmp_path: Path) -> None:
    done = qualeval("demo", "--out", str(tmp_path / "demo"), timeout=300)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "demo" / "report.html").read_text()
    assert "Simulated server." in html and "report.html" in done.stdout
    summary = json.loads((tmp_path / "demo" / "summary.json").read_text())
    assert set(summary["tasks"]) == {"word_problems", "knowledge_qa", "syllogisms"}
    held = summary["tasks"]["word_problems"]["summary"]["constraint_held"]
    assert held.get("broken", 0) > 0  # the demo's ignored constraint is caught, not trusted
    # the probe repeats its greeting, which the reference server's key lacks: named once, not once a request
    assert done.stderr.count("Reply with a short friendly greeting") == 1
    again = qualeval("demo", "--out", str(tmp_path / "demo"), timeout=300)  # its own earlier run is replaced
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "demo" / "summary.json").read_text())["tasks"].keys() == summary["tasks"].keys()


def test_the_demo_refuses_a_directory_holding_something_else(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    done = qualeval("demo", "--out", str(tmp_path))
    assert done.returncode == 2 and done.stderr.startswith(f"error: {tmp_path}: holds something other than a demo")
    assert (tmp_path / "notes.txt").read_text() == "mine"
