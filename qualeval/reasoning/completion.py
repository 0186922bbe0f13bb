"""The split's output: what the model said, its thinking apart from its final answer. It is the split's, not the
wire's, so that the split needs nothing of the wire (the wire calls the split, never the other way round)."""

from __future__ import annotations

from pydantic import BaseModel

from qualeval.records import ReasoningSource, Status

__all__ = ["Completion"]


class Completion(BaseModel):
    """What the model said, split into its thinking and its final answer."""

    reasoning: str = ""
    content: str = ""
    reasoning_source: ReasoningSource = "none"
    reasoning_closed: bool = False
    status: Status = "ok"
