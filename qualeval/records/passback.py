"""What the probe found a server to do with an earlier turn's reasoning sent back (qualeval.run.probepassback):
the same second turn sent with the reasoning under `reasoning`, under `reasoning_content`, inline as
`<think>...</think>` in the content, and not at all; `usage.prompt_tokens` against the turn sent without it says
which the server consumed and which it dropped without a word, and a 4xx which it rejected."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

__all__ = ["PASSBACK_FIELDS", "Passback", "PassbackCheck", "PassbackSent", "PassbackVerdict"]

Passback = Literal["reasoning", "reasoning_content", "inline", "none"]
"""Where earlier assistant turns carry their reasoning back: a field, inline in the content, or not at all."""
PassbackSent = Literal["none", "reasoning", "reasoning_content", "inline"]
PASSBACK_FIELDS: tuple[PassbackSent, ...] = ("none", "reasoning", "reasoning_content", "inline")
"""The probe's variants, the baseline (`none`) first."""
PassbackVerdict = Literal["baseline", "consumed", "dropped", "rejected", "inconclusive"]
"""`baseline`: the turn sent without the reasoning, which the others are counted against; `consumed`: the prompt
grew by about the reasoning's size (or the server takes the turn only with it); `dropped`: it did not grow, so the
server dropped the reasoning silently; `rejected`: the server refused the request (HTTP 4xx), an endpoint error;
`inconclusive`: no count to compare (the request failed otherwise, no usage, or the baseline had none)."""


class PassbackCheck(BaseModel):
    """One variant of the second turn as the probe sent it, and what the server's prompt count said."""

    sent: PassbackSent
    verdict: PassbackVerdict
    prompt_tokens: int | None = None
    """usage.prompt_tokens of the reply; None: none came."""
    added: int | None = None
    """Prompt tokens over the baseline's; None: no baseline count, or none for this variant."""
    detail: str = ""

    def line(self) -> str:
        """One line: what was sent, and what the server did with it."""
        said = _SAID.get(self.verdict, self.verdict)
        return f"passback {self.sent}: {said}" + (f" ({self.detail})" if self.detail else "")


_SAID = {
    "baseline": "baseline, no reasoning sent",
    "dropped": "dropped silently",
    "rejected": "rejected, an endpoint error",
}
