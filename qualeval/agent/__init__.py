"""An agent's episode (issue 34): the loop that sends each user turn, executes the model's calls and sends their
results back until it answers without one (loop), and the episode's figures from its steps (tally).
"""

from qualeval.agent.loop import Episode, EpisodeLike, Stamp, assistant_message, run_episode
from qualeval.agent.tally import EpisodeVerdictLike, episode_record, episode_timing, usage_total

__all__ = [
    "Episode",
    "EpisodeLike",
    "EpisodeVerdictLike",
    "Stamp",
    "assistant_message",
    "episode_record",
    "episode_timing",
    "run_episode",
    "usage_total",
]
