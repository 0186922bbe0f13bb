"""What an episode's record holds: the passback applied and why, its figures per turn (for accuracy by turn index,
steps, calls, tokens, times), and the steps a resume replays."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualeval.agent import episode_record, episode_timing, usage_total
from qualeval.errors import InputError
from qualeval.figures.episodefigures import episode_figures
from qualeval.records import (
    EpisodeSpec,
    EpisodeVerdict,
    PassbackCheck,
    ProbeResult,
    Record,
    StepRecord,
    Timing,
    ToolCall,
    Usage,
    episode_steps,
)
from qualeval.run import score_file
from qualeval.run.episodic import calls_of, resolve_passback, unfingerprinted
from qualeval.tasks import Sample

CALL = ToolCall(name="ls", arguments="{}", id="c")


def step(turn: int, index: int, calls: int = 0, status: str = "ok", end: float = 100.0) -> StepRecord:
    return StepRecord.model_validate(
        {
            "sample_id": "s",
            "task": "t",
            "turn": turn,
            "step": index,
            "passback": "reasoning",
            "calls": [CALL.model_dump()] * calls,
            "status": status,
            "usage": {"reasoning_tokens": 10, "answer_tokens": 2},
            "timing": {"ttft": 5.0, "end": end},
            "first_call_ms": 40.0 if calls else None,
        }
    )


def probed(*verdicts: tuple[str, str]) -> ProbeResult:
    checks = [PassbackCheck(sent=sent, verdict=verdict) for sent, verdict in verdicts]  # type: ignore[arg-type]
    return ProbeResult(base_url="http://x/v1", model="m", simulated=False, seconds=1.0, passback=checks)


def test_auto_sends_what_the_probe_found_consumed_and_says_so_when_it_could_not_tell() -> None:
    assert resolve_passback("inline", None) == ("inline", "")
    found = probed(("none", "baseline"), ("reasoning", "consumed"), ("reasoning_content", "dropped"))
    applied, note = resolve_passback("auto", found)
    assert applied == "reasoning" and "the probe found the server consumes it" in note
    applied, note = resolve_passback("auto", None)  # no probe (--no-probe, or a probe that never checked)
    assert applied == "reasoning_content" and "did not tell" in note


def test_the_episode_record_holds_its_figures_per_turn() -> None:
    steps = [step(0, 0, calls=2), step(0, 1), step(1, 0, calls=1, end=50.0), step(1, 1, end=50.0)]
    verdict = EpisodeVerdict(correct=False, failed_turn=1, error_type="instance_state_mismatch", turns=(True, False))
    record = episode_record(steps, passback="reasoning", asked="auto", note="why", verdict=verdict)
    assert (record.passback, record.asked, record.note, record.ended) == ("reasoning", "auto", "why", "done")
    assert (record.steps, record.calls, record.reasoning_tokens, record.answer_tokens) == (4, 3, 40, 8)
    assert [t.passed for t in record.turns] == [True, False] and record.failed_turn == 1
    assert [t.steps for t in record.turns] == [2, 2] and [t.calls for t in record.turns] == [2, 1]
    assert record.turns[1].step_ms == (50.0, 50.0) and record.ms == 300.0
    assert record.turns[0].first_call_ms == (40.0, None)
    assert usage_total(steps) == Usage(reasoning_tokens=40, answer_tokens=8)
    assert episode_timing(steps) == Timing(ttft=5.0, end=300.0)
    assert calls_of(steps) == [[(CALL, CALL), ()], [(CALL,), ()]]


def test_an_episode_stopped_at_the_endpoint_has_no_verdict() -> None:
    record = episode_record([step(0, 0, status="transport_error")], passback="none", asked="none")
    assert record.ended == "endpoint_error" and record.failed_turn is None and record.turns[0].passed is None


def test_a_resume_replays_each_step_once_and_stops_at_one_that_failed() -> None:
    written = [step(0, 0, calls=1), step(0, 1, status="transport_error"), step(0, 1, calls=1), step(0, 2)]
    assert [(s.step, s.status) for s in episode_steps(written)] == [(0, "ok"), (1, "ok"), (2, "ok")]
    assert [s.step for s in episode_steps(written[:2])] == [0]


def test_a_record_without_an_episode_is_written_as_before() -> None:
    row = {
        "sample_id": "s", "task": "t", "request": {}, "reasoning": "", "content": "4", "reasoning_source": "none",
        "status": "ok", "finish_reason": "stop", "usage": {}, "timing": {}, "attempts": 1,
        "constraint": {"mode": "off"}, "extraction": {"value": "4", "rung": "last"}, "score": {"correct": True},
        "gold": "4", "meta": {},
    }  # fmt: skip
    record = Record.model_validate(row)
    assert "episode" not in record.model_dump(mode="json", exclude_none=False) or record.episode is None
    assert '"episode"' not in record.model_dump_json()


def test_qualeval_score_refuses_a_task_of_episodes_in_one_line(tmp_path: Path) -> None:
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"id": "bfcl_multi_turn/base/test/multi_turn_base_0", "response": "hi"}\n')
    with pytest.raises(InputError, match=r"its items are episodes .* qualeval score cannot judge"):
        score_file("bfcl_multi_turn:base", responses)


def test_accuracy_by_turn_index_counts_the_turns_judged_and_leaves_out_endpoint_errors() -> None:
    passed = EpisodeVerdict(correct=True, turns=(True, None, True))
    failed = EpisodeVerdict(correct=False, failed_turn=0, error_type="instance_state_mismatch", turns=(False, None))
    three = [step(0, 0, calls=1), step(0, 1), step(1, 0), step(2, 0)]
    episodes = [
        episode_record(three, passback="reasoning", asked="reasoning", verdict=passed),
        episode_record(three[:3], passback="reasoning", asked="reasoning", verdict=failed),
        episode_record([step(0, 0, status="transport_error")], passback="reasoning", asked="reasoning"),
    ]
    figures = episode_figures(episodes)
    assert figures.episodes == 3 and figures.ended == {"done": 2, "endpoint_error": 1}
    assert [(t.turn, t.n, t.right) for t in figures.by_turn] == [(0, 2, 1), (2, 1, 1)]
    assert figures.error_types == {"instance_state_mismatch": 1}
    assert figures.steps is not None and figures.steps.n == 2 and figures.steps.mean == 3.5
    assert figures.first_call_ms is not None and figures.first_call_ms.n == 2


def test_the_passback_is_in_the_fingerprint_only_of_a_run_of_episodes() -> None:
    plain = Sample(id="q", task="t", messages=(), gold="4")
    episode = plain.model_copy(update={"episode": EpisodeSpec(turns=())})
    assert unfingerprinted([(None, [plain])], {"out"}) == {"out", "reasoning_passback"}  # type: ignore[list-item]
    assert unfingerprinted([(None, [plain, episode])], {"out"}) == {"out"}  # type: ignore[list-item]
