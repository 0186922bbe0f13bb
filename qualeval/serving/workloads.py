"""Serving workloads by name (`configs/workloads/NAME.yaml`): the prompts of llama-benchy and `vllm bench serve`,
and the load they are sent under, as qualeval samples.

A workload file has a `prompts` section (how many, of what length, from where) and a `run` section (run options:
concurrency, request rate, burstiness, batches), which sits under a profile and the flags. Prompts are cut from
filler text to a length counted in tokens (qualeval.serving.lengths). A synthetic prompt has no right answer: it is
marked `scored: false`, and the judge leaves it unscored. With `--task`, that task's items are placed at the end
of prompts of the workload's lengths instead, and scored.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import orjson
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from qualeval._shipped import shipped
from qualeval.errors import InputError, validation_problem, yaml_mapping
from qualeval.serving.lengths import Counter, Filler, fit, place
from qualeval.tasks import Task, TaskSpec
from qualeval.wire.models import Message, Sample, Shape

__all__ = ["PromptSpec", "Workload", "load_workload", "workload_dir", "workload_samples", "workloads"]

_INSTRUCTION = "Read the passage above, then continue it in the same style."


class PromptSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["random", "sharegpt", "task"] = "random"
    """random: filler text of `input_len` tokens (vllm's random dataset, llama-benchy's book text);
    sharegpt: the first turn of each conversation in `path`; task: the items of `task`, as they are."""
    input_len: int = 1024
    output_len: int | None = 128
    range_ratio: float = 0.0
    """Lengths drawn uniformly from [len × (1 − r), len × (1 + r)], as vllm bench serve draws them."""
    num_prompts: int = 10
    depth: int = 0
    """Earlier exchanges in the conversation: each a user turn of `input_len` and a reply of `output_len`."""
    seed: int = 0
    path: Path | None = None
    """sharegpt: a JSON list of {conversations: [{from, value}, …]}, as ShareGPT_V3 is published."""
    task: str | None = None
    max_tokens: int | None = None
    """kind task: the token budget of each request (the task's default otherwise)."""
    thinking: bool | None = None

    @field_validator("input_len", "num_prompts")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"must be at least 1, got {value}")
        return value

    @field_validator("range_ratio")
    @classmethod
    def _ratio(cls, value: float) -> float:
        if not 0 <= value < 1:
            raise ValueError(f"must be in [0, 1), got {value}")
        return value


class Workload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    style: Literal["vllm", "llama-benchy"] = "vllm"
    """Which tool's figures the report shows beside qualeval's own."""
    mirrors: str = ""
    """The command line of the tool this reproduces, for reference."""
    percentiles: list[float] = Field(default_factory=lambda: [50, 90, 95, 99])
    prompts: PromptSpec = Field(default_factory=PromptSpec)
    run: dict[str, Any] = Field(default_factory=dict)
    """Run options (concurrency, request_rate, burstiness, arrival_seed, batch, warmup): under the flags."""

    def shaped(self, sets: list[str], where: str) -> Workload:
        """The workload with `KEY=VALUE` overrides of its prompts applied (`--workload-set num_prompts=4`)."""
        values = self.prompts.model_dump()
        for item in sets:
            key, sep, value = item.partition("=")
            key = key.strip().removeprefix("prompts.")
            if not sep or key not in PromptSpec.model_fields:
                raise InputError(f"--workload-set: '{item}' is not KEY=VALUE with a key of {where}'s prompts")
            values[key] = yaml.safe_load(value)
        try:
            return self.model_copy(update={"prompts": PromptSpec.model_validate(values)})
        except ValidationError as exc:
            problem = validation_problem(exc)
            raise InputError(f"--workload-set: field 'prompts.{problem.field}': {problem.message}") from None


def workload_dir() -> Path:
    return shipped("configs/workloads")


def workloads() -> dict[str, Path]:
    return {p.stem: p for p in sorted(workload_dir().glob("*.yaml"))}


def load_workload(ref: str) -> tuple[Workload, Path]:
    """A workload by name (`configs/workloads/NAME.yaml`) or path; a mistake is one line naming file and field."""
    path = Path(ref) if ref.endswith((".yaml", ".yml")) else workloads().get(ref)
    if path is None:
        raise InputError(f"--workload: no workload '{ref}' (known: {', '.join(workloads())})")
    raw = yaml_mapping(path, "workload")
    try:
        return Workload.model_validate(raw), path
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{path}: field '{problem.field}': {problem.message}") from None


