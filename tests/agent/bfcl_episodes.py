"""BFCL v4 multi-turn from the bfcl-eval wheel, for the agent, task and scoring tests: its items as Samples, its
API classes, and its ground truth as the calls a model would send. Absent wheel: the tests skip, naming it."""

from __future__ import annotations

import functools
import inspect
import json
import os
from pathlib import Path

import pytest

from qualeval.agent import ClassSource, bfcl_classes
from qualeval.records import EpisodeSpec, ToolCall
from qualeval.tasks import Sample, build_samples, load_task, parse_call

WHEEL = Path(os.environ.get("QUALEVAL_CACHE") or Path.home() / ".cache" / "qualeval") / (
    "bfcl_eval-2026.3.23-py3-none-any.whl"
)
needs_wheel = pytest.mark.skipif(
    not WHEEL.exists(), reason=f"{WHEEL} is not present (the bfcl-eval wheel: .ci/run fetches it)"
)
CATEGORIES = ("base", "miss_func", "miss_param", "long_context")


@functools.cache
def samples(category: str | None = None) -> tuple[Sample, ...]:
    name = f"bfcl_multi_turn:{category}" if category else "bfcl_multi_turn"
    with pytest.warns(match="not yet offered") if category in (None, "miss_func") else _quiet():
        return tuple(build_samples(load_task(name), data=WHEEL))


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


@functools.cache
def classes() -> ClassSource:
    return bfcl_classes(load_task("bfcl_multi_turn").spec, WHEEL)


def sample(item_id: str) -> Sample:
    category = item_id.removeprefix("multi_turn_").rsplit("_", 1)[0]
    return next(s for s in samples(category) if s.id.endswith(f"/{item_id}"))


def as_call(spec: EpisodeSpec, source: ClassSource, text: str, index: int = 0) -> ToolCall:
    """A ground-truth call string as a model's call: its positional arguments named as the method names them."""
    name, args, kwargs = parse_call(text)
    if args:
        owner = next(source.classes[c] for c in spec.classes if hasattr(source.classes[c], name))
        params = [p for p in inspect.signature(getattr(owner, name)).parameters if p != "self"]
        kwargs = {**dict(zip(params, args, strict=False)), **kwargs}
    return ToolCall(name=name, arguments=json.dumps(kwargs), id=f"call_{index}")


def truth_steps(spec: EpisodeSpec, source: ClassSource, per_call: bool = False) -> list[list[list[ToolCall]]]:
    """The ground truth as calls_by_turn: one step a turn holding all its calls, or one step per call."""
    out = []
    for calls in spec.expected:
        made = [as_call(spec, source, text, i) for i, text in enumerate(calls)]
        out.append([[c] for c in made] if per_call else ([made] if made else []))
    return out
