"""Find out what an endpoint really does, by sending small requests and checking what comes back.

Nothing here trusts documentation or a server's claims: a structured-output mode counts as enforced only
when an answer no model would give unprompted comes back inside the constraint.

A sampled model can pass a check once by chance, so each check is repeated with a fixed sequence of seeds
until two samples in a row agree (at most REPEATS samples); a check that never settles is "inconclusive". The
probe has its own token budget, never the run's: a sample that ran out of tokens before answering is sent
again with twice the budget (up to four times the start) instead of counting.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from qualeval.errors import EndpointError
from qualeval.records import (
    BUDGET,
    PROBE_TIME,
    SEED,
    STYLES,
    TRUNCATED,
    AtLeast1,
    ModeResult,
    ProbeResult,
    ReasoningSource,
    Style,
    client_option,
    probe_time_option,
)
from qualeval.run.probebudget import check_thinking_budget
from qualeval.run.probepace import QUESTION, Ask, Pace, asker, is_late
from qualeval.scoring import Constraint, request_params
from qualeval.wire import (
    THINKING_SWITCHES,
    ChatClient,
    ChatResponse,
    switch_params,
)

__all__ = ["PROBE_CONCURRENCY", "REPEATS", "ProbeOptions", "check_thinking_budget", "probe", "settle", "unanswered"]

REPEATS = 4
"""Samples of one check at most: it stops as soon as two in a row agree."""


PROBE_CONCURRENCY = 32
"""Requests in flight while probing (each check is sampled repeatedly), whatever the run's own concurrency."""


