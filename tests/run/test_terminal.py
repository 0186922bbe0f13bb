"""What the terminal says after a run: what the reports say, in a few lines."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.records import RunSummary
from qualeval.sim import Behaviour, Latency, SimConfig, running_server

ITEMS = 6


def _sim(**kw: object) -> SimConfig:
    behaviour = Behaviour(reasoning_tokens=10, accuracy=1.0, empty_rate=0.0)
    return SimConfig(port=0, tasks=("knowledge_qa",), behaviour=behaviour, latency=Latency(burst=True), **kw)  # type: ignore[arg-type]


def _run(url: str, out: Path, *more: str) -> tuple[int, str]:
    done = CliRunner().invoke(
        app,
        ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", str(ITEMS), "--no-probe",
         "--constraint", "off", "--max-retries", "0", "--warmup", "0", "--out", str(out), *more],
    )  # fmt: skip
    return done.exit_code, done.stdout + done.stderr


def test_a_context_longer_than_the_server_holds_is_advised_shorter_not_rerun(tmp_path: Path) -> None:
    """The 400 naming the context comes back on every rerun: the advice is a shorter length, and the per-length
    rows report.md has are on the terminal, with the simulated server said as the reports say it."""
    out = tmp_path / "run"
    with running_server(_sim(max_model_len=2500)) as url:
        code, shown = _run(url, out, "--context-length", "300,4000", "--max-tokens", "256")
    assert code == 3, shown
    lines = shown.splitlines()
    advice = [line for line in lines if line.startswith("error:")]
    assert len(advice) == 1 and "--context-length 4000" in advice[0] and "maximum context length" in advice[0]
    assert "Rerun with the same --out" not in shown  # nothing here would succeed the second time
    summary = RunSummary.model_validate_json((out / "summary.json").read_bytes())
    assert summary.simulated and sum("Simulated server" in line for line in lines) == 1
    assert summary.serving is not None and summary.serving.context is not None
    header = next(re.split(r"\s{2,}", line.strip()) for line in lines if line.lstrip().startswith("task  "))
    for length, figures in summary.serving.context.tasks["knowledge_qa"].items():
        row = next(
            cells for line in lines if (cells := re.split(r"\s{2,}", line.strip()))[:2] == ["knowledge_qa", length]
        )
        cell = dict(zip(header, row, strict=True))
        assert (
            int(cell["items answered"]) == figures.accuracy.n
            and int(cell["endpoint errors"]) == figures.endpoint_errors
        )
        assert (cell["accuracy"] == "–") == (figures.accuracy.n == 0)  # a length the server refused has no accuracy


def test_other_endpoint_errors_are_still_to_be_sent_again(tmp_path: Path) -> None:
    with running_server(_sim(faults={"503": 0.5})) as url:
        code, shown = _run(url, tmp_path / "run")
    assert code == 3 and "Rerun with the same --out" in shown and "shorter length" not in shown
