"""Identical greedy answers of episodes are told by all their steps: the history each step sent and what the model
said at each, never only the first request and the last answer."""

from __future__ import annotations

from qualeval.agent import episode_record
from qualeval.figures.repeats import identical_pairs, said_of
from qualeval.records import ConstraintRecord, Extraction, Record, Score, StepRecord, Timing, ToolCall, Usage


def step(index: int, sent: str, call: str, reasoning: str = "think", call_id: str = "c1") -> StepRecord:
    return StepRecord.model_validate(
        {
            "sample_id": "s",
            "task": "t",
            "turn": 0,
            "step": index,
            "passback": "reasoning",
            "sent": [{"role": "tool", "content": sent, "tool_call_id": call_id}],
            "calls": [ToolCall(name="ls", arguments=call, id=call_id).model_dump()] if call else [],
            "reasoning": reasoning,
            "content": "done" if not call else "",
        }
    )


def record(steps: list[StepRecord], correct: bool = True) -> Record:
    return Record(
        sample_id="s",
        task="t",
        request={"temperature": 0},
        reasoning=steps[-1].reasoning,
        content=steps[-1].content,
        reasoning_source="none",
        status="ok",
        finish_reason="stop",
        usage=Usage(),
        timing=Timing(),
        attempts=1,
        constraint=ConstraintRecord(mode="off"),
        extraction=Extraction(value=None, rung="calls"),
        score=Score(correct=correct),
        gold="",
        meta={},
        episode=episode_record(steps, passback="reasoning", asked="reasoning"),
    )


def test_episodes_whose_middle_answers_differ_are_answered_differently() -> None:
    a = record([step(0, "q", '{"a": 1}'), step(1, "r", '{"b": 1}'), step(2, "r2", "")])
    b = record([step(0, "q", '{"a": 1}'), step(1, "r", '{"b": 2}'), step(2, "r3", "")], correct=False)
    found = identical_pairs([(said_of(a), said_of(b))])
    # the same input up to step 1, whose answers differ: served differently, not judged differently
    assert found is not None and found.pairs == 1 and found.identical == 0
    assert found.flipped == ["s"] and found.judged_apart == []


def test_episodes_sent_apart_before_any_answer_differs_are_no_pair() -> None:
    # another passback: step 1 sends the same answer back in another way
    a = record([step(0, "q", '{"a": 1}'), step(1, "r with reasoning", "")])
    b = record([step(0, "q", '{"a": 1}'), step(1, "r", "")])
    assert identical_pairs([(said_of(a), said_of(b))]) is None


def test_the_same_episode_under_other_call_ids_is_identical() -> None:
    a = record([step(0, "q", '{"a": 1}', call_id="x1"), step(1, "r", "", call_id="x1")])
    b = record([step(0, "q", '{"a": 1}', call_id="y9"), step(1, "r", "", call_id="y9")])
    found = identical_pairs([(said_of(a), said_of(b))])
    assert found is not None and found.identical == 1


def test_an_episode_record_without_step_digests_is_left_out() -> None:
    a = record([step(0, "q", '{"a": 1}'), step(1, "r", "")])
    assert a.episode is not None
    old = a.model_copy(update={"episode": a.episode.model_copy(update={"digests": None})})
    assert said_of(old) is None
    assert said_of(Record.model_validate_json(old.model_dump_json())) is None
