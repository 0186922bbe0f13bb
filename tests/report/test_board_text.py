"""What the board's pages say, apart from the browser: settings as a person reads them, which differences are
beyond noise and in which direction, board.md's key and labels, and the Pareto plots' front and labels."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from pydantic import JsonValue

from qualeval.figures import board_runs
from qualeval.records import Board, ConfigFigures, SpeedRatio
from qualeval.report import board_html, board_markdown
from qualeval.report.board_pages import beyond_line, setting_text, tone
from qualeval.report.plots import ParetoPoint, _front, pareto
from tests.figures.test_board import flags, write_run


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("temperature", None, "server default"),
        ("max_tokens", [], "server default"),
        ("sampling.top_p", None, "server default"),
        ("limit", None, "not set"),
        ("max_tokens", [2048], "2048"),
        ("concurrency", [1, 16], "1, 16"),
        ("temperature", 0.0, "0"),
        ("temperature", 0.7, "0.7"),
        ("stream", False, "off"),
        ("thinking", True, "on"),
        ("base_url", "http://h:8000/v1", "http://h:8000/v1"),
    ],
)
def test_settings_read_as_a_person_reads_them(key: str, value: JsonValue, shown: str) -> None:
    assert setting_text(key, value) == shown


def _board(rerun: bool) -> Board:
    return Board(baseline="A", rerun="again" if rerun else None, alpha=0.05, correction="holm", runs=[], tasks={})


def _config(difference: float | None, within: bool | None, **speed: SpeedRatio) -> ConfigFigures:
    return ConfigFigures.model_construct(difference=difference, within_noise=within, speed=speed)


def test_beyond_noise_is_the_shared_reading_for_accuracy_and_the_rerun_spread_for_speed() -> None:
    """Accuracy is coloured by the config's `within_noise`, the reading compare and gate make (figures.noise
    read_noise, tests/figures/test_one_reading.py), never by a test of the page's own."""
    board = _board(rerun=True)
    assert tone(board, _config(-0.15, False), "accuracy") == "worse"
    assert tone(board, _config(0.15, False), "accuracy") == "better"
    assert tone(board, _config(-0.15, True), "accuracy") == "within"  # e.g. no larger than the rerun moved
    assert tone(board, _config(None, None), "accuracy") == "untested"
    slower = SpeedRatio(ratio=1.3, spread=1.1, within_spread=False, within_noise=False)
    quicker = SpeedRatio(ratio=0.7, spread=1.1, within_spread=False, within_noise=False)
    # a longer wait is worse, more tokens a second better: the direction is the figure's
    assert tone(board, _config(0.0, True, ttft_p50=slower), "ttft_p50") == "worse"
    assert tone(board, _config(0.0, True, latency_p50=quicker), "latency_p50") == "better"
    assert tone(board, _config(0.0, True, output_tps=slower), "output_tps") == "better"
    assert tone(board, _config(0.0, True, output_tps=quicker), "output_tps") == "worse"
    noisy = SpeedRatio(ratio=1.3, spread=1.4, within_spread=True, within_noise=True)
    assert tone(board, _config(0.0, True, ttft_p50=noisy), "ttft_p50") == "within"
    unread = SpeedRatio(ratio=1.3)  # no interval (fewer than two pairs): not read
    assert tone(_board(rerun=False), _config(0.0, True, ttft_p50=unread), "ttft_p50") == "untested"
    cached = SpeedRatio(ratio=0.2, low=0.1, high=0.3, not_comparable="cached", reading="not comparable (cached): …")
    assert tone(board, _config(0.0, True, ttft_p50=cached), "ttft_p50") == "untested"


def test_board_md_has_the_key_and_names_configs_by_label(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", flags(60, set(range(10))), config={"max_tokens": []})
    worse = write_run(tmp_path / "worse", flags(60, set(range(25))), config={"max_tokens": [512]})
    board = board_runs([base, worse], labels=["full", None])
    page = board_markdown(board)
    assert "| **full** (baseline) | max_tokens: server default | `" in page
    assert f"| **A** | max_tokens: 512 | `{worse}` |" in page
    assert "| full | 83.3% [" in page and "| A | 58.3% [" in page and "max_tokens" not in page.split("## t")[1]
    line = beyond_line(board, board.tasks["t"])
    held = "speed not held against a rerun of the baseline"
    assert line == f"Beyond noise against full ({held}): A: accuracy -25.0 pts."
    assert line in page


def _texts(uri: str) -> list[str]:
    svg = base64.b64decode(uri.split(",", 1)[1]).decode()
    return [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)]


