"""A tool-call task's figures from records built by hand, so that every figure is known: trigger agreement, schema
validity, wire statuses, what leaked markup would have scored, the calls' timing, stream parity; an endpoint error
in none of them, and an empty denominator as no figure (None), never 0 or 100%."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from qualeval.figures.toolfigures import canonical_calls, parity, tool_figures, tool_view, tools_by_task
from qualeval.records import (
    CallTiming,
    ConstraintRecord,
    Extraction,
    Record,
    Score,
    Timing,
    ToolAnswer,
    ToolCall,
    ToolsRecord,
    ToolStatus,
    Trigger,
    Usage,
)


def tool_record(
    i: int,
    *,
    correct: bool | None = True,
    trigger: Trigger = "call",
    calls: Sequence[ToolCall] = (),
    status: ToolStatus = "ok",
    schema_valid: bool | None = None,
    recovered: Sequence[ToolCall] = (),
    recovered_correct: bool | None = None,
    timing: CallTiming | None = None,
    stream: bool | None = True,
    task: str = "bfcl",
    level: str = "",
    warmup: bool = False,
    tools: bool = True,
) -> Record:
    """One response to tool item `i`; `correct` None: an endpoint error (no answer of the model's)."""
    failed = correct is None
    return Record(
        sample_id=f"{task}/test/{i}",
        task=task,
        level=level,
        warmup=warmup,
        request={"stream": stream} if stream is not None else {},
        reasoning="",
        content="",
        reasoning_source="none",
        status="transport_error" if failed else "ok",
        finish_reason=None if failed else ("tool_calls" if calls else "stop"),
        usage=Usage(),
        timing=Timing(),
        attempts=1,
        constraint=ConstraintRecord(mode="off"),
        extraction=Extraction(value=None, rung="none"),
        score=Score(correct=None if failed else correct),
        gold="",
        meta={},
        error="connection refused" if failed else None,
        tools=ToolsRecord(
            expected=ToolAnswer(trigger=trigger),
            calls=tuple(calls),
            status=status,
            schema_valid=schema_valid,
            recovered=tuple(recovered),
            recovered_correct=recovered_correct,
            timing=timing or CallTiming(),
        )
        if tools
        else None,
    )


CALL = ToolCall(name="get_weather", arguments='{"city": "Paris", "unit": "c"}')


def test_trigger_agreement_counts_a_call_where_expected_and_none_where_not() -> None:
    records = [
        tool_record(0, calls=[CALL], schema_valid=True),  # expected, made
        tool_record(1, calls=[CALL], schema_valid=True, trigger="any"),  # expected (any call), made
        tool_record(2, correct=False),  # expected, missed
        tool_record(3, trigger="none", correct=True),  # not expected, held back
        tool_record(4, trigger="none", calls=[CALL], schema_valid=True, correct=False),  # not expected, made
        # a call left as markup in the content is no call made: on the no-call side
        tool_record(5, correct=False, status="markup_in_content", recovered=[CALL], recovered_correct=True),
    ]
    t = tool_figures([v for r in records if (v := tool_view(r)) is not None]).trigger
    assert (t.called_expected, t.called_unexpected, t.missed, t.held_back) == (2, 1, 2, 1)
    assert t.precision == pytest.approx(2 / 3) and t.recall == pytest.approx(2 / 4)
    assert t.f1 == pytest.approx(4 / (4 + 1 + 2)) and t.no_call_agreement == pytest.approx(1 / 2)


def test_an_empty_side_has_no_figure_rather_than_zero_or_all() -> None:
    # irrelevance only, nothing called: no precision, recall or F1 (nothing on the calling side), no schema share
    f = tools_by_task([tool_record(i, trigger="none") for i in range(3)])["bfcl"]
    assert f.trigger.precision is None and f.trigger.recall is None and f.trigger.f1 is None
    assert f.trigger.no_call_agreement == 1.0
    assert f.schema_valid.n == 0 and f.schema_valid.share is None
    assert f.timing.first_delta is None and f.parity is None
    # every call expected: no agreement on the no-call side to give
    g = tools_by_task([tool_record(0, correct=False)])["bfcl"]
    assert g.trigger.no_call_agreement is None and g.trigger.recall == 0.0 and g.trigger.f1 == 0.0
    assert g.trigger.precision is None


def test_an_endpoint_error_is_in_no_figure_and_counted_apart() -> None:
    records = [tool_record(0, calls=[CALL], schema_valid=True), tool_record(1, correct=None)]
    f = tools_by_task(records)["bfcl"]
    assert f.responses == 1 and f.items == 1 and f.unanswered == 1
    assert f.statuses == {"ok": 1} and f.trigger.missed == 0 and f.recovery.wrong == 0
    assert f.accuracy is not None and f.accuracy.n == 1 and f.accuracy.accuracy == 1.0
    # nothing answered at all: every figure absent, the errors counted
    none = tools_by_task([tool_record(0, correct=None), tool_record(1, correct=None)])["bfcl"]
    assert none.responses == 0 and none.unanswered == 2 and none.accuracy is None
    assert none.trigger.f1 is None and none.schema_valid.share is None and none.statuses == {}


def test_accuracy_is_the_tasks_own_cell_with_its_interval() -> None:
    records = [tool_record(i, calls=[CALL], schema_valid=True, correct=i < 3) for i in range(4)]
    from qualeval.figures.accuracy import cell_of

    f = tools_by_task(records)["bfcl"]
    assert f.accuracy == cell_of([True, True, True, False])
    # an item answered twice (streamed and not) counts once, scored by the mean of its responses
    twice = [tool_record(0, correct=True), tool_record(0, correct=False, stream=None)]
    g = tools_by_task(twice)["bfcl"]
    assert g.accuracy is not None and g.accuracy.n == 1 and g.accuracy.correct == 0.5 and g.responses == 2


def test_schema_validity_is_over_the_responses_with_a_call() -> None:
    records = [
        tool_record(0, calls=[CALL], schema_valid=True),
        tool_record(1, calls=[CALL], schema_valid=False, status="args_schema_violation", correct=False),
        tool_record(2, correct=False),  # no call: not in the share
    ]
    f = tools_by_task(records)["bfcl"]
    assert (f.schema_valid.hits, f.schema_valid.n, f.schema_valid.share) == (1, 2, 0.5)
    assert f.statuses == {"args_schema_violation": 1, "ok": 2}


def test_would_have_been_right_stands_beside_the_models_own_wrong_and_not_in_accuracy() -> None:
    records = [
        tool_record(0, correct=False, status="call_in_reasoning", recovered=[CALL], recovered_correct=True),
        tool_record(1, correct=False, status="markup_in_content", recovered=[CALL], recovered_correct=False),
        tool_record(2, correct=False),  # the model's own: no call at all
        tool_record(3, calls=[CALL], schema_valid=True),
    ]
    f = tools_by_task(records)["bfcl"]
    r = f.recovery
    assert (r.wrong, r.recovered, r.would_be_right, r.model_wrong) == (3, 2, 1, 2)
    assert r.items == ["bfcl/test/0"]
    assert f.accuracy is not None and f.accuracy.accuracy == 0.25  # never added


def test_timing_is_of_streamed_responses_with_a_call_delta_in_milliseconds() -> None:
    timings = [
        CallTiming(first_delta=0.1 * (i + 1), complete=0.2 * (i + 1), fragments=i + 2, reasoning_tokens_before=10 * i)
        for i in range(3)
    ]
    records = [tool_record(i, calls=[CALL], schema_valid=True, timing=t) for i, t in enumerate(timings)]
    records += [
        tool_record(3, calls=[CALL], schema_valid=True, stream=None),  # not streamed: no delta to time
        tool_record(4, calls=[CALL], schema_valid=True, timing=timings[0], warmup=True),  # a warm-up: left out
        tool_record(5, correct=False, timing=CallTiming()),  # streamed, no call delta
    ]
    t = tools_by_task(records)["bfcl"].timing
    assert t.first_delta is not None and t.first_delta.n == 3 and t.first_delta.p50 == pytest.approx(200.0)
    assert t.complete is not None and t.complete.p50 == pytest.approx(400.0)
    assert t.fragments is not None and t.fragments.mean == pytest.approx(3.0)
    assert t.reasoning_tokens_before is not None and t.reasoning_tokens_before.p50 == pytest.approx(10.0)


def test_canonical_calls_compare_parsed_arguments_in_any_order() -> None:
    a = [CALL, ToolCall(name="f", arguments='{"x": 1}', id="call_1", index=1)]
    moved = CALL.model_copy(update={"arguments": '{"unit":"c","city":"Paris"}'})
    b = [ToolCall(name="f", arguments='{ "x":1 }'), moved]
    assert canonical_calls(a) == canonical_calls(b)
    assert canonical_calls([ToolCall(name="f", arguments='{"x": 2}')]) != canonical_calls([a[1]])
    # arguments that are not JSON compare as received
    text = [canonical_calls([ToolCall(name="f", arguments=f"x={x}")]) for x in (1, 2)]
    assert text[0] != text[1] and text[0] == ("f(text:x=1)",)


def test_parity_pairs_streamed_with_non_streamed_and_names_the_discordant() -> None:
    other = ToolCall(name="get_weather", arguments='{"city": "Lyon"}')
    records = [
        # agree: the same call, its arguments written differently
        tool_record(0, calls=[CALL], schema_valid=True),
        tool_record(0, calls=[ToolCall(name="get_weather", arguments='{"unit":"c","city":"Paris"}')], stream=None),
        # streaming leaked the call into the content: calls and verdict differ
        tool_record(1, correct=False, status="markup_in_content"),
        tool_record(1, calls=[CALL], schema_valid=True, stream=None),
        # both wrong, with different calls: the verdict agrees, the calls do not
        tool_record(2, calls=[other], correct=False, schema_valid=True),
        tool_record(2, calls=[CALL], correct=False, schema_valid=True, stream=False),
        # one side an endpoint error: out of the pairs, counted apart
        tool_record(3, calls=[CALL]),
        tool_record(3, correct=None, stream=None),
        # sent one way only: no pair
        tool_record(4, calls=[CALL]),
    ]
    p = parity(records)["bfcl"]
    assert (p.pairs, p.agree, p.unanswered) == (3, 1, 1) and p.share == pytest.approx(1 / 3)
    assert [(d.item, d.calls_agree, d.verdicts_agree) for d in p.discordant] == [
        ("bfcl/test/1", False, False),
        ("bfcl/test/2", False, True),
    ]
    assert (p.discordant[0].streamed, p.discordant[0].not_streamed) == ("markup_in_content", "ok")


def test_parity_is_absent_without_pairs_and_empty_when_every_pair_failed() -> None:
    assert parity([tool_record(i, calls=[CALL]) for i in range(3)]) == {}
    failed = parity([tool_record(0, correct=None), tool_record(0, stream=None)])["bfcl"]
    assert failed.pairs == 0 and failed.share is None and failed.unanswered == 1


def test_records_of_no_tool_item_have_no_tool_figures() -> None:
    assert tools_by_task([tool_record(0, tools=False)]) == {}
    assert tool_view(tool_record(0, tools=False)) is None


def test_parity_pairs_the_two_levels_a_stream_parity_run_sends() -> None:
    # --stream-parity sends each item at `stream=on` and `stream=off`: those two levels are one pair per item
    records = [
        tool_record(0, calls=[CALL], schema_valid=True).model_copy(update={"level": "c=2 stream=on"}),
        tool_record(0, correct=False, stream=None).model_copy(update={"level": "c=2 stream=off"}),
        tool_record(1, calls=[CALL], schema_valid=True).model_copy(update={"level": "c=4 stream=on"}),
        tool_record(1, calls=[CALL], stream=None).model_copy(update={"level": "c=2 stream=off"}),
    ]
    p = parity(records)["bfcl"]
    assert (p.pairs, p.agree) == (1, 0) and [d.item.split(" @ ")[0] for d in p.discordant] == ["bfcl/test/0"]
