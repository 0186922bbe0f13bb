"""An agent's episode: the API classes a multi-turn item runs against, and the model driven through it.

classes     bfcl_classes: the task's API classes, loaded in-process from its wheel's source (ClassSource)
env         open_env, execute, state: one episode's instances, a call executed on them, their public state
loop        run_episode: each user turn sent, the model's calls executed and their results sent back until it
            answers without one, the reasoning passed back as the mode says; a killed episode replayed
tally       the episode's record and figures from its steps
"""

from qualeval.agent.classes import ClassSource, bfcl_classes
from qualeval.agent.env import Env, execute, open_env, run_call, state
from qualeval.agent.loop import Episode, EpisodeLike, Stamp, assistant_message, run_episode
from qualeval.agent.tally import EpisodeVerdictLike, cut_step, episode_record, episode_timing, usage_total

__all__ = [
    "ClassSource",
    "Env",
    "Episode",
    "EpisodeLike",
    "EpisodeVerdictLike",
    "Stamp",
    "assistant_message",
    "bfcl_classes",
    "cut_step",
    "episode_record",
    "episode_timing",
    "execute",
    "open_env",
    "run_call",
    "run_episode",
    "state",
    "usage_total",
]
