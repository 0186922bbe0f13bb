"""The server's own metrics are the seconds sampled while the run had requests in flight: a sample taken after
the run ended reads an idle server, whose zeros are no figure of the run. With none left, compare shows "–" and
says why, in the terminal, compare.json and compare.html."""

from __future__ import annotations

import json
from pathlib import Path

from qualeval.figures import compare_runs
from qualeval.records import RunSummary, SeriesPoint, ServerSample
from qualeval.serving.gaps import server_gaps
from qualeval.serving.timeseries import server_summary
from tests.figures.test_board import write_run
from tests.figures.test_compare import compare_cli, with_summary

URL = "http://127.0.0.1:1/v1"


def _series(root: Path, *points: tuple[int, bool, float]) -> Path:
    """timeseries.jsonl of (requests in flight, warm-up, KV-cache usage) seconds."""
    root.mkdir(parents=True, exist_ok=True)
    lines = [
        SeriesPoint(
            t=float(i), wall=float(i), output_tokens_per_s=0.0, in_flight=flight, queued=0, warmup=warm,
            server={URL: ServerSample(server="vllm", running=float(flight), kv_cache_usage=kv)},
        ).model_dump_json()
        for i, (flight, warm, kv) in enumerate(points)
    ]  # fmt: skip
    (root / "timeseries.jsonl").write_text("".join(line + "\n" for line in lines))
    return root


def test_a_sample_after_the_run_ended_is_no_figure(tmp_path: Path) -> None:
    root = _series(tmp_path / "a", (1, True, 0.9), (4, False, 0.5), (2, False, 0.3), (0, False, 0.0))
    figures = server_summary(root)[URL]
    assert figures["kv_cache_usage"].n == 2 and abs(figures["kv_cache_usage"].mean - 0.4) < 1e-9
    assert figures["running"].mean == 3.0  # the last sample, taken after the run ended, read 0 running
    short = _series(tmp_path / "short", (0, False, 0.0))  # a run shorter than a second: one sample, after it
    assert server_summary(short) == {URL: {}}


def _idle(root: Path) -> Path:
    """A summary whose server was read only with no request in flight (one sample, after the run), with the
    reasons a run keeps."""
    _series(root, (0, False, 0.0))
    summary = RunSummary.model_validate_json((root / "summary.json").read_text())
    gaps = server_gaps(root, server_summary(root))
    idle = summary.model_copy(update={"server": {URL: {}}, "server_gaps": gaps})
    (root / "summary.json").write_text(idle.model_dump_json())
    return root


def test_compare_shows_a_dash_and_says_why(tmp_path: Path) -> None:
    a = _idle(with_summary(write_run(tmp_path / "a", [True, False, True]), server=0.0))
    b = with_summary(write_run(tmp_path / "b", [True, True, True]), server=2.0)
    result = compare_runs(a, b)
    assert result.server["running"] == [None, 2.0]
    assert len(result.server_notes) == 1 and result.server_notes[0].startswith("A: no server metric: ")
    assert "only with no request in flight" in result.server_notes[0]
    done = compare_cli(a, b, out=tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if "running" in line)
    assert "–" in row and "2.000" in row
    assert result.server_notes[0] in done.stderr
    saved = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert saved["server_notes"] == result.server_notes and saved["server"]["running"] == [None, 2.0]
    assert "only with no request in flight" in (tmp_path / "cmp" / "compare.html").read_text()


def test_neither_run_sampled_during_it_is_said_not_tabled_as_zeros(tmp_path: Path) -> None:
    a = _idle(with_summary(write_run(tmp_path / "a", [True, False, True]), server=0.0))
    b = _idle(with_summary(write_run(tmp_path / "b", [True, True, True]), server=0.0))
    result = compare_runs(a, b)
    assert result.server == {} and [line[:2] for line in result.server_notes] == ["A:", "B:"]


def test_a_server_without_metrics_beside_one_with_is_said(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [True, False, True])  # no summary.json at all
    b = with_summary(write_run(tmp_path / "b", [True, True, True]), server=2.0)
    assert compare_runs(a, b).server_notes == ["A: no server metric: no readable summary.json"]  # B's one metric
    c, d = write_run(tmp_path / "c", [True]), write_run(tmp_path / "d", [True])
    assert compare_runs(c, d).server_notes == []  # neither has any: no table, nothing to explain


def test_a_rate_counts_in_a_second_whose_requests_finished_between_two_samples(tmp_path: Path) -> None:
    """A small model finishes its request between two samples: nothing is in flight when either is taken, yet the
    second's token counter moved. The rate is the run's; the gauges read then are an idle server's."""
    root = tmp_path / "quick"
    root.mkdir()
    point = SeriesPoint(
        t=0.0, wall=0.0, output_tokens_per_s=120.0, in_flight=0, queued=0, completed=3, tokens=120,
        server={URL: ServerSample(server="vllm", running=0.0, kv_cache_usage=0.0, generation_throughput=118.0)},
    )  # fmt: skip
    idle = point.model_copy(update={"t": 1.0, "completed": 0, "tokens": 0, "server": {
        URL: ServerSample(server="vllm", running=0.0, kv_cache_usage=0.0, generation_throughput=0.0)}})  # fmt: skip
    (root / "timeseries.jsonl").write_text(point.model_dump_json() + "\n" + idle.model_dump_json() + "\n")
    figures = server_summary(root)[URL]
    assert figures["generation_throughput"].mean == 118.0 and figures["generation_throughput"].n == 1
    assert "running" not in figures and "kv_cache_usage" not in figures


def test_every_dash_carries_its_reason(tmp_path: Path) -> None:
    """B has running but no KV-cache figure (its server exposes none): the "–" says so, not nothing."""
    a = with_summary(write_run(tmp_path / "a", [True, False, True]), server=1.0)
    b = with_summary(write_run(tmp_path / "b", [True, True, True]), server=2.0)
    summary = RunSummary.model_validate_json((a / "summary.json").read_text())
    assert summary.server is not None
    ((url, figs),) = summary.server.items()
    server = {url: {**figs, "kv_cache_usage": figs["running"]}}
    (a / "summary.json").write_text(summary.model_copy(update={"server": server}).model_dump_json())
    own = RunSummary.model_validate_json((b / "summary.json").read_text())
    gaps = {"kv_cache_usage": "its server (llamacpp) exposes no kv_cache_usage"}
    (b / "summary.json").write_text(own.model_copy(update={"server_gaps": gaps}).model_dump_json())
    assert compare_runs(a, b).server_notes == ["B: no kv_cache_usage: its server (llamacpp) exposes no kv_cache_usage"]
