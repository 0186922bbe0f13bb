"""The run's items shaped before the first request: a workload's prompts, a task at target context lengths, and
this shard's share. What was decided (who counted tokens, which output-forcing keys the server accepts) goes
into the manifest under `shaping`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import httpx
import orjson

from qualeval.errors import InputError
from qualeval.records import ContextShaping, RunConfig, Shape, ShapedWorkload, Shaping, Shard, TemplateTokens
from qualeval.serving.lengths import (
    Counter,
    Filler,
    PromptTokensOf,
    counter_for,
    headers_of,
    place,
    template_overhead,
)
from qualeval.serving.reproduce import reproduces
from qualeval.serving.workloads import Forcing, Measures, load_workload, workload_samples
from qualeval.tasks import Sample, Task
from qualeval.wire import Message

__all__ = ["needs_shaping", "parse_shard", "shape_work", "shard_of"]

Work = list[tuple[Task, list[Sample]]]


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` with 0 <= K < N: shard K (counted from 0, as Slurm array and Kubernetes indices are) of N."""
    k, sep, n = text.partition("/")
    try:
        index, count = int(k), int(n)
    except ValueError:
        raise InputError(f"--shard: '{text}' is not K/N (e.g. 0/4)") from None
    if not sep or count < 1 or not 0 <= index < count:
        raise InputError(f"--shard: '{text}' needs 0 <= K < N")
    return index, count


def shard_of(samples: Sequence[Sample], index: int, count: int) -> list[Sample]:
    """Every N-th item from the K-th: deterministic, and the shards of one run cover its items exactly once."""
    return [s for i, s in enumerate(samples) if i % count == index]


async def _forcing(http: httpx.AsyncClient, base_url: str, model: str) -> Forcing:
    """The output-forcing keys the server accepts (a 4xx means it refuses a key; OpenAI's API does)."""
    accepted: Forcing = {}
    for keys in (("ignore_eos", "min_tokens"), ("ignore_eos",), ("min_tokens",)):
        body = {"model": model, "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 4}
        body.update({k: (True if k == "ignore_eos" else 4) for k in keys})
        try:
            reply = await http.post(f"{base_url.rstrip('/')}/chat/completions", content=orjson.dumps(body))
        except httpx.HTTPError:
            return {}
        if reply.status_code == 200:
            accepted = dict.fromkeys(keys, True)
            break
    return accepted


def _prompt_tokens_of(http: httpx.AsyncClient, base_url: str, model: str) -> PromptTokensOf:
    """One chat request (max_tokens 1): the server's usage.prompt_tokens for these messages, None without."""

    async def usage(messages: list[dict[str, str]]) -> int | None:
        body = {"model": model, "messages": messages, "max_tokens": 1}
        try:
            reply = await http.post(f"{base_url.rstrip('/')}/chat/completions", content=orjson.dumps(body))
            return int(reply.json()["usage"]["prompt_tokens"]) if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None

    return usage


def _usage_of(http: httpx.AsyncClient, base_url: str, model: str) -> Callable[[str], Awaitable[int | None]]:
    of = _prompt_tokens_of(http, base_url, model)

    async def usage(text: str) -> int | None:
        return await of([{"role": "user", "content": text}])

    return usage


def _measures(config: RunConfig, http: httpx.AsyncClient, headers: dict[str, str], info: Shaping) -> Measures:
    """The workload's questions to the server, each asked once when first needed; what was found goes into
    `info` (the manifest's `shaping`): the counter, the forcing keys, the template's tokens, the special tokens."""
    counted: list[Counter] = []
    overheads: dict[tuple[str, ...], int] = {}

    async def counter() -> Counter:
        if not counted:
            usage = _usage_of(http, config.base_url, config.model)
            tokenizer = config.tokenizer
            counted.append(await counter_for(config.base_url, config.model, headers, tokenizer, usage, http))
            info.prompt_count = counted[0].source
        return counted[0]

    async def forcing() -> Forcing:
        if config.force_output == "off":
            info.forcing = {}
        elif info.forcing is None:
            info.forcing = await _forcing(http, config.base_url, config.model)
        return info.forcing

    async def overhead(roles: tuple[str, ...]) -> int:
        if roles not in overheads:
            found = await template_overhead(
                await counter(), _prompt_tokens_of(http, config.base_url, config.model), roles
            )
            overheads[roles] = found.tokens
            entry = TemplateTokens(roles=list(roles), server=found.server, text=found.text, tokens=found.tokens)
            info.template = [*(info.template or []), entry]
        return overheads[roles]

    async def specials() -> int:
        if info.specials is None:
            info.specials = await (await counter()).added()
        return info.specials

    return Measures(counter, forcing, overhead, specials)


async def at_lengths(work: Work, lengths: Sequence[int], depth: float, counter: Counter, filler: Filler) -> Work:
    """Every item at every target context length: placed in filler of that many tokens in all, after it
    (depth 1) or at `depth` inside; ids gain `@LENGTH` so each length pairs with itself across runs."""
    out: Work = []
    for task, samples in work:
        shaped = []
        for length in lengths:
            for s in samples:
                item = s.messages[-1].content
                text, got, _ = await place(counter, filler, item, length, depth, filler.offset(s.id))
                shape = (s.shape or Shape()).model_copy(
                    update={
                        "context_tokens": length,
                        "context_depth": depth,
                        "prompt_tokens": got,
                        "prompt_count": counter.source,
                    }
                )
                messages = (*s.messages[:-1], Message(role="user", content=text))
                shaped.append(s.model_copy(update={"id": f"{s.id}@{length}", "messages": messages, "shape": shape}))
        out.append((task, shaped))
    return out


async def shape_work(config: RunConfig, work: Work, kept: Shaping | None = None) -> tuple[Work, Shaping]:
    """The run's items after its workload, context lengths and shard; and what the manifest keeps of it.
    `kept`: a resumed run's own shaping, whose prompt seed it keeps."""
    info = Shaping()
    workload_ref = config.workload
    lengths = list(config.context_lengths)
    filler = Filler(config.filler)
    headers = {"Content-Type": "application/json", **headers_of(config.api_key)}
    async with httpx.AsyncClient(headers=headers, timeout=config.timeout) as http:
        measures = _measures(config, http, headers, info)
        if workload_ref:
            workload, path = load_workload(workload_ref)
            sets = list(config.workload_set)
            seed = kept.workload.prompts.seed if kept is not None and kept.workload is not None else None
            workload = workload.shaped(sets, str(path)).seeded(sets, seed)
            batch = config.concurrency[0] if config.batch else 0
            given = [t.name for t, _ in work]
            work = await workload_samples(workload, str(path), measures, filler, work, batch, config.warmup)
            info.workload = ShapedWorkload(
                name=workload.name,
                file=str(path),
                style=workload.style,
                mirrors=reproduces(workload.style, workload.prompts, config, given, workload.percentiles),
                percentiles=workload.percentiles,
                prompts=workload.prompts,
            )
        if lengths:
            depth = config.context_depth
            work = await at_lengths(work, lengths, depth, await measures.counter(), filler)
            info.context = ContextShaping(lengths=lengths, depth=depth)
    shard = config.shard
    if shard:
        index, count = parse_shard(shard)
        work = [(t, shard_of(s, index, count)) for t, s in work]
        info.shard = Shard(index=index, count=count)
    return work, info


def needs_shaping(config: RunConfig) -> bool:
    return bool(config.workload or config.context_lengths or config.shard)
