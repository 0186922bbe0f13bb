"""judge_episode: a multi-turn episode judged by BFCL's rules, from the calls the model made (so a run directory
re-scores offline): they are replayed on fresh instances of the API classes, and the ground truth is run beside
them on instances of its own.

After each turn whose ground truth has calls: the turn made at least one call (else
`empty_turn_model_response`); every instance's public attributes equal the ground truth's (else
`instance_state_mismatch`); the ground truth's results of that turn are among the model's results of all turns
so far, in any order, each matched once (else `execution_response_mismatch`). An episode that reached a turn's
step limit fails whatever it did (`force_terminated`). The episode's verdict is the first failing turn's; each
turn is also judged on its own (for accuracy by turn index), the instances carried on as the model left them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from qualeval.agent import ClassSource, Env, execute, open_env, run_call
from qualeval.records import EpisodeError, EpisodeSpec, EpisodeVerdict, ToolCall
from qualeval.tasks import parse_call

__all__ = ["judge_episode"]

Steps = Sequence[Sequence[ToolCall]]
"""One turn's steps, each the calls of one model response."""


@dataclass(slots=True)
class _Failure:
    error: EpisodeError
    message: str


@dataclass(slots=True)
class _Replay:
    model: Env
    truth: Env
    results: list[str] = field(default_factory=list)
    """The model's results over every turn so far."""


def _state_difference(replay: _Replay) -> str | None:
    """The first instance whose public attributes differ from the ground truth's, and the attributes that do."""
    for name, truth in replay.truth.instances.items():
        model = replay.model.instances[name]
        differ = [k for k, v in vars(truth).items() if not k.startswith("_") and getattr(model, k, None) != v]
        if differ:
            return f"{name}'s state differs from the ground truth's in {', '.join(differ)}"
    return None


def _missing(expected: list[str], got: list[str]) -> list[str]:
    """The expected results not among `got`, each result of `got` matching one expected result at most."""
    left = list(got)
    missing = []
    for result in expected:
        if result in left:
            left.remove(result)
        else:
            missing.append(result)
    return missing


def _turn(replay: _Replay, index: int, steps: Steps, expected: tuple[str, ...], where: str) -> _Failure | None:
    """Replay one turn (the model's calls, then the ground truth's) and judge it."""
    made = [step for step in steps if step]  # a response without a call is not a step of calls (BFCL drops it)
    for step in made:
        replay.results.extend(execute(replay.model, call) for call in step)
    truth = []
    for text in expected:
        name, args, kwargs = parse_call(text, f"{where}: turn {index}")
        truth.append(run_call(replay.truth, name, kwargs, args))
    if not expected:
        return None
    if not made:
        return _Failure("empty_turn_model_response", f"turn {index}: no call where the ground truth has calls")
    if (difference := _state_difference(replay)) is not None:
        return _Failure("instance_state_mismatch", f"turn {index}: {difference}")
    if missing := _missing(truth, replay.results):
        shown = "; ".join(m[:80] for m in missing[:2])
        return _Failure(
            "execution_response_mismatch",
            f"turn {index}: {len(missing)} of the ground truth's results not among the model's so far ({shown})",
        )
    return None


def judge_episode(
    spec: EpisodeSpec, calls_by_turn: Sequence[Steps], source: ClassSource, forced_quit: bool = False, where: str = ""
) -> EpisodeVerdict:
    """BFCL's verdict on an episode: `calls_by_turn[t][s]` holds the calls of step s of turn t (the turns the
    episode reached); `forced_quit`: its last turn reached the step limit without an answer."""
    replay = _Replay(open_env(spec, source), open_env(spec, source))
    turns: list[bool | None] = []
    first: tuple[int, _Failure] | None = None
    judged = len(calls_by_turn) - 1 if forced_quit else len(calls_by_turn)
    for index in range(min(judged, len(spec.turns))):
        expected = spec.expected[index] if index < len(spec.expected) else ()
        failure = _turn(replay, index, calls_by_turn[index], expected, where or "ground truth")
        turns.append(None if not expected else failure is None)
        if failure is not None and first is None:
            first = (index, failure)
    if forced_quit and calls_by_turn:  # BFCL fails a forced quit as such, whatever the turns before it did
        turns.append(False)
        quit_at = len(calls_by_turn) - 1
        steps = len(calls_by_turn[-1])
        first = (quit_at, _Failure("force_terminated", f"turn {quit_at}: no answer after {steps} steps"))
    turns += [None] * (len(spec.turns) - len(turns))
    if first is None and len(calls_by_turn) < len(spec.turns):
        return _verdict(None, turns, f"episode unfinished: {len(calls_by_turn)} of {len(spec.turns)} turns")
    return _verdict(first, turns)


def _verdict(first: tuple[int, _Failure] | None, turns: list[bool | None], unfinished: str = "") -> EpisodeVerdict:
    if unfinished:
        return EpisodeVerdict(correct=False, message=unfinished, turns=tuple(turns))
    if first is None:
        return EpisodeVerdict(correct=True, turns=tuple(turns))
    index, failure = first
    return EpisodeVerdict(
        correct=False, failed_turn=index, error_type=failure.error, message=failure.message, turns=tuple(turns)
    )
