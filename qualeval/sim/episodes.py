"""A keyed multi-turn episode's answer to one request: the turn's ground-truth calls, one a step in order (state
changes such as `cd` come before what depends on them) or all at once, then a short text that ends the turn.

Everything is a function of the seed, the episode and the request's position in it (qualeval.sim.episodekey), so
the server can tell from a history whether the reasoning it wrote earlier came back. Faults of an episode:
`needs_reasoning` (from turn 1 on, a turn whose earlier turns' reasoning did not come back is answered wrong at
its rate), `tool_result_ignored` (the server drops `tool` messages, so the model issues the same call again until
the client's step limit ends the turn).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from qualeval.sim.answerkey import KeyedCall, KeyEntry
from qualeval.sim.behaviour import PlannedReply, cut_reply, seeded, tokenize
from qualeval.sim.episodekey import EpisodeKey, KeyedEpisode, Position, position
from qualeval.sim.passback import read_back
from qualeval.sim.toolreply import ToolAsk, ToolReply, tool_fault, tool_reply, wrong_calls

__all__ = [
    "EpisodeAsk",
    "answer_episode",
    "episode_reply",
    "find_episode",
    "handed_back",
    "reasoning_head",
    "step_calls",
    "turn_calls",
]

_SPACE = re.compile(r"\s+")
_FILLER = (
    " The last result tells me where things stand.",
    " I keep the order: what changes the state comes first.",
    " Then I check the arguments against what the user asked.",
)


@dataclass(frozen=True, slots=True)
class EpisodeAsk:
    """What shapes an episode's answer besides the key: the server's settings and the request's."""

    seed: int
    accuracy: float
    faults: dict[str, float]
    directives: dict[str, str]
    reads_back: str | None
    """The field of an earlier assistant message whose reasoning the server takes in (Flavour.reads_back)."""
    thinking: bool
    variant: object
    at_once: bool = False
    """All of a turn's calls in its first step (SimConfig.calls_at_once), else one a step."""
    reasoning_tokens: int = 60


def find_episode(key: EpisodeKey | None, body: dict[str, Any]) -> tuple[KeyedEpisode, Position] | None:
    """The keyed episode a request offering tools belongs to, and where it stands in it; None: not one."""
    if key is None or not body.get("tools"):
        return None
    where = position(body["messages"])
    episode = None if where is None else key.find(where, body["tools"])
    return None if episode is None or where is None else (episode, where)


def reasoning_head(tag: str, turn: int, step: int) -> str:
    """The first sentence of the reasoning the server writes at a step: a function of the step alone, so that a
    later request can check it came back."""
    return f"Step {step} of turn {turn} in task {tag}."


def _rate(ask: EpisodeAsk, name: str) -> float:
    return 1.0 if ask.directives.get("fault") == name else ask.faults.get(name, 0.0)


def handed_back(message: dict[str, Any], field: str | None) -> str:
    """The reasoning an earlier assistant message hands the model on a server that reads `field` back: that
    field's text, and the content, which every server takes in (reasoning inline there, as `<think>...</think>`
    or a Harmony channel, counts)."""
    content = message.get("content")
    return "\n".join([read_back(message, field), content if isinstance(content, str) else ""])


def _carried(episode: KeyedEpisode, where: Position, field: str | None) -> bool:
    """Whether every assistant message of the earlier turns hands back the reasoning the server wrote for it."""
    for turn, step, message in where.earlier:
        if turn < where.turn:
            head = _SPACE.sub(" ", reasoning_head(episode.tag, turn, step))
            if head not in _SPACE.sub(" ", handed_back(message, field)):
                return False
    return True


def _wrong_turn(episode: KeyedEpisode, where: Position, ask: EpisodeAsk) -> bool:
    outcome = ask.directives.get("outcome")
    if outcome in ("correct", "wrong"):
        return outcome == "wrong"
    if seeded(ask.seed, "episode-turn", episode.tag, where.turn, ask.variant).random() >= ask.accuracy:
        return True
    rate = _rate(ask, "needs_reasoning")
    if not rate or where.turn == 0 or not ask.thinking or _carried(episode, where, ask.reads_back):
        return False
    return seeded(ask.seed, "passback", episode.tag, where.turn, ask.variant).random() < rate


