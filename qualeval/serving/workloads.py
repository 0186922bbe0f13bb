"""Serving workloads by name (`configs/workloads/NAME.yaml`): the prompts of llama-benchy and `vllm bench serve`,
and the load they are sent under, as qualeval samples.

A workload file has a `prompts` section (how many, of what length, from where) and a `run` section (run options:
concurrency, request rate, burstiness, batches), which sits under a profile and the flags. Prompts are cut from
filler text to a length counted in tokens (qualeval.serving.lengths). A synthetic prompt has no right answer: its
record says `scored: false`, and the judge leaves it unscored. With `--task`, that task's items are placed at the
end of prompts of the workload's lengths instead, and scored.

Each style counts a prompt's length as its tool does (the record's `shape.prompt_rule`):
- `llama-benchy`: `pp` (input_len) and `context` (llama-benchy's `--depth`: tokens of context before the
  prompt, a system message) count what the server processes. The chat template's own tokens are measured as
  llama-benchy measures them in its warm-up and taken off the text, off the context where there is one, else
  off the prompt: the server processes pp + context tokens, and with `depth` earlier exchanges
  depth × (pp + tg) + pp + context.
- `vllm`, random: input_len counts the prompt's text: input_len less the special tokens the tokenizer adds
  (vllm's num_special_tokens_to_add), lengths drawn from [floor(L(1 - r)), ceil(L(1 + r))] with numpy's
  default_rng(seed), inputs then outputs, as vllm's RandomDataset draws them; the template comes on top.
- `vllm`, sharegpt: prompt_len and output_len are the tokenizer's counts of the first turn and its reply,
  special tokens included; vllm's filters, seeded shuffle and oversampling.
"""

from __future__ import annotations

import math
import random
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from qualeval._shipped import shipped
from qualeval.errors import InputError, validation_problem, yaml_loader, yaml_mapping
from qualeval.records import Shape, TaskSpec, WorkloadPrompts
from qualeval.serving.lengths import Counter, Filler, fit, place
from qualeval.tasks import Sample, Task
from qualeval.wire import Message

__all__ = ["Measures", "Workload", "load_workload", "workload_dir", "workload_samples", "workloads"]

_INSTRUCTION = "Read the passage above, then continue it in the same style."


class Workload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    style: Literal["vllm", "llama-benchy"] = "vllm"
    """Which tool's figures the report shows beside qualeval's own."""
    mirrors: str = ""
    """The command line of the tool this reproduces, for reference."""
    percentiles: list[float] = Field(default_factory=lambda: [50.0, 90.0, 95.0, 99.0])
    prompts: WorkloadPrompts = Field(default_factory=WorkloadPrompts)
    run: dict[str, Any] = Field(default_factory=dict)
    """Run options (concurrency, request_rate, burstiness, arrival_seed, batch, warmup): under the flags."""

    def shaped(self, sets: list[str], where: str) -> Workload:
        """The workload with `KEY=VALUE` overrides of its prompts applied (`--workload-set num_prompts=4`)."""
        values = self.prompts.model_dump()
        for item in sets:
            key, sep, value = item.partition("=")
            key = key.strip().removeprefix("prompts.")
            if not sep or key not in WorkloadPrompts.model_fields:
                raise InputError(f"--workload-set: '{item}' is not KEY=VALUE with a key of {where}'s prompts")
            values[key] = yaml.load(value, Loader=yaml_loader())  # `1e3` a number, as YAML 1.2 reads it
        try:
            return self.model_copy(update={"prompts": WorkloadPrompts.model_validate(values)})
        except ValidationError as exc:
            problem = validation_problem(exc)
            raise InputError(f"--workload-set: field 'prompts.{problem.field}': {problem.message}") from None

    def seeded(self, sets: list[str], kept: int | None) -> Workload:
        """The workload with the seed of this run's prompts: a resumed run's own (`kept`); else the file's or the
        one given (`--workload-set seed=N`), so that a rerun and a candidate send the baseline's prompts and pair
        with it item by item; with `cache=fresh` and no seed given, one drawn now (llama-benchy draws afresh), so
        that a rerun is not served from the prefix cache the last run filled."""
        given = {item.partition("=")[0].strip().removeprefix("prompts.") for item in sets}
        if kept is None and ("seed" in given or self.prompts.cache == "same"):
            return self
        seed = kept if kept is not None else secrets.randbelow(2**31)
        return self.model_copy(update={"prompts": self.prompts.model_copy(update={"seed": seed})})


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


