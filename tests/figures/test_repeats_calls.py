"""Identical greedy answers are identical in every part the model put out: the same text with other tool calls
is another answer, served differently, never "judged differently"."""

from __future__ import annotations

from qualeval.figures.noise import run_noise
from qualeval.figures.repeats import identical_pairs, said_of
from qualeval.records import ConstraintRecord, Extraction, Record, Score, Timing, ToolCall, ToolsRecord, Usage


def _record(arguments: str, correct: bool) -> Record:
    return Record(
        sample_id="tools/test/1",
        task="tools",
        request={"temperature": 0},
        reasoning="I will add them.",
        content="",
        reasoning_source="none",
        status="ok",
        finish_reason="tool_calls",
        usage=Usage(),
        timing=Timing(),
        attempts=1,
        constraint=ConstraintRecord(mode="off"),
        extraction=Extraction(value=None, rung="calls"),
        score=Score(correct=correct),
        gold="",
        meta={},
        tools=ToolsRecord(calls=(ToolCall(name="add", arguments=arguments),)),
    )


def test_answers_whose_calls_differ_are_not_identical() -> None:
    whole, cut = _record('{"x": 4, "y": 5}', True), _record('{"x": 4', False)
    found = identical_pairs([(said_of(whole), said_of(cut))])
    assert found is not None and found.identical == 0
    assert found.flipped == ["tools/test/1"] and found.judged_apart == []
    again = identical_pairs([(said_of(whole), said_of(_record('{"x": 4, "y": 5}', False)))])
    assert again is not None and again.identical == 1 and again.judged_apart == ["tools/test/1"]


def test_the_noise_floor_counts_calls_in_byte_identical_outputs() -> None:
    noise = run_noise({("a",): _record('{"x": 4, "y": 5}', True)}, {("a",): _record('{"x": 4', False)}, str)
    assert noise["('a',)"].identical == 0.0
