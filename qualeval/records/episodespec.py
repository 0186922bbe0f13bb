"""A multi-turn item (an agent's episode, BFCL v4 multi-turn) as a Sample carries it, and the verdict on one.

EpisodeSpec is data only: each turn's user messages, the tools offered and those added at a later turn, the
API classes the episode runs against and their initial state, and BFCL's ground-truth calls per turn as
published (call strings, parsed with `ast` where they are used, never evaluated). EpisodeVerdict is BFCL's
verdict on an episode, with each turn's own pass for accuracy by turn index."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EPISODE_ERRORS", "EpisodeError", "EpisodeSpec", "EpisodeVerdict"]

EpisodeError = Literal[
    "",
    "empty_turn_model_response",
    "instance_state_mismatch",
    "execution_response_mismatch",
    "force_terminated",
]
"""Why an episode failed, in BFCL's words ("" when it passed):
- `empty_turn_model_response`: a turn whose ground truth has calls got none;
- `instance_state_mismatch`: after a turn, an API instance's public state differs from the ground truth's;
- `execution_response_mismatch`: the ground truth's results at a turn are not among the model's (unordered);
- `force_terminated`: a turn reached its step limit without an answer."""

EPISODE_ERRORS: tuple[EpisodeError, ...] = (
    "empty_turn_model_response",
    "instance_state_mismatch",
    "execution_response_mismatch",
    "force_terminated",
)


class EpisodeSpec(BaseModel):
    """What a multi-turn item needs to be run and scored, as BFCL publishes it."""

    model_config = ConfigDict(frozen=True)

    turns: tuple[tuple[dict[str, str], ...], ...]
    """Each turn's user messages ({"role", "content"}); a turn whose function was held back carries BFCL's
    prompt that says new functions are offered."""
    tools: tuple[dict[str, Any], ...] = ()
    """OpenAI function tools offered from turn 0."""
    added: dict[int, tuple[dict[str, Any], ...]] = Field(default_factory=dict)
    """Turn index -> tools added from that turn on (miss_func's held-back functions)."""
    classes: tuple[str, ...] = ()
    """The API classes the episode runs against (BFCL's involved_classes)."""
    initial_config: dict[str, Any] = Field(default_factory=dict)
    """Each class's initial state, by class name (BFCL's initial_config)."""
    long_context: bool = False
    """Load the classes' long-context scenarios (BFCL's long_context category)."""
    expected: tuple[tuple[str, ...], ...] = ()
    """BFCL's ground-truth call strings per turn, as published (`cd(folder='document')`)."""
    max_steps: int = 20
    """At most this many model responses a turn; reaching it fails the episode (forced quit)."""

    def tools_at(self, turn: int) -> tuple[dict[str, Any], ...]:
        """The tools offered at `turn`: the initial ones and every one added at or before it."""
        out = list(self.tools)
        for at in sorted(self.added):
            if at <= turn:
                out.extend(self.added[at])
        return tuple(out)


class EpisodeVerdict(BaseModel):
    """BFCL's verdict on an episode, and each turn's own pass."""

    model_config = ConfigDict(frozen=True)

    correct: bool
    failed_turn: int | None = None
    """The first turn that failed (None: none did)."""
    error_type: EpisodeError = ""
    message: str = ""
    turns: tuple[bool | None, ...] = ()
    """Each turn judged on its own (None: a turn whose ground truth is empty, or one never reached)."""