Forcing = dict[str, bool]
"""The request keys that force an output length where the server accepts them: ignore_eos, min_tokens."""


@dataclass(frozen=True, slots=True)
class Measures:
    """What shaping asks the server for a workload, each only when it is needed (and then once)."""

    counter: Callable[[], Awaitable[Counter]]
    forcing: Callable[[], Awaitable[Forcing]]
    overhead: Callable[[tuple[str, ...]], Awaitable[int]]
    """The chat template's tokens for a conversation of these roles, as llama-benchy measures them."""
    specials: Callable[[], Awaitable[int]]
    """The special tokens the tokenizer adds to a text (vllm's num_special_tokens_to_add)."""


def _lengths(spec: WorkloadPrompts, specials: int = 0) -> list[tuple[int, int | None]]:
    """(input, output) lengths per prompt, drawn as vllm bench serve's random dataset draws them: input_len less
    the tokenizer's special tokens, integers uniform in [floor(L(1 - r)), ceil(L(1 + r))] from numpy's
    default_rng(seed), every input length first, then every output length (at least 1)."""
    import numpy as np  # matplotlib's dependency, so always there; imported only when a workload is shaped

    rng = np.random.default_rng(spec.seed)
    r, count = spec.range_ratio, spec.num_prompts
    real = max(0, spec.input_len - specials)
    inputs = rng.integers(math.floor(real * (1 - r)), math.ceil(real * (1 + r)) + 1, size=count).tolist()
    outputs: list[int | None] = [None] * count
    if spec.output_len:
        low, high = math.floor(spec.output_len * (1 - r)), math.ceil(spec.output_len * (1 + r))
        outputs = rng.integers(max(low, 1), max(high, 1) + 1, size=count).tolist()
    return [(max(int(n), 1), m) for n, m in zip(inputs, outputs, strict=True)]


def _budget(output: int | None, forcing: Forcing | None) -> dict[str, Any]:
    """The Sample fields that give an item its output length: the budget, and the keys that force it."""
    if not output:
        return {}
    return {"max_tokens": output, "extra_body": {k: (True if k == "ignore_eos" else output) for k in forcing or {}}}


def _roles(spec: WorkloadPrompts) -> tuple[str, ...]:
    return ("system",) * bool(spec.context) + ("user", "assistant") * spec.depth + ("user",)


async def _conversation(
    counter: Counter, filler: Filler, spec: WorkloadPrompts, n: int, m: int | None, seed: object, taken: tuple[int, int]
) -> tuple[list[Message], int]:
    """The context (`context` tokens), the earlier exchanges (`depth`), then the prompt; and their tokens as
    counted. `taken`: the template's overhead, which comes off the context where there is one, else off the
    prompt, as llama-benchy takes it (0 for vllm's rule, which counts the text alone); and the instruction's own
    tokens, which come off the prompt."""
    overhead, own = taken
    messages: list[Message] = []
    total = 0
    if spec.context:
        context = max(spec.context - overhead, 1)
        text, got = await fit(counter, filler, context, filler.offset((seed, "context")), exact=True)
        messages.append(Message(role="system", content=text))
        total, overhead = got, 0
    for turn in range(spec.depth):
        asked, got = await fit(counter, filler, n, filler.offset((seed, turn, "user")), exact=True)
        reply = m or spec.output_len or 128
        said, got2 = await fit(counter, filler, reply, filler.offset((seed, turn, "reply")), exact=True)
        messages += [Message(role="user", content=asked), Message(role="assistant", content=said)]
        total += got + got2
    text, _ = await fit(counter, filler, max(n - overhead - own, 1), filler.offset(seed), exact=True)
    prompt = f"{text}\n\n{_INSTRUCTION}"
    messages.append(Message(role="user", content=prompt))
    return messages, total + await counter.count(prompt)


