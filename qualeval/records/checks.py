"""Checks declared with a value's type, so that they travel with it: ClientConfig's options hand them on through
`client_option` (to RunConfig and the probe's options), and a workload's prompts take the same ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator

__all__ = ["AtLeast0", "AtLeast1", "Positive"]


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError(f"must be positive, got {value}")
    return value


def _at_least(low: int) -> Callable[[int], int]:
    def check(value: int) -> int:
        if value < low:
            raise ValueError(f"must be at least {low}, got {value}")
        return value

    return check


Positive = Annotated[float, AfterValidator(_positive)]
AtLeast0 = Annotated[int, AfterValidator(_at_least(0))]
AtLeast1 = Annotated[int, AfterValidator(_at_least(1))]
