"""A figure's distribution over requests (summary.json, compare.json, board.json): its own module so that the
tool-call figures (toolfigures.py) and the task's report (summary.py) can both hold it."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["Distribution"]


class Distribution(BaseModel):
    n: int
    mean: float
    p50: float
    p90: float
    p99: float
