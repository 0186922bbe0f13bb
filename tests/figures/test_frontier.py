"""The frontier of a task's levels and quality under load, from hand-made records."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from qualeval.figures.accuracy import answered_cell
from qualeval.figures.frontier import answer_of, frontier, under_load
from qualeval.figures.speeds import speed
from qualeval.records import ConstraintRecord, Extraction, LevelReport, Record, Score, Timing, Usage


def _record(
    i: int, level: str, ok: bool, tokens: int, latency: float, *, status: str = "ok", warmup: bool = False
) -> Record:
    return Record(
        sample_id=f"t/{i}",
        task="t",
        level=level,
        warmup=warmup,
        request={},
        reasoning="",
        content="",
        reasoning_source="none",
        status=status,
        finish_reason="stop",
        usage=Usage(completion_tokens=tokens, reasoning_tokens=tokens - 10, answer_tokens=10),
        timing=Timing(ttft=5.0, first_content=latency / 2, end=latency),
        attempts=1,
        constraint=ConstraintRecord(mode="off"),
        extraction=Extraction(value=None, rung="none"),
        score=Score(correct=ok),
        gold="",
        meta={},
    )


def _level(label: str, right: int, n: int, tokens: int, latency: float) -> list[Record]:
    """n items at `label`, the first `right` of them right."""
    return [_record(i, label, i < right, tokens, latency) for i in range(n)]


def _levels(records: Sequence[Record]) -> dict[str, LevelReport]:
    """As qualeval.figures.summary builds them: per level in run order, accuracy and speed."""
    out = {}
    for label in dict.fromkeys(r.level for r in records):
        at = [r for r in records if r.level == label]
        cell, failed = answered_cell((r.sample_id, r.score.correct, r.status) for r in at)
        out[label] = LevelReport(accuracy=cell, speed=speed([r.timed() for r in at]), endpoint_errors=failed)
    return out


def _frontier(records: Sequence[Record], within: float = 0.01):  # type: ignore[no-untyped-def]
    return frontier(_levels(records), [r.timed() for r in records], [answer_of(r) for r in records], within)


def test_pareto_marks_the_levels_nothing_beats_on_accuracy_and_tokens_together() -> None:
    records = [
        *_level("max_tokens=256", 10, 40, 200, 900.0),
        *_level("max_tokens=512", 20, 40, 400, 800.0),  # more right for more tokens: efficient
        *_level("max_tokens=768", 18, 40, 600, 1200.0),  # less right than 512, and dearer: dominated
        *_level("max_tokens=1024", 30, 40, 900, 1500.0),
    ]
    result = _frontier(records)
    assert result is not None
    marks = {lv.level: (lv.efficient_tokens, lv.efficient_latency) for lv in result.levels}
    assert marks == {
        "max_tokens=256": (True, False),  # against latency, 512 is faster and more accurate
        "max_tokens=512": (True, True),
        "max_tokens=768": (False, False),
        "max_tokens=1024": (True, True),
    }
    first = result.levels[0]
    assert first.output_tokens is not None and first.output_tokens.mean == 200
    assert first.reasoning_tokens is not None and first.reasoning_tokens.p90 == 190
    assert first.latency_p50 == 900 and first.first_answer_p50 == 450 and first.reasoning_truncated == 0
    assert result.best == "max_tokens=1024" and result.smallest_within == "max_tokens=1024"


def test_equal_levels_are_both_efficient_and_a_level_with_nothing_answered_is_not_placed() -> None:
    failed = [_record(i, "effort=low", False, 50, 100.0, status="transport_error") for i in range(5)]
    records = [*_level("effort=high", 4, 5, 300, 500.0), *_level("effort=medium", 4, 5, 300, 500.0), *failed]
    records += _level("effort=none", 1, 5, 100, 200.0)
    result = _frontier(records)
    assert result is not None
    marks = {lv.level: lv.efficient_tokens for lv in result.levels}
    assert marks == {"effort=high": True, "effort=medium": True, "effort=low": None, "effort=none": True}


def test_the_smallest_budget_within_n_points_of_the_best() -> None:
    records = [
        *_level("max_tokens=256", 70, 100, 200, 100.0),
        *_level("max_tokens=512", 89, 100, 400, 200.0),
        *_level("max_tokens=1024", 90, 100, 800, 400.0),
    ]
    assert _frontier(records, within=0.01).smallest_within == "max_tokens=512"  # type: ignore[union-attr]
    assert _frontier(records, within=0.0).smallest_within == "max_tokens=1024"  # type: ignore[union-attr]
    assert _frontier(records, within=0.25).smallest_within == "max_tokens=256"  # type: ignore[union-attr]
    assert _frontier(records).best == "max_tokens=1024"  # type: ignore[union-attr]


def test_adjacent_levels_are_compared_on_the_same_items_with_mcnemar() -> None:
    low = _level("max_tokens=256", 5, 30, 200, 100.0)  # items 0-4 right
    high = [_record(i, "max_tokens=1024", i < 20, 800, 300.0) for i in range(30)]  # items 0-19 right
    result = _frontier([*low, *high])
    assert result is not None and result.levels[0].vs_previous is None
    step = result.levels[1].vs_previous
    assert step is not None and step.against == "max_tokens=256" and step.pairs == 30
    assert step.difference == pytest.approx(15 / 30)
    assert step.p == pytest.approx(2 / 2**15)  # 15 discordant pairs, all one way
    assert step.drop is False  # better, not worse


def test_cut_off_thinking_is_a_share_of_the_levels_answered_requests() -> None:
    cut = [_record(i, "max_tokens=64", False, 64, 50.0, status="reasoning_truncated") for i in range(3)]
    records = [*cut, *_level("max_tokens=64", 0, 4, 64, 50.0)[3:], *_level("max_tokens=512", 3, 4, 300, 200.0)]
    result = _frontier(records)
    assert result is not None and result.levels[0].reasoning_truncated == pytest.approx(3 / 4)


def test_no_frontier_when_every_level_spent_the_same_tokens() -> None:
    assert _frontier([*_level("c=1", 3, 5, 300, 100.0), *_level("c=4", 3, 5, 300, 150.0)]) is None
    assert _frontier(_level("c=1", 3, 5, 300, 100.0)) is None


def _answers(records: Sequence[Record]):  # type: ignore[no-untyped-def]
    return [answer_of(r) for r in records]


def test_a_significant_drop_under_load_is_flagged_against_the_first_level() -> None:
    steady = _level("c=1", 30, 40, 300, 100.0)
    same = _level("c=4", 29, 40, 300, 150.0)  # one item fewer right: noise
    worse = _level("c=16", 15, 40, 300, 400.0)  # items 15-29 flipped to wrong
    result = under_load(["c=1", "c=4", "c=16"], _answers([*steady, *same, *worse]))
    assert set(result) == {"c=4", "c=16"}
    assert result["c=4"].against == "c=1" and not result["c=4"].drop and result["c=4"].p == 1.0
    drop = result["c=16"]
    assert drop.drop and drop.against == "c=1" and drop.pairs == 40
    assert drop.difference == pytest.approx(-15 / 40) and drop.p == pytest.approx(2 / 2**15)


def test_the_warm_up_is_paired_as_its_accuracy_counts_it_and_no_answer_of_the_models_is() -> None:
    first = _level("rate=1", 10, 10, 300, 100.0)
    second = _level("rate=8", 10, 10, 300, 100.0)
    second[0] = _record(0, "rate=8", False, 300, 100.0, warmup=True)
    second[1] = _record(1, "rate=8", False, 0, 100.0, status="transport_error")
    result = under_load(["rate=1", "rate=8"], _answers([*first, *second]))
    assert result["rate=8"].pairs == 9 and result["rate=8"].difference == pytest.approx(-1 / 9)
    second[0] = _record(0, "rate=8", True, 300, 100.0, warmup=True)
    second[2] = _record(2, "rate=8", False, 0, 100.0, status="unknown_question")  # a reference server's refusal
    result = under_load(["rate=1", "rate=8"], _answers([*first, *second]))
    assert result["rate=8"].pairs == 8 and result["rate=8"].difference == 0


def test_load_is_read_against_the_first_level_of_the_same_budget_and_a_budget_sweep_has_none() -> None:
    labels = ["c=1 max_tokens=512", "c=4 max_tokens=512", "c=1 max_tokens=1024", "c=4 max_tokens=1024"]
    records = [r for label in labels for r in _level(label, 5, 10, 300, 100.0)]
    result = under_load(labels, _answers(records))
    assert {k: v.against for k, v in result.items()} == {
        "c=4 max_tokens=512": "c=1 max_tokens=512",
        "c=4 max_tokens=1024": "c=1 max_tokens=1024",
    }
    budgets = ["max_tokens=512", "effort=low", "thinking=off"]
    assert under_load(budgets, _answers([r for b in budgets for r in _level(b, 5, 10, 300, 100.0)])) == {}


def test_the_reports_and_the_terminal_show_the_frontier_and_warn_of_a_drop(capsys: pytest.CaptureFixture[str]) -> None:
    from qualeval.cli.frontier import print_frontier
    from qualeval.figures.speeds import linked
    from qualeval.records import RunSummary, TaskReport, TaskSummary
    from qualeval.report.frontier_sections import smallest_line
    from qualeval.report.html import html_report
    from qualeval.report.markdown import markdown_report

    labels = ["c=1 max_tokens=256", "c=8 max_tokens=256", "c=1 max_tokens=1024"]
    records = [*_level(labels[0], 30, 40, 200, 300.0), *_level(labels[1], 15, 40, 200, 900.0)]
    records += _level(labels[2], 36, 40, 800, 1200.0)
    levels = _levels(records)
    for label, against in under_load(labels, _answers(records)).items():
        levels[label].vs_first = against
    rows = [r.timed() for r in records]
    report = TaskReport(
        summary=TaskSummary(task="t", n=40, correct=27, accuracy=0.675, interval=(0.5, 0.8), accuracy_answered=0.675,
                            statuses={"ok": 120}, rungs={}),
        speed=speed(rows, throughput=False),
        levels=levels,
        frontier=frontier(levels, rows, _answers(records), 0.01),
        linked=linked(rows, None),
    )  # fmt: skip
    summary = RunSummary(
        model="m", base_url="u", simulated=False, qualeval_version="0", records=120, tasks={"t": report}
    )
    shown = markdown_report(summary)
    drop = "t @ c=8 max_tokens=256: accuracy fell 37.5 points against c=1 max_tokens=256 on 40 paired items"
    assert f"> **Accuracy fell under load.** {drop}" in shown
    assert "### t: accuracy against cost, by level" in shown and "### t: quality under load" in shown
    assert "| c=1 max_tokens=1024 | 90.0% |" in shown and "| c=8 max_tokens=256 | c=1 max_tokens=256 | 40 |" in shown
    wider = smallest_line(frontier(levels, rows, _answers(records), 0.2))  # type: ignore[arg-type]
    assert wider == (
        "the smallest budget within 20 points of the best (c=1 max_tokens=1024, 90.0%): c=1 max_tokens=256 "
        "(75.0%, 25% of the best's output tokens)"
    )
    assert "t: the smallest budget within 1 point of the best: c=1 max_tokens=1024 itself (90.0%)" in shown
    page = html_report(summary, records)
    assert 'id="frontier"' in page and 'id="quality-under-load"' in page and drop in page
    assert "accuracy against cost for t" in page  # the plot
    print_frontier(summary)
    out, err = capsys.readouterr()
    assert "t: accuracy against cost" in out and "tok, lat" in out
    assert f"warning: {drop}" in " ".join(err.split())


def test_where_budgets_cross_the_load_a_level_steps_up_from_the_one_before_at_its_load() -> None:
    labels = ["c=1 max_tokens=256", "c=1 max_tokens=1024", "c=4 max_tokens=256", "c=4 max_tokens=1024"]
    records = [r for i, label in enumerate(labels) for r in _level(label, 5, 10, 200 + 600 * (i % 2), 100.0 * i)]
    result = _frontier(records)
    assert result is not None
    before = {lv.level: lv.vs_previous.against if lv.vs_previous else None for lv in result.levels}
    assert before == {
        "c=1 max_tokens=256": None,
        "c=1 max_tokens=1024": "c=1 max_tokens=256",
        "c=4 max_tokens=256": None,
        "c=4 max_tokens=1024": "c=4 max_tokens=256",
    }


def test_a_level_is_compared_along_one_axis_only() -> None:
    labels = ["effort=low thinking=on", "effort=high thinking=on", "thinking=off"]
    crossed = ["max_tokens=512 effort=low", "max_tokens=512 effort=high", "max_tokens=2048 effort=low"]
    records = [r for i, label in enumerate(labels + crossed) for r in _level(label, 5, 10, 100 + 100 * i, 100.0)]
    result = _frontier(records)
    assert result is not None
    before = {lv.level: lv.vs_previous.against if lv.vs_previous else None for lv in result.levels}
    assert before == {
        "effort=low thinking=on": None,
        "effort=high thinking=on": "effort=low thinking=on",
        "thinking=off": None,  # no level before it differs from it on one axis only
        "max_tokens=512 effort=low": None,
        "max_tokens=512 effort=high": "max_tokens=512 effort=low",
        "max_tokens=2048 effort=low": "max_tokens=512 effort=low",  # not its run-order neighbour
    }


def test_the_step_from_the_level_before_is_the_difference_of_the_accuracies_shown() -> None:
    # item 0 is each level's warm-up: right at the larger budget only, and counted in both accuracies
    low = [_record(i, "max_tokens=256", 0 < i < 5, 200, 100.0, warmup=i == 0) for i in range(20)]
    high = [_record(i, "max_tokens=1024", i < 15, 800, 300.0, warmup=i == 0) for i in range(20)]
    result = _frontier([*low, *high])
    assert result is not None
    shown = result.levels[1].accuracy.accuracy - result.levels[0].accuracy.accuracy
    step = result.levels[1].vs_previous
    assert step is not None and step.pairs == 20 and step.difference == pytest.approx(shown)


def test_steps_are_said_in_points() -> None:
    from qualeval.report.frontier_sections import paired_text

    records = [*_level("max_tokens=256", 5, 20, 200, 100.0), *_level("max_tokens=1024", 15, 20, 800, 300.0)]
    result = _frontier(records)
    assert result is not None
    text = paired_text(result.levels[1].vs_previous)
    assert "+50.0 points" in text and "max_tokens=256" in text and "%" not in text


def test_no_budget_is_recommended_when_no_level_got_any_item_right() -> None:
    from qualeval.report.frontier_sections import smallest_line

    records = [*_level("max_tokens=5", 0, 10, 5, 50.0), *_level("max_tokens=64", 0, 10, 60, 300.0)]
    result = _frontier(records, within=0.05)
    assert result is not None and (result.best, result.smallest_within) == (None, None)  # not the cheapest of 0%s
    assert smallest_line(result) == "no budget recommended: no level got any item right"


def test_streaming_is_no_cost_axis_so_stream_levels_alone_have_no_frontier() -> None:
    from qualeval.figures.frontier import asked_differently, swept

    labels = ["stream=on", "stream=off"]
    records = [*_level("stream=on", 8, 10, 300, 100.0), *_level("stream=off", 7, 10, 200, 90.0)]
    assert _frontier(records) is None  # sampled lengths moved, but streaming is no budget to recommend
    assert swept(labels) == set() and asked_differently(labels)  # accuracy still per level: asked two ways
    assert under_load(labels, _answers(records)) == {}


def test_across_stream_levels_the_frontier_reads_the_budgets_asked_one_way() -> None:
    from qualeval.figures.frontier import swept

    labels = ["max_tokens=100 stream=on", "max_tokens=100 stream=off", "max_tokens=400 stream=on"]
    records = [*_level(labels[0], 5, 10, 100, 100.0), *_level(labels[1], 9, 10, 90, 90.0)]
    records += [*_level(labels[2], 9, 10, 400, 300.0), *_level("max_tokens=400 stream=off", 9, 10, 390, 290.0)]
    result = _frontier(records, within=0.01)
    assert result is not None and swept([*labels, "max_tokens=400 stream=off"]) == {"max_tokens"}
    assert [lv.level for lv in result.levels] == [labels[0], labels[2]]
    assert result.smallest_within == labels[2]  # never the unstreamed level as a "smaller budget"
    step = result.levels[1].vs_previous
    assert step is not None and step.against == labels[0]  # one budget step, asked the same way
    from qualeval.report.frontier_sections import per_level_note, smallest_line

    assert smallest_line(result).endswith("(read over the stream=on levels: streaming is no budget)")
    streamed = per_level_note(["stream=on", "stream=off"])
    assert "streamed or not" in streamed and "budget" not in streamed and "effort" not in streamed
    assert "an output budget; streamed or not" in per_level_note([*labels, "max_tokens=400 stream=off"])
