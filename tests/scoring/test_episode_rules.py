"""judge_episode's rules on a fake API class (no wheel needed): the state check reads public attributes only,
results match as an unordered multiset over all turns so far, and empty or unfinished episodes never count."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualeval.agent import ClassSource, bfcl_classes
from qualeval.errors import InputError
from qualeval.records import EpisodeSpec, ToolCall
from qualeval.scoring import judge_episode
from tests.agent.fake_env import counter_spec

USER = ({"role": "user", "content": "count"},)


@pytest.fixture
def source(tmp_path: Path) -> ClassSource:
    return bfcl_classes(*counter_spec(tmp_path))


def _spec(*expected: tuple[str, ...]) -> EpisodeSpec:
    return EpisodeSpec(turns=(USER,) * len(expected), classes=("Counter",), expected=expected)


def _call(name: str, arguments: str = "{}") -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def test_the_same_result_expected_twice_needs_it_twice(source: ClassSource) -> None:
    spec = _spec(("label()", "label()"))
    assert judge_episode(spec, [[[_call("label"), _call("label")]]], source).correct
    verdict = judge_episode(spec, [[[_call("label")]]], source)
    assert (verdict.error_type, verdict.failed_turn) == ("execution_response_mismatch", 0)
    assert "1 of the ground truth's results" in verdict.message and "count is 5" in verdict.message


def test_results_of_earlier_turns_count_and_order_does_not(source: ClassSource) -> None:
    spec = _spec(("add(by=2)",), ("label()",))
    steps = [[[_call("label"), _call("add", '{"by": 2}')]], [[_call("add", '{"by": 0}')]]]
    assert not judge_episode(spec, steps, source).correct  # the label came before the add: "count is 5"
    steps = [[[_call("add", '{"by": 2}'), _call("label")]], [[_call("add", '{"by": 0}')]]]
    assert judge_episode(spec, steps, source).correct  # "count is 7" was given a turn early


def test_private_attributes_are_not_state_and_positional_ground_truth_runs(source: ClassSource) -> None:
    spec = _spec(("add(3)",))
    verdict = judge_episode(spec, [[[_call("add", '{"by": 3}')]]], source)
    assert verdict.correct and verdict.turns == (True,)
    verdict = judge_episode(spec, [[[_call("add", '{"by": 4}')]]], source)
    assert verdict.error_type == "instance_state_mismatch" and verdict.message == (
        "turn 0: Counter's state differs from the ground truth's in count"
    )


def test_steps_without_calls_are_not_steps_of_calls(source: ClassSource) -> None:
    spec = _spec(("label()",), ())
    verdict = judge_episode(spec, [[[], []], [[_call("label")]]], source)
    assert (verdict.correct, verdict.error_type, verdict.turns) == (False, "empty_turn_model_response", (False, None))


def test_a_forced_quit_wins_over_an_earlier_failure(source: ClassSource) -> None:
    spec = _spec(("label()",), ("label()",))
    verdict = judge_episode(spec, [[[]], [[_call("add")]] * 3], source, forced_quit=True)
    assert (verdict.failed_turn, verdict.error_type, verdict.turns) == (1, "force_terminated", (False, False))
    assert verdict.message == "turn 1: no answer after 3 steps"


def test_a_ground_truth_that_is_not_literal_is_refused_naming_it(source: ClassSource) -> None:
    spec = _spec(("add(by=__import__('os').getpid())",))
    with pytest.raises(InputError, match=r"item 7: turn 0: .*argument by is not a literal"):
        judge_episode(spec, [[[_call("add")]]], source, where="item 7")