async def synthetic_samples(
    workload: Workload, measures: Measures, filler: Filler, batch: int, warmup: int = 0
) -> list[Sample]:
    """Filler prompts of the workload's lengths (with its context and earlier turns), none of them scored:
    `warmup` prompts of the first prompt's lengths but text of their own, then `num_prompts` measured ones."""
    spec = workload.prompts
    counter, forced = await measures.counter(), await measures.forcing()
    benchy = workload.style == "llama-benchy"
    overhead = await measures.overhead(_roles(spec)) if benchy else 0
    specials = 0 if benchy else await measures.specials()
    own = await counter.count("\n\n" + _INSTRUCTION)  # the same for every prompt: counted once
    lengths = _lengths(spec, specials)
    plan: list[tuple[str, object, tuple[int, int | None], int | None]]
    plan = [(f"warmup{k}", (spec.seed, "warmup", k), lengths[0], None) for k in range(warmup)]
    plan += [(str(i), (spec.seed, i), length, i) for i, length in enumerate(lengths)]
    samples = []
    for name, seed, (n, m), index in plan:
        messages, counted = await _conversation(counter, filler, spec, n, m, seed, (overhead, own))
        target = spec.context + spec.depth * (n + (m or spec.output_len or 128)) + n  # every turn counts in it
        shape = _shape(target, counted + overhead, counter.source, m, index, batch, _rule(workload, overhead))
        samples.append(_unscored(workload, name, messages, shape, _budget(m, forced)))
    return samples


def _unscored(
    workload: Workload, name: str, messages: Sequence[Message], shape: Shape, budget: dict[str, Any]
) -> Sample:
    """A synthetic prompt: timed, never scored."""
    return Sample(
        id=f"{workload.name}/{name}", task=workload.name, messages=tuple(messages), gold="", scored=False, shape=shape,
        **budget,
    )  # fmt: skip


def _rule(workload: Workload, overhead: int) -> dict[str, Any]:
    """How the prompt was counted: llama-benchy's rule (what the server processes, the template included) or
    vllm bench serve's (the text alone)."""
    if workload.style == "llama-benchy":
        return {"prompt_rule": "llama-benchy", "template_tokens": overhead}
    return {"prompt_rule": f"vllm-{workload.prompts.kind}"}


def _shape(
    target: int, counted: int, source: str, output: int | None, index: int | None, batch: int, rule: dict[str, Any]
) -> Shape:
    return Shape(
        prompt_target=target,
        prompt_tokens=counted,
        prompt_count=source,
        output_target=output,
        # llama-benchy's runs: which batch of `concurrency` measured requests (a warm-up is in none)
        run=index // batch if batch and index is not None else None,
        **rule,
    )


def _valid(prompt: int, output: int, fixed: bool) -> bool:
    """vllm's is_valid_sequence: at least 4 tokens each (the output unchecked when its length is given), the
    prompt at most 1,024 and both at most 2,048."""
    return prompt >= 4 and (fixed or output >= 4) and prompt <= 1024 and prompt + output <= 2048