def synthetic_task(workload: Workload) -> Task:
    """A task for prompts that have no right answer: nothing in it is ever scored."""
    spec = TaskSpec.model_validate(
        {
            "name": workload.name,
            "description": workload.description or f"workload {workload.name} (synthetic prompts, not scored)",
            "samples": [{"question": _INSTRUCTION, "answer": ""}],
            "answer": {"type": "text"},
            "scorer": "exact",
        }
    )
    return Task(spec, None)


def _lengths(spec: PromptSpec, rng: random.Random) -> list[tuple[int, int | None]]:
    """(input, output) lengths per prompt, drawn like vllm bench serve's random dataset."""
    r = spec.range_ratio
    low, high = math.floor(spec.input_len * (1 - r)), math.ceil(spec.input_len * (1 + r))
    out = []
    for _ in range(spec.num_prompts):
        n = rng.randint(max(low, 1), max(high, 1))
        m = None
        if spec.output_len:
            m = rng.randint(max(math.floor(spec.output_len * (1 - r)), 1), max(math.ceil(spec.output_len * (1 + r)), 1))
        out.append((n, m))
    return out


Forcing = dict[str, Any]
"""The request keys that force an output length where the server accepts them: ignore_eos, min_tokens."""


def _budget(output: int | None, forcing: Forcing | None) -> dict[str, Any]:
    """The Sample fields that give an item its output length: the budget, and the keys that force it."""
    if not output:
        return {}
    return {"max_tokens": output, "extra_body": {k: (True if k == "ignore_eos" else output) for k in forcing or {}}}


async def _conversation(
    counter: Counter, filler: Filler, spec: PromptSpec, n: int, m: int | None, seed: object
) -> tuple[list[Message], int]:
    """`depth` earlier exchanges, then the prompt itself; returns the messages and their counted tokens."""
    messages: list[Message] = []
    total = 0
    for turn in range(spec.depth):
        asked, got = await fit(counter, filler, n, filler.offset((seed, turn, "user")))
        said, got2 = await fit(counter, filler, m or spec.output_len or 128, filler.offset((seed, turn, "reply")))
        messages += [Message(role="user", content=asked), Message(role="assistant", content=said)]
        total += got + got2
    return messages, total


async def synthetic_samples(
    workload: Workload, counter: Counter, filler: Filler, forcing: Forcing | None, batch: int
) -> list[Sample]:
    """Filler prompts of the workload's lengths (and conversation depth), none of them scored."""
    spec = workload.prompts
    rng = random.Random(spec.seed)
    own = await counter.count("\n\n" + _INSTRUCTION)
    samples = []
    for i, (n, m) in enumerate(_lengths(spec, rng)):
        seed = (spec.seed, i)
        earlier, before = await _conversation(counter, filler, spec, n, m, seed)
        text, got = await fit(counter, filler, max(n - own, 1), filler.offset(seed))
        messages = (*earlier, Message(role="user", content=f"{text}\n\n{_INSTRUCTION}"))
        target = n + spec.depth * (n + (m or spec.output_len or 128))  # the earlier turns count towards it
        shape = _shape(target, got + own + before, counter.source, m, i, batch)
        samples.append(
            Sample(
                id=f"{workload.name}/{i}",
                task=workload.name,
                messages=messages,
                gold="",
                scored=False,
                shape=shape,
                **_budget(m, forcing),
            )
        )
    return samples


def _shape(target: int, counted: int, source: str, output: int | None, index: int, batch: int) -> Shape:
    return Shape(
        prompt_target=target,
        prompt_tokens=counted,
        prompt_count=source,
        output_target=output,
        run=index // batch if batch else None,  # llama-benchy's runs: which batch of `concurrency` requests
    )