class ProbeOptions(BaseModel):
    """`qualeval probe`'s options, declared once (its flags are made from these fields, qualeval.run.options):
    the client's, with the defaults of a few small requests, and the probe's own token budget."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = client_option(
        "base_url", "None leaves the default to the client, or the URL to a --sim server", default=None
    )
    model: str = Field("sim", description="The model name to send.")
    max_tokens: AtLeast1 = Field(
        BUDGET, description="Start token budget of each probe request (doubled for a sample that runs out)."
    )
    timeout: float = client_option(
        "timeout", "the probe's requests are short: a stalled one fails sooner", default=120.0
    )
    max_retries: int = client_option(
        "max_retries", "a probe answers in seconds; a flaky endpoint is reported, not waited out", default=2
    )
    probe_time: float = probe_time_option()
    tools: bool = Field(False, description="Also check the tool_choice contracts (auto, required, none, named).")
    passback: bool = Field(
        False,
        description="Also check which field the server reads an earlier turn's reasoning back from (reasoning, "
        "reasoning_content, inline <think>), by its prompt-token count.",
    )


_CHOICES = ["qv-alpha", "qv-beta", "qv-gamma"]
_REGEX = "qv-[0-9]{4}"
_SCHEMA = {
    "type": "object",
    "properties": {"qv_code": {"type": "integer"}},
    "required": ["qv_code"],
    "additionalProperties": False,
}
# how servers are told to stop thinking, by the client's own names; each is sent without the client's switch
_SWITCHES: dict[str, dict[str, Any]] = {name: switch_params(name, False) for name in THINKING_SWITCHES}
# every convention with the kinds a run may send through it, named `style.kind` as constrain names them; the
# bodies come from constrain.request_params, so the probe checks exactly what a run would send
_PROBE_CONSTRAINTS = {
    "choice": Constraint(kind="choice", choices=tuple(_CHOICES), pattern=_REGEX, schema_=_SCHEMA),
    "regex": Constraint(kind="regex", pattern=_REGEX, schema_=_SCHEMA),
    "json": Constraint(kind="json", schema_=_SCHEMA),
}
_KINDS: dict[Style, tuple[str, ...]] = {
    "structured_outputs": ("choice", "regex", "json"),
    "guided": ("choice", "regex", "json"),
    "sglang": ("regex",),
    "response_format": ("json",),
    "json_schema": ("json",),
    "grammar": ("choice",),
}
_MODES: dict[str, dict[str, Any]] = {
    f"{style}.{kind}": request_params(_PROBE_CONSTRAINTS[kind], style)[1] for style in STYLES for kind in _KINDS[style]
}


def _check(mode: str, resp: ChatResponse) -> ModeResult:
    if resp.error is not None:
        if resp.http_status is not None and 400 <= resp.http_status < 500:
            return ModeResult(verdict="rejected", detail=resp.error)
        return ModeResult(verdict="inconclusive", detail=resp.error)
    answer = resp.completion.content.strip()
    if not answer:
        status = resp.completion.status
        # only a reply cut off by the budget gets an answer from more tokens; one that stopped gave none
        why = "raise the token budget" if status in TRUNCATED else "the model stopped without one"
        return ModeResult(verdict="inconclusive", detail=f"no answer (status {status}); {why}")
    if mode.endswith(".choice"):
        held = answer in _CHOICES
    elif mode.endswith(".regex"):
        held = re.fullmatch(_REGEX, answer) is not None
    else:
        try:
            obj = orjson.loads(answer)
            held = isinstance(obj, dict) and set(obj) == {"qv_code"} and type(obj["qv_code"]) is int
        except orjson.JSONDecodeError:
            held = False
    return ModeResult(verdict="enforced" if held else "ignored", detail=answer[:60])


Sample = Callable[[int, int], Awaitable[tuple[str, str, bool]]]
"""(seed, token budget) -> (verdict, detail, starved): one sample of a check; starved means it showed nothing to
judge by (the budget ran out, or the model wrote nothing at all)."""


def _kind(verdict: str) -> str:
    return verdict.split(":", 1)[0].split(" (", 1)[0]  # "rejected: HTTP 400 ..." and "rejected: ..." agree


async def settle(
    sample: Sample, budget: int, *, seed: int = SEED, repeats: int = REPEATS
) -> tuple[str, str, list[str]]:
    """Sample a check until two verdicts in a row agree: (verdict, detail, every verdict seen).

    Seeds are seed, seed + 1, ...: fixed, so a probe is reproducible, yet different, so a repeat is a new sample.
    The first two samples are always needed and go out together; any further one only when they disagree. A
    starved sample does not count as a verdict: the next ones get twice the budget (up to four times the start).
    """
    seen: list[str] = []
    detail = ""
    cap = budget * 4
    taken = 0
    while taken < repeats:
        width = 2 if taken == 0 else 1
        sent = budget
        batch = await asyncio.gather(*(sample(seed + taken + j, sent) for j in range(width)))
        taken += width
        for verdict, said, starved in batch:
            if starved and sent < cap:
                budget = min(cap, sent * 2)
                continue
            seen.append(verdict)
            detail = said
        if len(seen) >= 2 and _kind(seen[-1]) == _kind(seen[-2]):
            return seen[-1], detail, seen
    if len(seen) <= 1 and all(v == "inconclusive" for v in seen):
        return "inconclusive", detail or f"no answer within {budget} tokens", seen
    return "inconclusive", f"no stable verdict in {repeats} samples ({', '.join(seen)})", seen


def _shared(send: Callable[[int, int], Awaitable[ChatResponse]]) -> Callable[[int, int], Awaitable[ChatResponse]]:
    """One request per (seed, budget), however many checks compare against it."""
    sent: dict[tuple[int, int], asyncio.Future[ChatResponse]] = {}

    def get(seed: int, budget: int) -> Awaitable[ChatResponse]:
        if (seed, budget) not in sent:
            sent[(seed, budget)] = asyncio.ensure_future(send(seed, budget))
        return sent[(seed, budget)]

    return get


def _starved(resp: ChatResponse) -> bool:
    # a cut-off answer is no verdict either: half a JSON object would read as "ignored"
    return resp.error is None and resp.completion.status in TRUNCATED


def _mode_sample(ask: Ask, mode: str) -> Sample:
    async def sample(seed: int, budget: int) -> tuple[str, str, bool]:
        resp = await ask(_GREETING, seed, budget, body=_MODES[mode])
        found = _check(mode, resp)
        return found.verdict, found.detail, _starved(resp)

    return sample


def _switch_sample(ask: Ask, off_body: dict[str, Any], on: Callable[[int, int], Awaitable[ChatResponse]]) -> Sample:
    async def sample(seed: int, budget: int) -> tuple[str, str, bool]:
        with_thinking, off = await asyncio.gather(on(seed, budget), ask(QUESTION, seed, budget, body=off_body))
        verdict = _switch_verdict(with_thinking, off)
        # a sampled model that wrote nothing with its thinking on shows nothing a switch could turn off: no verdict
        return verdict, verdict, with_thinking.error is None and _said_nothing(with_thinking)

    return sample


async def _listing(client: ChatClient) -> tuple[list[str], bool, list[str]]:
    try:
        listing = await client.models()
    except EndpointError as exc:
        return [], False, [f"/models unavailable: {exc}"]
    served = [str(m.get("id")) for m in listing.get("data") or [] if isinstance(m, dict)]
    return served, is_simulated(listing), []


def is_simulated(models: dict[str, Any] | None) -> bool:
    """Whether a /models listing comes from qualeval's reference server, which says so in `owned_by`."""
    data = (models or {}).get("data") or []
    return any(isinstance(m, dict) and m.get("owned_by") == "qualeval-simulated" for m in data)


