"""The levels a run sweeps: load (requests in flight, or an offered request rate) crossed with the reasoning
budget (output tokens, reasoning effort, thinking on and off, a server's own thinking budget). Every level runs
the same items, so any two levels compare item by item.

A level's label names what sets it apart, `c=4`, `rate=2`, `max_tokens=512`, `effort=low`, `thinking=off`,
`thinking_budget=256`, joined by a space where both axes sweep (`c=4 max_tokens=512`). A run with no budget
levels keeps the load labels it always had. Thinking off is one level (per output budget), never one per effort
or thinking budget: those settings mean nothing without thinking, and sending them beside it says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from qualeval.errors import InputError, validation_problem
from qualeval.records import ByThinking, RunConfig
from qualeval.wire import THINKING_BUDGET_FIELD

__all__ = ["Level", "RequestSettings", "budget_levels", "levels", "request_settings"]


class RequestSettings(BaseModel):
    """The settings a run and its levels put on every request, over the task's own; None leaves a setting to the
    task (or the server). Not persisted: each request records what it sent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    thinking: bool | None = None
    stream: bool | None = None
    sampling: ByThinking | None = None
    """The run's sampling per thinking mode, under the plain settings below."""
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)

    def over(self, base: RequestSettings) -> RequestSettings:
        """These settings over `base`: each one given here wins (by attribute: a dump would flatten `sampling`)."""
        return base.model_copy(update={name: getattr(self, name) for name in self.model_fields_set})


def request_settings(values: dict[str, Any]) -> RequestSettings:
    """Settings from their names: a name that is not a request setting is one line naming it, here, rather than a
    TypeError in the middle of a run."""
    try:
        return RequestSettings.model_validate(values)
    except ValidationError as exc:
        problem = validation_problem(exc)
        message = "not a setting" if problem.message == "Extra inputs are not permitted" else problem.message
        raise InputError(f"request setting '{problem.field}': {message}") from None


@dataclass(frozen=True)
class Level:
    label: str
    cap: int
    """Requests in flight at most."""
    rate: float | None = None
    """Offered requests per second (an open loop); None for a closed loop of `cap` workers."""
    request: RequestSettings = field(default_factory=RequestSettings)
    """The request settings this level sets over the run's: max_tokens, reasoning_effort, thinking, extra_body."""


def _axes(config: RunConfig, thinking: bool) -> list[list[tuple[str, dict[str, Any]]]]:
    """The budget axes as (label part, request settings) per value. With thinking off there is no thinking to
    give an effort or a budget to: those axes drop out, so that side is asked once, not once per effort."""
    axes: list[list[tuple[str, dict[str, Any]]]] = []
    if config.max_tokens:
        axes.append([(f"max_tokens={n}", {"max_tokens": n}) for n in config.max_tokens])
    if config.reasoning_effort and thinking:
        axes.append([(f"effort={e}", {"reasoning_effort": e}) for e in config.reasoning_effort])
    if config.thinking_budget and thinking:
        budgets = config.thinking_budget
        axes.append([(f"thinking_budget={n}", {"extra_body": {THINKING_BUDGET_FIELD: n}}) for n in budgets])
    return axes


def _combos(axes: list[list[tuple[str, dict[str, Any]]]], named: set[int]) -> list[tuple[list[str], dict[str, Any]]]:
    """Every combination of the axes: the label parts of the axes in `named`, and the settings of all."""
    out = []
    for combo in product(*axes):
        parts = [part for i, (part, _) in enumerate(combo) if i in named]
        settings: dict[str, Any] = {}
        for _, values in combo:
            settings.update(values)
        out.append((parts, settings))
    return out


def budget_levels(config: RunConfig) -> list[tuple[str, dict[str, Any]]]:
    """(label part, request settings) for every combination of the budget axes the run sweeps; one unlabelled
    entry with no settings when it sweeps none. A single value on an axis still sets the requests, and names
    the level only where another budget axis sweeps. With --thinking-pair, thinking on crosses every axis and
    thinking off only the output budget: one `thinking=off` level per max_tokens. With --stream-parity, every
    level is sent streamed (`stream=on`) and not (`stream=off`)."""
    axes = _axes(config, thinking=True)
    named = {i for i, axis in enumerate(axes) if len(axis) > 1}
    if not config.thinking_pair:
        out = [(" ".join(parts), settings) for parts, settings in _combos(axes, named)]
    else:
        out = [(" ".join([*parts, "thinking=on"]), {**s, "thinking": True}) for parts, s in _combos(axes, named)]
        off_axes = _axes(config, thinking=False)
        off_named = {i for i, axis in enumerate(off_axes) if len(axis) > 1}
        out += [(" ".join([*p, "thinking=off"]), {**s, "thinking": False}) for p, s in _combos(off_axes, off_named)]
    if not config.stream_parity:
        return out
    return [
        (" ".join(p for p in (part, f"stream={'on' if way else 'off'}") if p), {**settings, "stream": way})
        for part, settings in out
        for way in (True, False)
    ]


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
        out.append(Level(label=label, cap=cap, rate=rate, request=request_settings(settings)))
    return out