async def sharegpt_samples(workload: Workload, counter: Counter, forcing: Forcing | None, where: str) -> list[Sample]:
    """The first turn of each conversation, its reply's length as the output length; vllm bench serve's
    filters (at least 4 tokens each, prompt at most 1024, both at most 2048 tokens) and seeded shuffle."""
    spec = workload.prompts
    rows = _sharegpt_rows(spec.path, where)
    random.Random(spec.seed).shuffle(rows)
    samples: list[Sample] = []
    for prompt, reply in rows:
        if len(samples) >= spec.num_prompts:
            break
        n, m = await counter.count(prompt), await counter.count(reply)
        if n < 4 or m < 4 or n > 1024 or n + m > 2048:
            continue
        i = len(samples)
        messages = (Message(role="user", content=prompt),)
        shape = _shape(n, n, counter.source, m, i, 0)
        samples.append(
            Sample(
                id=f"{workload.name}/{i}",
                task=workload.name,
                messages=messages,
                gold="",
                scored=False,
                shape=shape,
                **_budget(m, forcing),
            )
        )
    if not samples:
        raise InputError(f"{spec.path}: no conversation passes vllm bench serve's length filters")
    return samples


def _sharegpt_rows(path: Path | None, where: str) -> list[tuple[str, str]]:
    if path is None:
        raise InputError(
            f"{where}: field 'prompts.path': a ShareGPT-style JSON file is needed (--workload-set path=FILE)"
        )
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    except orjson.JSONDecodeError:
        raise InputError(f"{path}: not JSON (expected a list of {{conversations: [...]}})") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of conversations")
    rows = []
    for number, entry in enumerate(data):
        turns = entry.get("conversations") if isinstance(entry, dict) else None
        if not isinstance(turns, list):
            raise InputError(f"{path}: entry {number}: field 'conversations' is missing")
        if len(turns) >= 2 and all(isinstance(t, dict) and isinstance(t.get("value"), str) for t in turns[:2]):
            rows.append((turns[0]["value"], turns[1]["value"]))
    return rows


async def placed_samples(
    workload: Workload, task: Task, items: list[Sample], counter: Counter, filler: Filler
) -> list[Sample]:
    """A task's items at the end of filler prompts of the workload's lengths: the same load, scored. The model
    answers in its own words, so the output length is a budget, never forced."""
    spec = workload.prompts
    out = []
    lengths = _lengths(spec, random.Random(spec.seed))
    for i, (sample, (n, m)) in enumerate(zip(items, lengths, strict=False)):
        text, got, _ = await place(counter, filler, sample.messages[-1].content, n, 1.0, filler.offset((spec.seed, i)))
        shape = _shape(n, got, counter.source, m, i, 0)
        messages = (*sample.messages[:-1], Message(role="user", content=text))
        out.append(sample.model_copy(update={"messages": messages, "shape": shape, **_budget(m, None)}))
    return out


def task_samples(workload: Workload, items: list[Sample]) -> list[Sample]:
    """A reasoning workload: a task's items as they are, with the workload's token budget."""
    spec = workload.prompts
    return [s.model_copy(update={"max_tokens": spec.max_tokens}) for s in items[: spec.num_prompts]]


async def workload_samples(
    workload: Workload,
    where: str,
    counter: Callable[[], Awaitable[Counter]],
    filler: Filler,
    forcing: Callable[[], Awaitable[Forcing]],
    given: list[tuple[Task, list[Sample]]],
    batch: int,
) -> list[tuple[Task, list[Sample]]]:
    """The run's work for a workload: synthetic prompts, ShareGPT turns, a task's items, or the given tasks'
    items placed in prompts of the workload's lengths. Counting and forcing are asked for only when needed."""
    spec = workload.prompts
    if spec.kind == "task" or (given and spec.kind == "random"):
        if not given:
            from qualeval.tasks import build_samples, load_task

            task = load_task(spec.task or "syllogisms")
            given = [(task, build_samples(task, limit=spec.num_prompts))]
        if spec.kind == "task":
            return [(t, task_samples(workload, s)) for t, s in given]
        counted = await counter()
        return [(t, await placed_samples(workload, t, s, counted, filler)) for t, s in given]
    counted, forced = await counter(), await forcing()
    if spec.kind == "sharegpt":
        samples = await sharegpt_samples(workload, counted, forced, where)
    else:
        samples = await synthetic_samples(workload, counted, filler, forced, batch)
    return [(synthetic_task(workload), samples)]