_GREETING = "Reply with a short friendly greeting."


async def probe(
    client: ChatClient, model: str, *, max_tokens: int = BUDGET, seed: int = SEED, seconds: float = PROBE_TIME
) -> ProbeResult:
    """Probe the endpoint behind `client` with its own token budget (`max_tokens`, the start budget), seeds and
    time (`seconds` in all: a check it cuts short is inconclusive). Raises EndpointError, saying it is the probe's,
    only when every chat request it sent failed at the endpoint."""
    pace = Pace(seconds, client.config.concurrency)
    served, simulated, notes = await _listing(client)
    ask = asker(client, model, pace)
    on = _shared(lambda s, b: ask(QUESTION, s, b))
    modes = list(_MODES)
    # the plain question first, streamed and not: how long it takes sets how many requests go out at once after it
    began = asyncio.get_running_loop().time()
    base, streamed = await asyncio.gather(on(seed, max_tokens), ask(QUESTION, seed, max_tokens, stream=True))
    if base.error and streamed.error and not (is_late(base) or is_late(streamed)):
        raise EndpointError(f"probe: {client.config.base_url}: chat completions failed: {base.error}")
    pace.widen(asyncio.get_running_loop().time() - began)
    # then everything else at once, each check's samples waiting only for their own requests. A gather per kind
    # of result keeps each one's type, where one gather over them all would type every result as `object`
    switched = asyncio.gather(*(settle(_switch_sample(ask, b, on), max_tokens, seed=seed) for b in _SWITCHES.values()))
    checked = asyncio.gather(*(settle(_mode_sample(ask, m), max_tokens, seed=seed) for m in modes))
    heard = asyncio.gather(
        _heard(base, lambda s: on(s, max_tokens), seed),
        _heard(streamed, lambda s: ask(QUESTION, s, max_tokens, stream=True), seed),
    )
    switches, checks, (base, streamed) = await asyncio.gather(switched, checked, heard)
    result = ProbeResult(
        base_url=client.config.base_url,
        model=model,
        simulated=simulated,
        served_models=served,
        notes=notes,
        budget=max_tokens,
        seed=seed,
        seconds=seconds,
    )
    _reasoning(result, base, streamed)
    result.thinking_switch = {
        name: verdict if verdict != "inconclusive" else f"inconclusive: {detail}"
        for name, (verdict, detail, _) in zip(_SWITCHES, switches, strict=True)
    }
    result.structured_outputs = {
        m: ModeResult(verdict=verdict, detail=detail, samples=seen)
        for m, (verdict, detail, seen) in zip(modes, checks, strict=True)
    }
    result.inconclusive = _inconclusive(result, base, streamed)
    if pace.late:
        result.notes.append(f"out of time: {pace.late} requests were cut off when the probe's {seconds:g}s ran out")
    return result


def unanswered(base_url: str, model: str, error: str, seconds: float = PROBE_TIME) -> ProbeResult:
    """The result of a probe whose every chat request failed at the endpoint: every check inconclusive, so that a
    run it served goes on with the defaults, saying so."""
    why = f"inconclusive: {error}"
    result = ProbeResult(base_url=base_url, model=model, simulated=False, seconds=seconds, notes=[error], failed=error)
    result.thinking_switch = dict.fromkeys(_SWITCHES, why)
    result.structured_outputs = {m: ModeResult(verdict="inconclusive", detail=error) for m in _MODES}
    result.inconclusive = _inconclusive(result, None, None)
    return result


