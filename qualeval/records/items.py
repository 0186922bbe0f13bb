"""items.jsonl of `qualeval score`: one judged line of responses produced elsewhere."""

from __future__ import annotations

from pydantic import BaseModel

from qualeval.records.record import Grade
from qualeval.records.statuses import Rung, Status

__all__ = ["OfflineItem"]


class OfflineItem(BaseModel):
    id: str
    status: Status
    extracted: str | None
    method: Rung
    """The extraction rung that produced the answer."""
    correct: bool | None
    """None where the line is in no accuracy: the endpoint failed (`error`), so there is no answer to judge."""
    gold: str
    naive_correct: bool | None = None
    rescue: str | None = None
    f1: float | None = None
    grade: Grade | None = None
    error: str | None = None
    """The endpoint's reason when the request failed (status `transport_error`, an OpenAI Batch line's error):
    the model never answered, so the item is counted apart and `correct` is None."""
