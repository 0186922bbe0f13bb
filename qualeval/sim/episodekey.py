"""The reference server's multi-turn answer key: BFCL episodes, each keyed by its turns' user prompts and the
functions offered at each turn, and where a request stands in one, read from its messages alone.

The server keeps no session: a request's history says which episode it belongs to (its first user message and
the tools offered), which turn (the user messages so far, a held-back turn's prompt among them) and which step
(the assistant messages since the last user message).
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qualeval.errors import QualevalWarning
from qualeval.sim.answerkey import KeyedCall, offered
from qualeval.sim.groundtruth import parameter_order, read_call

__all__ = ["EpisodeKey", "KeyedEpisode", "Position", "episode_entries", "position"]

_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


@dataclass(frozen=True, slots=True)
class KeyedEpisode:
    tag: str
    """A short digest of the episode: seeds its draws and names it in the reasoning the server writes."""
    prompts: tuple[str, ...]
    """Each turn's user prompt, normalised (a held-back turn's: the prompt the loop sends for it)."""
    offered: tuple[frozenset[str], ...]
    """The function names offered at each turn: those of turn 0, and those added at or before it (miss_func)."""
    calls: tuple[tuple[KeyedCall, ...], ...]
    """Each turn's ground-truth calls, in order."""


@dataclass(frozen=True, slots=True)
class Position:
    """Where a request stands: its turn, its step in that turn, the user prompts so far (normalised), and each
    earlier assistant message with the (turn, step) it answered."""

    turn: int
    step: int
    prompts: tuple[str, ...]
    earlier: tuple[tuple[int, int, dict[str, Any]], ...]


def position(messages: Sequence[Any]) -> Position | None:
    """The position a chat history is at; None when it has no user message. Consecutive user messages are one
    turn; system messages and tool results take no place."""
    prompts: list[list[str]] = []
    earlier: list[tuple[int, int, dict[str, Any]]] = []
    step, last = 0, ""
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if role == "user":
            if last != "user":
                prompts.append([])
                step = 0
            prompts[-1].append(str(message.get("content") or ""))
        elif role == "assistant" and prompts:
            earlier.append((len(prompts) - 1, step, message))
            step += 1
        if role in ("user", "assistant"):
            last = role
    if not prompts:
        return None
    return Position(len(prompts) - 1, step, tuple(_norm("\n".join(p)) for p in prompts), tuple(earlier))


class EpisodeKey:
    """Keyed episodes, found by their first prompt, then by the prompts and offered functions so far."""

    def __init__(self, episodes: Sequence[KeyedEpisode]) -> None:
        self.episodes = list(episodes)
        self._first: dict[str, list[KeyedEpisode]] = {}
        for episode in self.episodes:
            self._first.setdefault(episode.prompts[0], []).append(episode)
        _warn_clashes(self._first)

    def find(self, where: Position, tools: Any) -> KeyedEpisode | None:
        """The episode a request at `where` offering `tools` belongs to: one whose prompts so far are the
        request's, offering the same functions at this turn if one does; the last keyed wins a tie."""
        names = frozenset(offered(tools))
        fits = [
            e
            for e in self._first.get(where.prompts[0], ())
            if len(e.prompts) > where.turn and e.prompts[: where.turn + 1] == where.prompts
        ]
        same = [e for e in fits if e.offered[where.turn] == names]
        chosen = same or fits
        return chosen[-1] if chosen else None


def _offered_by_turn(spec: Any) -> tuple[frozenset[str], ...]:
    names = set(offered(spec.tools))
    added = {int(k): v for k, v in (spec.added or {}).items()}
    out = []
    for turn in range(len(spec.turns)):
        names |= set(offered(added.get(turn, ())))
        out.append(frozenset(names))
    return tuple(out)


def _prompt(turn: Sequence[Any]) -> str:
    return _norm("\n".join(str(m.get("content") or "") for m in turn if m.get("role") == "user"))


def keyed_episode(spec: Any) -> KeyedEpisode:
    """One EpisodeSpec (records.episodespec) as a keyed episode; raises InputError for a ground-truth string it
    cannot read."""
    tools = [*spec.tools, *(t for added in (spec.added or {}).values() for t in added)]
    order = parameter_order(tools)
    calls = tuple(tuple(read_call(text, order) for text in turn) for turn in spec.expected)
    prompts = tuple(_prompt(turn) for turn in spec.turns)
    names = _offered_by_turn(spec)
    text = repr((prompts, [sorted(n) for n in names], calls)).encode()
    return KeyedEpisode(hashlib.blake2b(text, digest_size=4).hexdigest(), prompts, names, calls)


def episode_entries(samples: Sequence[Any]) -> list[KeyedEpisode]:
    """The multi-turn samples of a task (those with an `episode`) as keyed episodes."""
    return [keyed_episode(s.episode) for s in samples if getattr(s, "episode", None) is not None]


def _warn_clashes(first: dict[str, list[KeyedEpisode]]) -> None:
    """Say once when episodes that nothing in a request tells apart (the same prompts and functions up to a turn)
    expect other calls at that turn: the last keyed is served. BFCL's long_context items ask what base items ask,
    and some expect other calls because their files hold other data."""
    clashes = 0
    for group in first.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                turns = min(len(a.prompts), len(b.prompts))
                same = [
                    t for t in range(turns) if a.prompts[: t + 1] == b.prompts[: t + 1] and a.offered[t] == b.offered[t]
                ]
                clashes += any(a.calls[t] != b.calls[t] for t in same)
    if clashes:
        warnings.warn(
            f"answer key: {clashes} pair(s) of episodes ask the same turns with the same functions and expect "
            "other calls; the last keyed is served (key base and long_context from separate servers)",
            QualevalWarning,
            stacklevel=3,
        )