def _point(label: str, x: float, accuracy: float, efficient: bool) -> ParetoPoint:
    return ParetoPoint(label, x, accuracy, accuracy - 0.1, accuracy + 0.1, efficient, label == "A")


def test_the_front_steps_along_the_edge_of_what_the_efficient_configs_dominate() -> None:
    points = [_point("A", 30, 0.7, False), _point("B", 35, 0.73, True), _point("C", 41, 0.58, True)]
    # higher tok/s is better: in from the left at B's accuracy, down at B to C's, across, down at C to the floor
    assert _front(points, True, 20, 45, 0.4) == ([20, 35, 35, 41, 41], [0.73, 0.73, 0.58, 0.58, 0.4])
    quick = [_point("E", 4300, 0.65, True), _point("D", 5250, 0.73, True), _point("A", 7100, 0.73, False)]
    # lower latency is better: up from the floor at E, across to D, up, then out to the right edge
    assert _front(quick, False, 4000, 7700, 0.4) == ([4300, 4300, 5250, 5250, 7700], [0.4, 0.65, 0.65, 0.73, 0.73])


def test_every_point_is_labelled_and_the_front_drawn() -> None:
    points = [
        _point("A", 25.8, 0.733, False),
        _point("fp16", 29.8, 0.717, False),
        _point("B", 35.1, 0.733, True),
        _point("C", 41.3, 0.583, True),
        _point("D", 25.1, 0.70, False),
    ]
    uri = pareto(points, "output tokens per second (tok/s)", "t: accuracy against output tok/s", higher_better=True)
    texts = _texts(uri)
    assert all(label in texts for label in ("A", "fp16", "B", "C", "D")), texts
    assert "output tokens per second (tok/s)" in texts and "accuracy (95% interval)" in texts
    svg = base64.b64decode(uri.split(",", 1)[1]).decode()
    assert "#d9822b" in svg and "Pareto front" in texts
    # two configs at one point share one label, rather than print over each other
    same = pareto([_point("A", 30, 0.7, True), _point("B", 30, 0.7, True)], "x", "t", higher_better=True)
    assert "A,B" in _texts(same)


def test_a_workload_board_shows_no_accuracy_columns_and_a_key_of_folders(tmp_path: Path) -> None:
    """Synthetic prompts have no right answer: no difference, tie or plot of accuracy; and runs whose manifests
    differ in nothing are told apart by folder in the key."""
    one = write_run(tmp_path / "one", flags(10, set()), task="w", scored=False)
    two = write_run(tmp_path / "two", flags(10, set()), task="w", scored=False)
    page = board_html(board_runs([one, two]))
    assert "no setting differs (the folders do)" in page and f"<code>{two}</code>" in page
    figures = page.split('<table class="figures">', 1)[1].split("</table>", 1)[0]
    assert "not scored" in figures and "Δ accuracy" not in figures and "tied with best" not in figures
    assert "<img" not in page


def test_a_config_without_a_speed_figure_is_named_under_the_plot_it_is_missing_from() -> None:
    from qualeval.records import BoardTask, Cell, Distribution
    from qualeval.report.board_web import _plots

    def config(tps: float | None, efficient: bool) -> ConfigFigures:
        return ConfigFigures.model_construct(
            accuracy=Cell(n=20, correct=15, accuracy=0.75, low=0.53, high=0.89),
            output_tps=tps,
            first_answer=Distribution(n=20, mean=400, p50=400, p90=500, p99=600),
            pareto_throughput=efficient if tps is not None else None,
            pareto_first_answer=True,
        )

    task = BoardTask(scored=True, best="A", configs={"A": config(230.0, True), "B": config(None, False)})
    (through, _, absent), (quick, _, none) = _plots(_board(rerun=False), task, "t")
    assert absent == "Not on this plot (no accuracy or no output tok/s): B." and none == ""
    assert through.endswith("Pareto front through A") and quick.endswith("Pareto front through A, B")
