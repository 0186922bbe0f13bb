"""A report or a plot can never take down a run or a rescore: a failure there is a one-line warning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import sim_process


def qualeval(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=timeout)


def test_a_perfect_eleven_item_run_writes_its_report_and_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # seed 1: ten items think 1-255 tokens and one longer; wilson(10, 10) once gave a high below 1.0
    sim = ("--task", "knowledge_qa", "--burst", "--accuracy", "1", "--reasoning-tokens", "150", "--seed", "1")
    with sim_process(*sim) as url:
        done = qualeval(
            "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "11", "--out", str(out)
        )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "warning" not in done.stderr
    summary = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]["summary"]
    assert (summary["correct"], summary["n"], summary["interval"][1]) == (11, 11, 1.0)
    assert 'id="items"' in (out / "report.html").read_text()
    rescored = qualeval("rescore", str(out))
    assert rescored.returncode == 0, rescored.stderr
    assert (out / "rescore" / "report.html").exists()


def test_accuracy_by_length_plots_perfect_and_empty_buckets() -> None:
    from qualeval import plots
    from qualeval.accuracy import cell_of

    cells = {"1-255": cell_of([True] * 10), "256-511": cell_of([False] * 3), "512-1023": cell_of([True] * 13)}
    assert plots.accuracy_by_length(cells, "t").startswith("data:image/svg+xml;base64,")


def test_a_plot_that_fails_is_a_warning_and_the_report_is_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from qualeval import plots
    from qualeval.api import finish_run
    from qualeval.config import RunConfig
    from qualeval.run import rescore

    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        done = qualeval(
            "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "6", "--out", str(out)
        )
    assert done.returncode == 0, done.stderr
    (out / "report.html").unlink()

    def broken(*_: object) -> str:
        raise ValueError("'yerr' must not contain negative values")

    monkeypatch.setattr(plots, "latency_by_outcome", broken)
    summary, store = rescore(out)
    config = RunConfig(base_url="http://127.0.0.1:9/v1", model="sim", tasks=["knowledge_qa"], out=out)
    result = finish_run(config, summary)
    assert result.root == out and (out / "report.html").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: ") and "negative values" in err[0]
    assert store.root == out / "rescore"


def test_a_report_that_fails_is_a_warning_and_the_run_exits_normally(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # a report template that cannot render: the run's records and summary are still there, exit 0
    script = (
        "import sys, qualeval.report as r\n"
        "def broken(*a, **k):\n    raise RuntimeError('template exploded')\n"
        "r.html_report = broken\n"
        "from qualeval.cli import main\nsys.argv = ['qualeval'] + sys.argv[1:]\nmain()\n"
    )
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        args = ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "4", "--out", str(out)]
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=180)
        again = subprocess.run(
            [sys.executable, "-c", script, "rescore", str(out)], capture_output=True, text=True, timeout=180
        )
    for proc in (done, again):
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
        assert len(warnings) == 1 and "template exploded" in warnings[0]
    assert (out / "summary.json").exists() and (out / "report.md").exists()
