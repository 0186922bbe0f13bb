"""A report or a plot can never take down a run or a rescore: a failure there is a one-line warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import sim_process


def qualeval(*args: str, timeout: float = 180, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qualeval", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


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
    from qualeval.figures.accuracy import cell_of
    from qualeval.report import plots

    cells = {"1-255": cell_of([True] * 10), "256-511": cell_of([False] * 3), "512-1023": cell_of([True] * 13)}
    assert plots.accuracy_by_length(cells, "t").startswith("data:image/svg+xml;base64,")


def test_a_plot_that_fails_is_a_warning_and_the_report_is_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from qualeval.api import finish_run
    from qualeval.cli.output import shown_warnings
    from qualeval.records import RunConfig
    from qualeval.report import plots
    from qualeval.run.rescoring import rescore

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
    with shown_warnings():  # as the CLI shows a library warning
        result = finish_run(config, summary)
    assert result.root == out and (out / "report.html").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: ") and "negative values" in err[0]
    assert store.root == out / "rescore"


def test_a_report_that_fails_is_a_warning_and_the_run_exits_normally(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # a report template that cannot render: the run's records and summary are still there, exit 0
    script = (
        "import sys, qualeval.report.html as r\n"
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


def test_every_answer_cut_off_suggests_at_least_double_the_budget(tmp_path: Path) -> None:
    """None finished, so no finished length to read a budget from: the advice is still a larger budget."""
    import qualeval
    from qualeval.sim import Behaviour, running_server
    from tests.conftest import fast_sim

    config = fast_sim(tasks=("knowledge_qa",), behaviour=Behaviour(reasoning_tokens=600))
    with running_server(config) as url:
        result = qualeval.evaluate(
            "sim", "knowledge_qa", base_url=url, out=tmp_path / "run", limit=6, max_tokens=64, probe=False
        )
    task = result.summary.tasks["knowledge_qa"]
    assert set(task.summary.statuses) <= {"reasoning_truncated", "answer_truncated"}
    cut = task.linked.truncation
    assert (cut.budget, cut.truncated, cut.rate) == (64, 6, 1.0)
    assert cut.suggested_budget is not None and cut.suggested_budget >= 2 * 64
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"truncated: 6 (100.0%) at budget 64; suggested budget: {cut.suggested_budget}" in report
    assert f"suggested budget: {cut.suggested_budget}" in (tmp_path / "run" / "report.html").read_text()


def test_the_terminal_shows_speed_per_load_level_after_the_accuracy(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        done = qualeval(
            "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "5",
            "--concurrency", "1,4,16", "--out", str(out), env={"COLUMNS": "400"},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # a terminal wide enough that no measured figure, however many digits it has, wraps a header or a cell: what
    # is checked is which rows and figures are shown, never how wide they are
    shown = done.stdout
    assert shown.index("accuracy (95% Wilson)") < shown.index("knowledge_qa: speed (ms, warm-up excluded")
    for column in ("requests", "TTFT p50/p90", "answer p50", "latency p50", "tok/s", "req/s"):
        assert column in shown
    rows = [[c.strip() for c in line.split("│")] for line in shown.splitlines() if line.lstrip().startswith("c=")]
    assert [row[0] for row in rows] == ["c=1", "c=4", "c=16"]
    summary = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]
    for cells in rows:
        speed = summary["levels"][cells[0]]["speed"]
        assert int(cells[1]) == speed["requests"] == 4  # the warm-up item is not counted
        p50, p90 = (float(x.replace(",", "")) for x in cells[2].split("/"))
        assert (p50, p90) == (round(speed["ttft"]["p50"]), round(speed["ttft"]["p90"]))
        tok_s, req_s = (float(x.replace(",", "")) for x in cells[5:7])
        assert tok_s > 0 and req_s > 0  # measured per level, never pooled
        assert "…" not in "".join(cells)  # nothing cut to fit


def test_the_terminal_speed_table_names_each_task_and_leaves_out_one_never_timed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from qualeval.cli.views import print_speed
    from qualeval.figures.speeds import linked, speed
    from qualeval.records import RunSummary, TaskReport, TaskSummary, Timed

    def report(n: int) -> TaskReport:
        rows = [Timed(ttft=10.0 * (i + 1), first_content=20.0, end=30.0) for i in range(n)]
        return TaskReport(
            summary=TaskSummary(task="t", n=1, correct=1, accuracy=1.0, interval=(0.2, 1.0), accuracy_answered=1.0,
                                statuses={}, rungs={}),
            speed=speed(rows),
            linked=linked(rows, None),
        )  # fmt: skip

    summary = RunSummary(
        model="m", base_url="u", simulated=False, qualeval_version="0", records=3,
        tasks={"timed_task": report(3), "untimed_task": report(0)},
    )  # fmt: skip
    print_speed(summary)
    shown = capsys.readouterr().out
    assert "speed (ms, warm-up excluded" in shown and "timed_task" in shown and "20 / 28" in shown
    assert "untimed_task" not in shown  # nothing measured: no row of zeros


def test_report_md_shows_the_retried_faults_report_html_shows(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--burst", "--faults", "503=0.3", "--retry-after", "0.01") as url:
        done = qualeval(
            "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "12", "--out", str(out)
        )
    assert done.returncode in (0, 3), done.stderr
    faults = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]["faults"]
    assert faults  # the server faltered, and the retries absorbed it or not
    md = (out / "report.md").read_text()
    section = md.split("## Faults retried or final")[1].split("\n## ")[0]
    row = next(line for line in section.splitlines() if line.startswith("| knowledge_qa |"))
    for fault, count in faults.items():
        assert f"{fault} {count}" in row
    assert all(f"{fault} {count}" in (out / "report.html").read_text() for fault, count in faults.items())


@pytest.mark.parametrize(
    ("cut", "right", "said"),
    [
        (1, 0, "the 1 answer cut off by the budget (answer_truncated) is not counted correct: it does not state"),
        (1, 1, "the 1 answer cut off by the budget (answer_truncated) is counted correct: it states"),
        (3, 0, "none of the 3 answers cut off by the budget (answer_truncated) is counted correct: none states"),
        (3, 1, "1 of the 3 answers cut off by the budget (answer_truncated) is counted correct: it states"),
        (3, 2, "2 of the 3 answers cut off by the budget (answer_truncated) are counted correct: each of them states"),
        (3, 3, "all 3 answers cut off by the budget (answer_truncated) are counted correct: each states"),
    ],
)
def test_the_cut_off_answers_line_is_worded_for_none_one_and_many(cut: int, right: int, said: str) -> None:
    """Never "0 of the 1 answers ... are counted correct: each states the right answer"."""
    from qualeval.records import TaskSummary
    from qualeval.report import cut_correct_line

    summary = TaskSummary(
        task="t", n=cut, correct=right, accuracy=right / cut, interval=(0.0, 1.0), accuracy_answered=right / cut,
        statuses={"answer_truncated": cut}, rungs={}, truncated_correct=right,
    )  # fmt: skip
    assert cut_correct_line(summary) == f"{said} the right answer before the cut"