async def sharegpt_samples(workload: Workload, measures: Measures, where: str, warmup: int = 0) -> list[Sample]:
    """The first turn of each conversation, as vllm bench serve's sharegpt dataset takes them: shuffled with
    `random.seed(seed)`, lengths counted with the special tokens the tokenizer adds, its filters, the reply's
    length as the output length (or `output_len`, as `--sharegpt-output-len`), oversampled with
    `random.choice` when too few pass. The warm-ups come first: the first prompt again, as vllm's initial
    test request is."""
    spec = workload.prompts
    counter, forced, specials = await measures.counter(), await measures.forcing(), await measures.specials()
    rows = _sharegpt_rows(spec.path, where)
    random.Random(spec.seed).shuffle(rows)
    kept: list[tuple[str, int, int]] = []
    for prompt, reply in rows:
        if len(kept) >= spec.num_prompts:
            break
        n = await counter.count(prompt) + specials
        m = spec.output_len or await counter.count(reply) + specials
        if _valid(n, m, spec.output_len is not None):
            kept.append((prompt, n, m))
    if not kept:
        raise InputError(f"{spec.path}: no conversation passes vllm bench serve's length filters")
    again = random.Random(spec.seed)
    kept += [again.choice(kept) for _ in range(spec.num_prompts - len(kept))]
    samples = []
    plan = [(f"warmup{k}", kept[0]) for k in range(warmup)] + [(str(i), row) for i, row in enumerate(kept)]
    for name, (prompt, n, m) in plan:
        shape = _shape(n, n, counter.source, m, None, 0, _rule(workload, 0))
        messages = [Message(role="user", content=prompt)]
        samples.append(_unscored(workload, name, messages, shape, _budget(m, forced)))
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
    workload: Workload, task: Task, items: list[Sample], measures: Measures, filler: Filler, warmup: int = 0
) -> list[Sample]:
    """A task's items at the end of filler prompts of the workload's lengths, the item's own earlier messages
    counted in: the same load, scored. The model answers in its own words, so the output length is a budget.
    `warmup` items first, at the first prompt's lengths, then one item per measured prompt."""
    spec = workload.prompts
    counter = await measures.counter()
    benchy = workload.style == "llama-benchy"
    out = []
    lengths = _lengths(spec, 0 if benchy else await measures.specials())
    lengths = [lengths[0]] * warmup + lengths
    for i, (sample, (n, m)) in enumerate(zip(items, lengths, strict=False)):
        overhead = await measures.overhead(tuple(x.role for x in sample.messages)) if benchy else 0
        earlier = 0
        for message in sample.messages[:-1]:
            earlier += await counter.count(message.content)
        want = n - overhead - earlier
        text, got, _ = await place(
            counter, filler, sample.messages[-1].content, want, 1.0, filler.offset((spec.seed, i))
        )
        shape = _shape(n, got + earlier + overhead, counter.source, m, i, 0, _rule(workload, overhead))
        messages = (*sample.messages[:-1], Message(role="user", content=text))
        out.append(sample.model_copy(update={"messages": messages, "shape": shape, **_budget(m, None)}))
    return out


def task_samples(workload: Workload, items: list[Sample], warmup: int = 0) -> list[Sample]:
    """A reasoning workload: a task's items as they are, with the workload's token budget; `warmup` items
    first, then `num_prompts` measured ones."""
    spec = workload.prompts
    return [s.model_copy(update={"max_tokens": spec.max_tokens}) for s in items[: spec.num_prompts + warmup]]


async def workload_samples(
    workload: Workload,
    where: str,
    measures: Measures,
    filler: Filler,
    given: list[tuple[Task, list[Sample]]],
    batch: int,
    warmup: int = 0,
) -> list[tuple[Task, list[Sample]]]:
    """The run's work for a workload: synthetic prompts, ShareGPT turns, a task's items, or the given tasks'
    items placed in prompts of the workload's lengths. The server is asked only what is needed. `num_prompts`
    counts the measured prompts, as vllm bench serve's `--num-prompts` and llama-benchy's runs × concurrency
    do: the run's `warmup` requests (sent first, from the first task) come on top."""
    spec = workload.prompts
    if spec.kind == "task" or (given and spec.kind == "random"):
        if not given:
            from qualeval.tasks import build_samples, load_task

            task = load_task(spec.task or "syllogisms")
            given = [(task, build_samples(task, limit=spec.num_prompts + warmup))]
        extra = [warmup] + [0] * (len(given) - 1)  # the run's warm-ups are its first items
        if spec.kind == "task":
            return [(t, task_samples(workload, s, w)) for (t, s), w in zip(given, extra, strict=True)]
        return [
            (t, await placed_samples(workload, t, s, measures, filler, w))
            for (t, s), w in zip(given, extra, strict=True)
        ]
    if spec.kind == "sharegpt":
        samples = await sharegpt_samples(workload, measures, where, warmup)
    else:
        samples = await synthetic_samples(workload, measures, filler, batch, warmup)
    return [(synthetic_task(workload), samples)]
