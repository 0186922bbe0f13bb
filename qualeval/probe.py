"""Find out what an endpoint really does, by sending small requests and checking what comes back.

Nothing here trusts documentation or a server's claims: a structured-output mode counts as enforced only
when an answer no model would give unprompted comes back inside the constraint.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field

from qualeval.client import ChatClient
from qualeval.constrain import Style, styles_from_probe
from qualeval.errors import EndpointError
from qualeval.models import ChatRequest, ChatResponse, Message

__all__ = ["ProbeResult", "probe"]

Verdict = Literal["enforced", "ignored", "rejected", "inconclusive"]

_CHOICES = ["qv-alpha", "qv-beta", "qv-gamma"]
_REGEX = "qv-[0-9]{4}"
_SCHEMA = {
    "type": "object",
    "properties": {"qv_code": {"type": "integer"}},
    "required": ["qv_code"],
    "additionalProperties": False,
}
# how servers are told to stop thinking; each is sent without the client's own switch
_SWITCHES: dict[str, dict[str, Any]] = {
    "chat_template_kwargs": {"chat_template_kwargs": {"enable_thinking": False}},  # vLLM, SGLang, llama.cpp
    "reasoning_effort": {"reasoning_effort": "none"},  # Ollama, OpenAI
    "thinking": {"thinking": {"type": "disabled"}},  # DeepSeek
}
_MODES: dict[str, dict[str, Any]] = {
    "response_format.json_schema": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "probe", "schema": _SCHEMA, "strict": True}}
    },
    "structured_outputs.choice": {"structured_outputs": {"choice": _CHOICES}},
    "structured_outputs.regex": {"structured_outputs": {"regex": _REGEX}},
    "structured_outputs.json": {"structured_outputs": {"json": _SCHEMA}},
    "guided_choice": {"guided_choice": _CHOICES},
    "guided_regex": {"guided_regex": _REGEX},
    "guided_json": {"guided_json": _SCHEMA},
    "regex (SGLang)": {"regex": _REGEX},
}


class ModeResult(BaseModel):
    verdict: Verdict
    detail: str = ""


class ProbeResult(BaseModel):
    base_url: str
    model: str
    simulated: bool
    served_models: list[str] = Field(default_factory=list)
    reasoning_source: str = "none"
    """Where reasoning came from without streaming: a field, inline markers, or none."""
    reasoning_fields: list[str] = Field(default_factory=list)
    """Every reasoning field seen, non-stream and stream (two means the same text is sent twice)."""
    stream_reasoning_source: str = "none"
    streaming_usage: bool = False
    reasoning_tokens_reported: bool = False
    hidden_reasoning: bool = False
    """Reasoning tokens are counted but no reasoning text is returned (OpenAI)."""
    thinking_switch: dict[str, str] = Field(default_factory=dict)
    """Each convention for turning thinking off, and whether the endpoint obeyed it."""
    structured_outputs: dict[str, ModeResult] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    def styles(self) -> list[Style]:
        """The structured-output conventions found enforced, best first, for `run_samples(styles=...)`."""
        return styles_from_probe({mode: check.verdict for mode, check in self.structured_outputs.items()})


def _ask(model: str, text: str, **kw: Any) -> ChatRequest:
    return ChatRequest(model=model, messages=(Message(role="user", content=text),), **kw)


def _check(mode: str, resp: ChatResponse) -> ModeResult:
    if resp.error is not None:
        if resp.http_status is not None and 400 <= resp.http_status < 500:
            return ModeResult(verdict="rejected", detail=resp.error)
        return ModeResult(verdict="inconclusive", detail=resp.error)
    answer = resp.completion.content.strip()
    if not answer:
        return ModeResult(
            verdict="inconclusive", detail=f"no answer (status {resp.completion.status}); raise the token budget"
        )
    if mode.endswith("choice"):
        held = answer in _CHOICES
    elif "regex" in mode:
        held = re.fullmatch(_REGEX, answer) is not None
    else:
        try:
            obj = orjson.loads(answer)
            held = isinstance(obj, dict) and set(obj) == {"qv_code"} and type(obj["qv_code"]) is int
        except orjson.JSONDecodeError:
            held = False
    return ModeResult(verdict="enforced" if held else "ignored", detail=answer[:60])


async def probe(client: ChatClient, model: str, *, max_tokens: int = 2048) -> ProbeResult:
    """Probe the endpoint behind `client`. Raises EndpointError when it cannot be reached at all."""
    served: list[str] = []
    simulated = False
    notes: list[str] = []
    try:
        listing = await client.models()
        data = listing.get("data") or []
        served = [str(m.get("id")) for m in data if isinstance(m, dict)]
        simulated = any(isinstance(m, dict) and m.get("owned_by") == "qualeval-simulated" for m in data)
    except EndpointError as exc:
        notes.append(f"/models unavailable: {exc}")
    question = "What is the capital of France? Answer in one word."
    base, streamed, *offs = await asyncio.gather(
        client.chat(_ask(model, question, max_tokens=max_tokens, stream=False)),
        client.chat(_ask(model, question, max_tokens=max_tokens, stream=True)),
        *(
            client.chat(_ask(model, question, max_tokens=max_tokens, stream=False, extra_body=body))
            for body in _SWITCHES.values()
        ),
    )
    if base.error and streamed.error:
        raise EndpointError(f"{client.config.base_url}: chat completions failed: {base.error}")
    greeting = "Reply with a short friendly greeting."
    modes = list(_MODES)
    checks = await asyncio.gather(
        *(client.chat(_ask(model, greeting, max_tokens=max_tokens, stream=False, extra_body=_MODES[m])) for m in modes)
    )
    result = ProbeResult(
        base_url=client.config.base_url, model=model, simulated=simulated, served_models=served, notes=notes
    )
    result.reasoning_source = base.completion.reasoning_source
    result.reasoning_fields = sorted(set(base.raw_reasoning) | set(streamed.raw_reasoning))
    result.stream_reasoning_source = streamed.completion.reasoning_source
    result.streaming_usage = streamed.error is None and not streamed.usage.completion_estimated
    result.reasoning_tokens_reported = not base.usage.reasoning_estimated
    result.hidden_reasoning = (
        result.reasoning_tokens_reported and (base.usage.reasoning_tokens or 0) > 0 and not base.completion.reasoning
    )
    if len(result.reasoning_fields) > 1:
        result.notes.append("the same reasoning arrives in several fields; qualeval reads one by priority")
    if result.reasoning_source != result.stream_reasoning_source:
        result.notes.append(
            f"stream and non-stream split differently ({result.stream_reasoning_source} vs {result.reasoning_source})"
        )
    result.thinking_switch = {name: _switch_verdict(base, off) for name, off in zip(_SWITCHES, offs, strict=True)}
    result.structured_outputs = {m: _check(m, r) for m, r in zip(modes, checks, strict=True)}
    return result


def _switch_verdict(on: ChatResponse, off: ChatResponse) -> str:
    if off.error:
        return f"rejected: {off.error}"
    had = bool(on.completion.reasoning) or (on.usage.reasoning_tokens or 0) > 0
    if not had:
        return "no reasoning seen either way"
    still = bool(off.completion.reasoning) or (
        not off.usage.reasoning_estimated and (off.usage.reasoning_tokens or 0) > 0
    )
    return "ignored (still reasons)" if still else "works"
