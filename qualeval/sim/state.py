"""What one reference server knows across requests: its config, flavour and answer key, the requests it has
seen, the slots it decodes in, and what it observed."""

from __future__ import annotations

import asyncio
import secrets
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from qualeval.errors import InputError
from qualeval.sim.answerkey import AnswerKey, KeyEntry, load_entries, sample_entries
from qualeval.sim.config import SimConfig
from qualeval.sim.episodekey import EpisodeKey, KeyedEpisode, episode_entries
from qualeval.sim.flavours import Flavour
from qualeval.sim.observe import Observed

__all__ = ["ServerState", "answer_keys", "new_state"]


@dataclass(slots=True)
class ServerState:
    config: SimConfig
    flavour: Flavour
    key: AnswerKey | None
    observed: Observed
    slots: asyncio.Semaphore | None
    """Admission to decoding, when `max_running` limits it."""
    episodes: EpisodeKey | None = None
    """The multi-turn episodes keyed (their samples' `episode`), found by their history."""
    in_flight: int = 0
    requests: int = 0
    seen: Counter[bytes] = field(default_factory=Counter)
    """How often each exact request body arrived: a retry of a faulted request may succeed."""
    memory: dict[str, Any] = field(default_factory=dict)
    """What a flavour with hooks keeps between requests (llama.cpp's prompt cache)."""
    unknown: int = 0
    """Requests whose question was not in the answer key (each answered with a refusal, and said so)."""
    nonce: str = field(default_factory=lambda: secrets.token_hex(8))
    """Drawn when the server starts: a sampled request without a `seed` draws on it, so that a rerun against a
    fresh server differs as it would on a real one instead of replaying the last server's draws."""


def answer_keys(config: SimConfig) -> tuple[AnswerKey | None, EpisodeKey | None]:
    """The answer key (`config.answers` and the single-turn samples of `config.tasks`) and the episode key (the
    tasks' multi-turn samples); None for one with no entries."""
    entries: list[KeyEntry] = load_entries(config.answers) if config.answers else []
    episodes: list[KeyedEpisode] = []
    if config.tasks:
        from qualeval.tasks import build_samples, load_task  # the task machinery only when tasks are asked for

        for ref in config.tasks:
            task = load_task(ref)
            data = config.task_data
            if isinstance(data, dict):
                data = data.get(task.name) or data.get(task.name.split(":", 1)[0]) or data.get("*")
            # a reference program (HumanEval's gold) is sent as the answer itself, not as "The answer is ..."
            verbatim = "code" if task.spec.scorer.kind == "code" else None
            samples = build_samples(task, data=data)
            single = [s for s in samples if getattr(s, "episode", None) is None]
            entries += sample_entries(single, verbatim)
            episodes += episode_entries(samples)
    # each built once: a clash in a key is said once
    return (AnswerKey(entries) if entries else None), (EpisodeKey(episodes) if episodes else None)


def new_state(config: SimConfig, flavours: Mapping[str, Flavour]) -> ServerState:
    """A fresh server's state; raises InputError for a flavour not in `flavours` or a log it cannot write."""
    if config.flavour not in flavours:
        raise InputError(f"unknown flavour '{config.flavour}': expected one of {', '.join(flavours)}")
    flavour = flavours[config.flavour]
    key, episodes = answer_keys(config)
    observed = Observed(kv_tokens=config.kv_tokens)
    if config.log is not None:
        try:
            observed.log = config.log.open("ab")
        except OSError as exc:
            raise InputError(f"{config.log}: cannot write the server log ({exc.strerror})") from None
    slots = asyncio.Semaphore(config.max_running) if config.max_running > 0 else None
    return ServerState(config, flavour, key, observed, slots, episodes)
