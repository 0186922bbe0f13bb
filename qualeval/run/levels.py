"""The levels a run sweeps: load (requests in flight, or an offered request rate) crossed with the reasoning
budget (output tokens, reasoning effort, thinking on and off, a server's own thinking budget). Every level runs
the same items, so any two levels compare item by item.

A level's label names what sets it apart, `c=4`, `rate=2`, `max_tokens=512`, `effort=low`, `thinking=off`,
`thinking_budget=256`, joined by a space where both axes sweep (`c=4 max_tokens=512`). A run with no budget
levels keeps the load labels it always had.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Any

from qualeval.records import RunConfig
from qualeval.wire.client import THINKING_BUDGET_FIELD

__all__ = ["Level", "budget_levels", "levels"]


@dataclass(frozen=True)
class Level:
    label: str
    cap: int
    """Requests in flight at most."""
    rate: float | None = None
    """Offered requests per second (an open loop); None for a closed loop of `cap` workers."""
    request: dict[str, Any] = field(default_factory=dict)
    """The request settings this level sets over the run's: max_tokens, reasoning_effort, thinking, extra_body."""


def budget_levels(config: RunConfig) -> list[tuple[str, dict[str, Any]]]:
    """(label part, request settings) for every combination of the budget axes the run sweeps; one unlabelled
    entry with no settings when it sweeps none. A single value on an axis still sets the requests, and names
    the level only where another budget axis sweeps."""
    axes: list[list[tuple[str, dict[str, Any]]]] = []
    if config.max_tokens:
        axes.append([(f"max_tokens={n}", {"max_tokens": n}) for n in config.max_tokens])
    if config.reasoning_effort:
        axes.append([(f"effort={e}", {"reasoning_effort": e}) for e in config.reasoning_effort])
    if config.thinking_budget:
        budgets = config.thinking_budget
        axes.append([(f"thinking_budget={n}", {"extra_body": {THINKING_BUDGET_FIELD: n}}) for n in budgets])
    if config.thinking_pair:
        axes.append([("thinking=on", {"thinking": True}), ("thinking=off", {"thinking": False})])
    out = []
    for combo in product(*axes):
        named = [part for (part, _), axis in zip(combo, axes, strict=True) if len(axis) > 1]
        settings: dict[str, Any] = {}
        for _, values in combo:
            settings.update(values)
        out.append((" ".join(named), settings))
    return out


def levels(config: RunConfig) -> list[Level]:
    """Every level, in order: each load level, and within it each budget level."""
    load: list[tuple[str, int, float | None]]  # (label, cap, rate): no rate for a closed loop
    if config.request_rate:
        load = [(f"rate={r:g}", config.concurrency[0], r) for r in config.request_rate]
    else:
        load = [(f"c={c}", c, None) for c in config.concurrency]
    budgets = budget_levels(config)
    swept = any(part for part, _ in budgets)
    out = []
    for (load_label, cap, rate), (part, settings) in product(load, budgets):
        label = part if swept and len(load) == 1 else " ".join(p for p in (load_label, part) if p)
        out.append(Level(label=label, cap=cap, rate=rate, request=settings))
    return out