async def _heard(first: ChatResponse, again: Callable[[int], Awaitable[ChatResponse]], seed: int) -> ChatResponse:
    """The first reply to the probe's question that said something, asking again with the next seeds (REPEATS
    replies in all): a reply with neither thinking nor answer is no evidence of where reasoning comes back. Seen
    here: SmolLM2 under Qwen3.5's template, sampled, stops at once on some seeds and thinks aloud on others."""
    resp = first
    for step in range(1, REPEATS):
        if resp.error is not None or not _said_nothing(resp):
            break
        resp = await again(seed + step)
    return resp


def _said_nothing(resp: ChatResponse) -> bool:
    """Neither thinking nor answer came back, whatever marker the text held."""
    return not resp.completion.reasoning.strip() and not resp.completion.content.strip()


def _unread(resp: ChatResponse | None) -> bool:
    """A response that cannot say where reasoning comes back: none came, it was cut off with nothing marked, or it
    said nothing at all."""
    if resp is None:
        return True
    done = resp.completion
    cut = done.status in TRUNCATED and done.reasoning_source == "none"
    return resp.error is not None or cut or _said_nothing(resp)


def _source(resp: ChatResponse) -> ReasoningSource:
    """Where the reasoning of a probe reply arrived, as evidence of the server's format. A reply that said nothing
    shows none, marker or not: llama.cpp (b11434) under a template that opens the block leaves a bare `</think>`
    in the content of a non-streamed reply whose thinking and answer are both empty (`--reasoning-budget 0`, then
    the model stops) and streams nothing, though it returns any thinking in `reasoning_content` and strips the
    marker before an answer. Read as close-only, that would move every answer of the run into the thinking."""
    return "none" if _said_nothing(resp) else resp.completion.reasoning_source


def _inconclusive(result: ProbeResult, base: ChatResponse | None, streamed: ChatResponse | None) -> list[str]:
    """Every check that could not conclude, by name."""
    unread = [name for name, resp in (("reasoning", base), ("stream reasoning", streamed)) if _unread(resp)]
    undecided = {
        "streaming usage": result.streaming_usage,
        "reasoning tokens": result.reasoning_tokens_reported,
        "hidden reasoning": result.hidden_reasoning,
    }
    unread += [name for name, found in undecided.items() if found is None]
    switches = [f"thinking switch {n}" for n, v in result.thinking_switch.items() if v.startswith("inconclusive")]
    modes = [m for m, check in result.structured_outputs.items() if check.verdict == "inconclusive"]
    return unread + switches + modes


def _reasoning(result: ProbeResult, base: ChatResponse, streamed: ChatResponse) -> None:
    """Where reasoning arrives, streaming and not, and what usage says about it."""
    result.reasoning_source = _source(base)
    result.reasoning_fields = sorted(set(base.raw_reasoning) | set(streamed.raw_reasoning))
    result.stream_reasoning_source = _source(streamed)
    # a request that did not finish decides nothing: None, never False
    result.streaming_usage = None if streamed.error else not streamed.usage.completion_estimated
    result.reasoning_tokens_reported = None if base.error else not base.usage.reasoning_estimated
    result.hidden_reasoning = (
        None
        if base.error
        else (
            not base.usage.reasoning_estimated and bool(base.usage.reasoning_tokens) and not base.completion.reasoning
        )
    )
    if len(result.reasoning_fields) > 1:
        result.notes.append("the same reasoning arrives in several fields; qualeval reads one by priority")
    if result.reasoning_source != result.stream_reasoning_source:
        result.notes.append(
            f"stream and non-stream split differently ({result.stream_reasoning_source} vs {result.reasoning_source})"
        )


def _switch_verdict(on: ChatResponse, off: ChatResponse) -> str:
    if on.error or is_late(off):  # no answer to compare: neither a rejection nor "no reasoning seen"
        return f"inconclusive: {on.error or off.error}"
    if off.error:
        return f"rejected: {off.error}"
    had = bool(on.completion.reasoning) or (on.usage.reasoning_tokens or 0) > 0
    if not had:
        return "no reasoning seen either way"
    still = bool(off.completion.reasoning) or (
        not off.usage.reasoning_estimated and (off.usage.reasoning_tokens or 0) > 0
    )
    return "ignored (still reasons)" if still else "works"
