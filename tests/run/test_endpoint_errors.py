"""Endpoint failures are not answers: accuracy counts the items the model answered, the requests the endpoint
failed are counted apart (with the server's reason) in every table, and a run that ends with any exits 3."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.figures.accuracy import summarize
from qualeval.figures.compare import compare_runs
from qualeval.records import Outcome, RunSummary
from qualeval.sim import Behaviour, Latency, SimConfig, running_server

ITEMS = 12


def _cli(*args: str) -> tuple[int, str]:
    code, _, stderr = _both(*args)
    return code, stderr


def _both(*args: str) -> tuple[int, str, str]:
    """The exit code, stdout (the tables, on one wide line each) and stderr (the notes), whitespace folded."""
    done = CliRunner().invoke(app, list(args), env={"COLUMNS": "300"})
    return done.exit_code, " ".join(done.stdout.split()), " ".join(done.stderr.split())


def _run(url: str, out: Path, *more: str) -> tuple[int, str]:
    return _cli(*_run_args(url, out, *more))


def _run_args(url: str, out: Path, *more: str) -> tuple[str, ...]:
    return (
        "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", str(ITEMS),
        "--no-probe", "--constraint", "off", "--max-retries", "0", "--warmup", "0", "--out", str(out), *more,
    )  # fmt: skip


def _sim(**kw: object) -> SimConfig:
    behaviour = Behaviour(reasoning_tokens=10, accuracy=1.0, empty_rate=0.0)
    return SimConfig(port=0, tasks=("knowledge_qa",), behaviour=behaviour, latency=Latency(burst=True), **kw)  # type: ignore[arg-type]


def _records(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "records.jsonl").read_bytes().split(b"\n") if line.strip()]


def test_a_server_that_fails_half_the_requests_measures_only_what_it_answered(tmp_path: Path) -> None:
    with running_server(_sim(faults={"503": 0.5})) as url:
        code, stdout, stderr = _both(*_run_args(url, tmp_path / "run", "--fail-under", "0.9"))
    records = _records(tmp_path / "run")
    failed = [r for r in records if r["status"] == "transport_error"]
    assert 0 < len(failed) < ITEMS
    summary = RunSummary.model_validate_json((tmp_path / "run" / "summary.json").read_bytes())
    s = summary.tasks["knowledge_qa"].summary
    # every answered item is right (accuracy 1.0 on the server): the failures did not become wrong answers
    assert (s.n, s.accuracy, s.endpoint_errors, s.error_items) == (ITEMS - len(failed), 1.0, len(failed), len(failed))
    assert "HTTP 503" in next(iter(s.error_reasons))
    assert code == 3, stderr  # not 0 with a wrong accuracy, not 1 for "accuracy below"
    assert f"{len(failed)} requests ended in an endpoint error" in stderr and "same --out" in stderr
    assert "accuracy below" not in stderr  # the answered items are all right: --fail-under is met
    # every item asked, then those with a response: not "8 items (12 responses)"
    lost = f"{len(failed)} lost to {'an endpoint error' if len(failed) == 1 else 'endpoint errors'}"
    assert f"knowledge_qa: {ITEMS} items, {ITEMS - len(failed)} with a response ({lost})" in stdout
    # --max-retries 0: every fault ended its request, none was retried
    assert summary.tasks["knowledge_qa"].retried == 0 and all(r["attempts"] == 1 for r in failed)
    assert "no request was retried" in stderr and "retried (an answered" not in stderr
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"| knowledge_qa | {ITEMS - len(failed)} | 100.0% |" in report
    assert f"{len(failed)} requests failed at the endpoint" in report and "HTTP 503" in report
    assert "requests failed at the endpoint" in (tmp_path / "run" / "report.html").read_text()


def test_fail_under_judges_the_answered_items_and_says_what_it_left_out(tmp_path: Path) -> None:
    config = dataclasses.replace(_sim(faults={"503": 0.3}), behaviour=Behaviour(reasoning_tokens=10, accuracy=0.0))
    with running_server(config) as url:
        code, stderr = _run(url, tmp_path / "run", "--fail-under", "0.5")
    assert code == 3, stderr  # the errors decide the exit code; the verdict on accuracy is still printed
    errors = sum(r["status"] == "transport_error" for r in _records(tmp_path / "run"))
    assert "accuracy below 50%: knowledge_qa 0.0% (--fail-under holds the accuracy line" in stderr
    assert f"{errors} request{'s' if errors > 1 else ''} with endpoint errors left out)" in stderr


def test_fail_under_names_the_figure_it_holds_not_the_one_over_answered_items(tmp_path: Path) -> None:
    """Answers cut off in the thinking count as wrong in the accuracy, not in the accuracy over answered items:
    the message gives the figure the threshold was held to, never says "over the answered items"."""
    config = dataclasses.replace(_sim(), behaviour=Behaviour(reasoning_tokens=300, accuracy=1.0))
    with running_server(config) as url:
        code, stderr = _run(url, tmp_path / "run", "--max-tokens", "250", "--fail-under", "0.95")
    s = RunSummary.model_validate_json((tmp_path / "run" / "summary.json").read_bytes()).tasks["knowledge_qa"].summary
    assert s.accuracy is not None and s.accuracy < 0.95 <= (s.accuracy_answered or 0), s  # the two figures differ
    assert code == 1, stderr
    assert f"accuracy below 95%: knowledge_qa {s.accuracy:.1%} (--fail-under holds the accuracy line" in stderr
    assert "over the answered items" not in stderr


def test_a_server_that_fails_everything_shows_no_accuracy(tmp_path: Path) -> None:
    with running_server(_sim(faults={"503": 1.0})) as url:
        code, stderr = _run(url, tmp_path / "run")
    assert code == 3 and "every request failed" in stderr
    s = RunSummary.model_validate_json((tmp_path / "run" / "summary.json").read_bytes()).tasks["knowledge_qa"].summary
    assert (s.n, s.endpoint_errors, s.error_items) == (0, ITEMS, ITEMS)
    assert "| knowledge_qa | 0 | – (no item answered) |" in (tmp_path / "run" / "report.md").read_text()


def test_a_context_too_long_for_the_server_is_an_error_at_that_length_not_a_wrong_answer(tmp_path: Path) -> None:
    with running_server(_sim(max_model_len=2500)) as url:
        code, stderr = _run(url, tmp_path / "run", "--context-length", "300,4000", "--max-tokens", "256")
    assert code == 3, stderr
    context = RunSummary.model_validate_json((tmp_path / "run" / "summary.json").read_bytes()).serving
    assert context is not None and context.context is not None
    at = context.context.tasks["knowledge_qa"]
    assert at["300"].accuracy.n == ITEMS and at["300"].endpoint_errors == 0
    assert at["4000"].accuracy.n == 0 and at["4000"].endpoint_errors == ITEMS
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"| knowledge_qa | 4000 | 0 | – | – | {ITEMS} |" in report  # never "0.0%"
    s = RunSummary.model_validate_json((tmp_path / "run" / "summary.json").read_bytes()).tasks["knowledge_qa"].summary
    assert s.accuracy == 1.0 and s.endpoint_errors == ITEMS and "maximum context length" in next(iter(s.error_reasons))


def test_summaries_and_levels_leave_failed_requests_out() -> None:
    rows = [
        Outcome(status="ok", correct=True, rung="anchor", item="a"),
        Outcome(status="transport_error", correct=False, rung="none", item="a", error="HTTP 503: busy"),
        Outcome(status="ok", correct=False, rung="anchor", item="b"),
        Outcome(status="transport_error", correct=False, rung="none", item="c", error="HTTP 400: too long"),
    ]
    s = summarize("t", rows)
    assert (s.n, s.correct, s.accuracy, s.records) == (2, 1, 0.5, 4)
    assert (s.endpoint_errors, s.error_items) == (2, 1)  # item a was answered once; item c never
    assert s.error_reasons == {"HTTP 503: busy": 1, "HTTP 400: too long": 1}
    assert s.statuses == {"ok": 2, "transport_error": 2}


@pytest.mark.parametrize("side", ["a", "b"])
def test_compare_leaves_out_pairs_an_endpoint_failed_and_counts_them(tmp_path: Path, side: str) -> None:
    with running_server(_sim()) as url:
        assert _run(url, tmp_path / "clean")[0] == 0
    with running_server(_sim(faults={"503": 0.5})) as url:
        assert _run(url, tmp_path / "faulty")[0] == 3
    failed = sum(r["status"] == "transport_error" for r in _records(tmp_path / "faulty"))
    a, b = (tmp_path / "clean", tmp_path / "faulty") if side == "b" else (tmp_path / "faulty", tmp_path / "clean")
    t = compare_runs(a, b).tasks["knowledge_qa"]
    assert t.pairs == ITEMS - failed and t.difference == 0.0  # an error never flips an item to wrong
    assert t.endpoint_errors == ((0, failed) if side == "b" else (failed, 0))


def test_retried_requests_are_counted_and_timed_from_their_first_attempt(tmp_path: Path) -> None:
    with running_server(_sim(faults={"503": 0.4})) as url:
        code, stderr = _run(url, tmp_path / "run", "--max-retries", "5")
    records = _records(tmp_path / "run")
    retried = [r for r in records if r["retried"]]
    assert code == 0 and retried, stderr
    for r in retried:
        timing = r["timing"]
        assert isinstance(timing, dict) and timing["retrying"] > 0 and timing["end"] >= timing["retrying"]
    summary = RunSummary.model_validate_json((tmp_path / "run" / "summary.json").read_bytes())
    assert summary.tasks["knowledge_qa"].retried == len(retried)
    assert f"{len(retried)} request{'s were' if len(retried) > 1 else ' was'} retried" in stderr
    assert (
        f"| knowledge_qa | 503 {sum(len(r['retried']) for r in retried)} | {len(retried)} |"
        in (tmp_path / "run" / "report.md").read_text()
    )


def test_a_context_refusal_whose_own_figures_fit_is_said_to_be_the_servers_claim(tmp_path: Path) -> None:
    """The simulated `context` fault refuses a 4126-token request with a 32768-token context: its own figures
    put the request within it, so qualeval says it is the server's claim, and that a rerun sends it again
    (on resume such requests were answered), never that the prompts are too long and would fail again."""
    with running_server(_sim(faults={"context": 0.4})) as url:
        code, stderr = _run(url, tmp_path / "run")
    refused = [r for r in _records(tmp_path / "run") if r["status"] == "transport_error"]
    assert code == 3 and refused
    assert (
        f"error: {len(refused)} requests the server refused as longer than its context (HTTP 400: This model's "
        "maximum context length is 32768 tokens. However, you requested"
    ) in stderr
    assert "that is the server's claim, not the prompts' length" in stderr and "same --out" in stderr
    assert "would fail again" not in stderr
    report = (tmp_path / "run" / "report.md").read_text()
    assert "its claim, not the prompts' length" in report and "would fail again" not in report


@pytest.mark.parametrize(
    ("reason", "claimed"),
    [
        ("This model's maximum context length is 32768 tokens. However, you requested 4126 tokens", True),
        ("This model's maximum context length is 4096 tokens. However, you requested 9000 tokens", False),
        ("request (812 tokens) exceeds the available context size (512 tokens), try increasing it", False),
        ("request (200 tokens) exceeds the available context size (512 tokens), try increasing it", True),
        ("The input (70000 tokens) is longer than the model's context length (32768 tokens).", False),
        ("context length exceeded", False),
    ],
)
def test_a_refusal_is_the_servers_claim_only_when_its_own_figures_fit(reason: str, claimed: bool) -> None:
    from qualeval.report import context_claimed, context_refused

    assert context_claimed(reason) is claimed and context_refused(reason) is not claimed