def turn_calls(episode: KeyedEpisode, where: Position, ask: EpisodeAsk) -> tuple[KeyedCall, ...]:
    """The turn's calls as the model makes them: the key's, or with one of them wrong (the same one at every step
    of the turn)."""
    if where.turn >= len(episode.calls):
        return ()
    calls = list(episode.calls[where.turn])
    if calls and _wrong_turn(episode, where, ask):
        rng = seeded(ask.seed, "episode-wrong", episode.tag, where.turn, ask.variant)
        n = rng.randrange(len(calls))
        calls[n] = wrong_calls([calls[n]], rng)[0]
    return tuple(calls)


def step_calls(episode: KeyedEpisode, where: Position, ask: EpisodeAsk) -> tuple[KeyedCall, ...]:
    """The calls of this step; () ends the turn with text. When the server ignores tool results, the model never
    sees one and asks again what it asked first."""
    calls = turn_calls(episode, where, ask)
    rate = _rate(ask, "tool_result_ignored")
    ignored = bool(rate) and seeded(ask.seed, "ignored", episode.tag).random() < rate
    if ask.at_once:
        return calls if where.step == 0 or ignored else ()
    step = 0 if ignored else where.step
    return calls[step : step + 1]


def _reasoning(episode: KeyedEpisode, where: Position, calls: tuple[KeyedCall, ...], wanted: int) -> list[str]:
    plan = f" Next I call {', '.join(c.name for c in calls)}." if calls else " Nothing is left to call; I answer."
    text = reasoning_head(episode.tag, where.turn, where.step) + plan
    n = 0
    while len(tokenize(text)) < wanted:
        text += _FILLER[n % len(_FILLER)]
        n += 1
    return tokenize("\n" + text + "\n")


def _closing(episode: KeyedEpisode, where: Position) -> str:
    expected = episode.calls[where.turn] if where.turn < len(episode.calls) else ()
    if not expected:
        return "I cannot do that with the functions I have, or without more details. What should I use?"
    return "Done: " + ", ".join(dict.fromkeys(c.name for c in expected)) + "."


def episode_reply(
    found: tuple[KeyedEpisode, Position],
    ask: EpisodeAsk,
    tools: ToolAsk,
    *,
    max_tokens: int | None,
    request_id: str,
) -> tuple[PlannedReply, ToolReply | None]:
    """The reply at the request's position: the reasoning, then the step's calls (broken as a tool fault says),
    or the text that ends the turn."""
    episode, where = found
    calls = step_calls(episode, where, ask)
    gen = PlannedReply(thinking=ask.thinking)
    if ask.thinking:
        wanted = int(ask.directives.get("reasoning", 0)) or ask.reasoning_tokens
        gen.reasoning = _reasoning(episode, where, calls, wanted)
    if not calls or ask.directives.get("outcome") == "empty":
        if ask.directives.get("outcome") != "empty":
            gen.answer = tokenize(("\n\n" if gen.reasoning else "") + _closing(episode, where))
        if max_tokens is not None:
            cut_reply(gen, max_tokens)
        return gen, None
    if max_tokens is not None:
        cut_reply(gen, max_tokens)
    step = f"{episode.tag}|{where.turn}|{where.step}"
    entry = KeyEntry(question=step, answer="", draws=step, calls=calls)
    tools = dataclasses.replace(tools, fault=tool_fault(ask.faults, ask.seed, ask.directives, entry))
    reply = tool_reply(
        gen,
        entry,
        tools,
        accuracy=1.0,
        outcome="correct",  # the turn's mistakes are made above, once a turn
        max_tokens=max_tokens,
        variant=ask.variant,
        seed=ask.seed,
        request_id=request_id,
    )
    return gen, reply


def answer_episode(
    key: EpisodeKey | None,
    body: dict[str, Any],
    ask: EpisodeAsk,
    tools: ToolAsk,
    *,
    max_tokens: int | None,
    request_id: str,
) -> tuple[PlannedReply, ToolReply | None] | None:
    """The reply to a request of a keyed episode (episode_reply); None when the request is not one."""
    found = find_episode(key, body)
    if found is None:
        return None
    return episode_reply(found, ask, tools, max_tokens=max_tokens, request_id=request_id)
