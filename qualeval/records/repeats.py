"""summary.json and compare.json: what repeats between requests that sent the same thing. PromptCache: how much
of the prompts the server took from its prefix cache (a rerun of the same prompts is served from the cache the
first run filled, and its TTFT is then no measure of prompt processing). Identical: whether identical inputs at
temperature 0 gave identical outputs, between the levels of a load sweep or between two configurations
(batching that changes answers is a serving defect). Paired: one level's verdicts against another's, item by
item, which carries the identical outputs of a load sweep."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["Identical", "Paired", "PromptCache"]


class PromptCache(BaseModel):
    """Over the requests whose server reported its cached prompt tokens; warm-ups and endpoint errors excluded."""

    requests: int
    """Requests that reported a count (0 cached included)."""
    prompt_tokens: int
    cached_tokens: int
    share: float
    """cached_tokens / prompt_tokens: 0.95 is 95% of the prompt tokens served from the cache."""


class Identical(BaseModel):
    """Greedy (temperature 0) answers to the same prompt, side by side: against the first level of the load sweep,
    or A against B."""

    pairs: int
    """Pairs of answered requests that sent the same messages."""
    identical: int
    """Pairs whose outputs (reasoning, content and tool calls) are byte-identical."""
    flipped: list[str] = []
    """Items (sample ids) whose outputs differ on identical input and whose verdict flipped with them."""
    judged_apart: list[str] = []
    """Items whose outputs are byte-identical but whose verdicts differ: the two sides were scored differently (a
    rescore, another qualeval version), not served differently."""


class Paired(BaseModel):
    """One level's answers against another level's on the same items (sample id and repeat), a right-or-wrong of
    each; warm-up requests, and requests the endpoint failed at either level, are in no pair
    (qualeval.figures.frontier)."""

    against: str
    """The level compared with."""
    pairs: int
    difference: float
    """This level's share right minus the other's, over the pairs: it can differ from the levels' `accuracy`,
    which counts warm-up answers too."""
    p: float
    """McNemar's exact two-sided p on the discordant pairs (1.0 with none)."""
    drop: bool
    """Significantly worse than `against`: p < 0.05 and the difference below zero."""
    identical: Identical | None = None
    """At temperature 0 only: the pairs that sent the same messages, and how many answers came back alike."""
