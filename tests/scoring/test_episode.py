"""judge_episode: BFCL's multi-turn rules, on the wheel's own items and API classes. The ground truth sent back as
the model's calls scores right on every item; each rule, broken once, scores wrong with BFCL's error type."""

from __future__ import annotations

import pytest

from qualeval.records import EpisodeSpec, ToolCall
from qualeval.scoring import judge_episode
from tests.agent.bfcl_episodes import CATEGORIES, as_call, classes, needs_wheel, sample, samples, truth_steps


def _episode(item_id: str) -> EpisodeSpec:
    episode = sample(item_id).episode
    assert episode is not None
    return episode


@needs_wheel
@pytest.mark.parametrize("per_call", [False, True], ids=["one_step_a_turn", "one_call_a_step"])
@pytest.mark.parametrize("category", CATEGORIES)
def test_the_ground_truth_as_the_models_calls_scores_right_on_every_item(category: str, per_call: bool) -> None:
    source = classes()
    wrong = []
    for item in samples(category):
        episode = item.episode
        assert episode is not None
        verdict = judge_episode(episode, truth_steps(episode, source, per_call), source)
        if not verdict.correct:
            wrong.append(f"{item.id}: {verdict.error_type} {verdict.message}")
        assert verdict.turns == tuple(True if calls else None for calls in episode.expected)
    assert not wrong, "\n".join(wrong[:5])


@needs_wheel
def test_a_turn_without_calls_where_calls_are_expected_is_an_empty_turn() -> None:
    episode, source = _episode("multi_turn_base_0"), classes()
    steps = truth_steps(episode, source)
    steps[2] = [[]]  # an answer without a call
    verdict = judge_episode(episode, steps, source)
    assert (verdict.correct, verdict.failed_turn, verdict.error_type) == (False, 2, "empty_turn_model_response")
    assert verdict.turns[:3] == (True, True, False)


@needs_wheel
def test_a_wrong_argument_that_changes_the_state_is_a_state_mismatch() -> None:
    episode, source = _episode("multi_turn_base_0"), classes()
    steps = truth_steps(episode, source)
    steps[0][0][1] = ToolCall(name="mkdir", arguments='{"dir_name": "tmp"}')
    verdict = judge_episode(episode, steps, source)
    assert (verdict.failed_turn, verdict.error_type) == (0, "instance_state_mismatch")
    assert "GorillaFileSystem" in verdict.message


@needs_wheel
def test_a_dropped_call_whose_result_matters_is_an_execution_response_mismatch() -> None:
    episode, source = _episode("multi_turn_base_0"), classes()
    steps = truth_steps(episode, source)
    assert steps[1][0][1].name == "grep"  # it reads, changes nothing: only its result tells
    del steps[1][0][1]
    verdict = judge_episode(episode, steps, source)
    assert (verdict.failed_turn, verdict.error_type) == (1, "execution_response_mismatch")


@needs_wheel
def test_a_result_from_an_earlier_turn_counts_once_and_order_does_not_matter() -> None:
    episode, source = _episode("multi_turn_base_0"), classes()
    steps = truth_steps(episode, source)
    steps[0] = [list(reversed(steps[0][0][:2])) + steps[0][0][2:]]  # mkdir before cd: a different state
    assert judge_episode(episode, steps, source).error_type == "instance_state_mismatch"
    steps = truth_steps(episode, source)
    [cd, grep] = steps[1][0]
    steps[0][0] += [cd, grep, ToolCall(name="cd", arguments='{"folder": ".."}')]  # the grep a turn early
    steps[1] = [[cd]]
    assert judge_episode(episode, steps, source).correct  # its result counts for turn 1: all turns so far
    steps = truth_steps(episode, source)
    steps[0][0] += [cd, grep, ToolCall(name="cd", arguments='{"folder": ".."}')]
    steps[3][0].append(grep)  # extra results do no harm
    assert judge_episode(episode, steps, source).correct
    steps = truth_steps(episode, source)
    steps[1] = [
        [steps[1][0][0]],
        [as_call(episode, source, "grep(file_name='final_report.pdf',pattern='budget analysis')")],
    ]
    assert judge_episode(episode, steps, source).correct  # spread over two steps


@needs_wheel
def test_a_forced_quit_fails_the_episode_at_its_turn() -> None:
    episode, source = _episode("multi_turn_base_0"), classes()
    steps = truth_steps(episode, source)[:2]
    steps[1] = steps[1] + [[ToolCall(name="pwd", arguments="{}")]] * 18
    verdict = judge_episode(episode, steps, source, forced_quit=True)
    assert (verdict.correct, verdict.failed_turn, verdict.error_type) == (False, 1, "force_terminated")
    assert verdict.turns == (True, False, None, None)


@needs_wheel
def test_an_unfinished_episode_is_never_right_and_unreached_turns_are_none() -> None:
    episode, source = _episode("multi_turn_base_0"), classes()
    verdict = judge_episode(episode, truth_steps(episode, source)[:2], source)
    assert not verdict.correct and verdict.failed_turn is None and "unfinished" in verdict.message
    assert verdict.turns == (True, True, None, None)


@needs_wheel
def test_each_turn_is_judged_on_its_own_after_the_first_failure() -> None:
    episode, source = _episode("multi_turn_base_1"), classes()
    steps = truth_steps(episode, source)
    steps[0] = [[]]  # ls(a=True) left out: it changes nothing, so the later turns still pass
    verdict = judge_episode(episode, steps, source)
    assert (verdict.failed_turn, verdict.error_type) == (0, "empty_turn_model_response")
    assert verdict.turns == (False, True, True, True)


@needs_wheel
def test_a_held_back_functions_turn_is_judged_as_bfcl_judges_it() -> None:
    episode, source = _episode("multi_turn_miss_func_0"), classes()
    assert episode.expected[2] == ()  # asked while the function is missing: nothing expected, nothing judged
    steps = truth_steps(episode, source)
    assert judge_episode(episode, steps, source).turns == (True, True, None, True, True)
    steps[2] = [[ToolCall(name="pwd", arguments="{}")]]  # a call there is executed, and does no harm here
    assert judge_episode(episode, steps, source).correct
    steps[2] = [[as_call(episode, source, "sort('final_report.pdf')")]]  # the held-back function a turn early
    steps[3] = [[]]
    verdict = judge_episode(episode, steps, source)
    assert (verdict.failed_turn, verdict.error_type) == (3, "empty_turn_model_response")
