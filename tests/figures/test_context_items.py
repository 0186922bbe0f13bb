"""A question placed at several --context-length values is one item of the task's accuracy (its interval is over
the questions asked, not over questions times lengths), and report.md says a context refusal would fail again."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.records import RunSummary
from qualeval.sim import Behaviour, Latency, SimConfig, running_server

QUESTIONS = 3


def _context_run(out: Path) -> int:
    behaviour = Behaviour(reasoning_tokens=10, accuracy=1.0, empty_rate=0.0)
    config = SimConfig(
        port=0, tasks=("knowledge_qa",), behaviour=behaviour, latency=Latency(burst=True), max_model_len=2500
    )
    with running_server(config) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", str(QUESTIONS),
             "--no-probe", "--max-retries", "0", "--warmup", "0", "--max-tokens", "256",
             "--context-length", "300,1000,4000", "--out", str(out)],
        )  # fmt: skip
    return done.exit_code


def test_a_question_at_several_context_lengths_is_one_item_and_a_refusal_would_fail_again(tmp_path: Path) -> None:
    out = tmp_path / "ctx"
    assert _context_run(out) == 3  # the 4000-token prompts are longer than the server's context
    task = RunSummary.model_validate_json((out / "summary.json").read_bytes()).tasks["knowledge_qa"]
    s = task.summary
    assert s.records == 3 * QUESTIONS and s.endpoint_errors == QUESTIONS
    assert s.n == QUESTIONS  # the questions asked, each once, however many lengths it was placed at
    md = (out / "report.md").read_text()
    assert "would fail again on a rerun" in md and "sends them again" not in md
