"""What every flavour is made of: the `Flavour` record, the usage arithmetic and chunks the wire formats share,
and the request readers (structured-output parameters, the thinking switch) a flavour picks from.

A stream is a list of steps `(tokens, data)`: the server spends `tokens` decode steps, then sends `data`
(None: the tokens produced no chunk, like vLLM's dropped `<think>`/`</think>` deltas or OpenAI's hidden
reasoning).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from qualeval.sim.behaviour import AskedConstraint, Effort, PlannedReply
from qualeval.sim.frames import Ctx, RequestRejected, ServerHooks, Step, sse
from qualeval.sim.observe import Metrics
from qualeval.sim.toolengine import OPENAI_API, Engine

__all__ = [
    "OPEN_PARAMS",
    "ConstraintReader",
    "Flavour",
    "always_thinks",
    "chatcmpl_id",
    "completion_tokens",
    "counts",
    "plain_usage",
    "read_constraint",
    "read_thinking",
    "response_format",
    "schema_of",
    "template_thinking",
    "text",
    "token_steps",
    "usage_chunk",
]

ConstraintReader = Callable[[dict[str, Any]], AskedConstraint | None]
"""Request body -> the constraint one family of parameters asks for, or None; raises RequestRejected."""


def chatcmpl_id(hex_id: str, n: int) -> str:
    return f"chatcmpl-{hex_id}"


def template_thinking(body: dict[str, Any]) -> bool:
    """`chat_template_kwargs.enable_thinking`, as a Qwen3-style template reads it."""
    kwargs = body.get("chat_template_kwargs") or {}
    value = kwargs.get("enable_thinking", True) if isinstance(kwargs, dict) else True
    return bool(value)  # the template tests truthiness, so the string "false" leaves thinking on


def always_thinks(body: dict[str, Any]) -> bool:
    """The server has no switch: the model thinks on every request."""
    return True


@dataclass(frozen=True, slots=True)
class Flavour:
    name: str
    description: str
    whole: Callable[[PlannedReply, Ctx], bytes]
    stream: Callable[[PlannedReply, Ctx], list[Step]]
    constraints: tuple[ConstraintReader, ...] = ()
    """Structured-output parameters this server applies, in the order it reads them (a later match wins)."""
    thinking: Callable[[dict[str, Any]], bool] = template_thinking
    """Request body -> whether the model thinks, as this server's switch decides; raises RequestRejected."""
    reasoning_aware: bool = True
    """Grammar applies after the reasoning (a reasoning parser is on); False: from the first token."""
    reasoning: bool = True
    """False: a model that never thinks, whatever the request says."""
    known_params: frozenset[str] | None = None
    """When set, any other top-level request key is a 400, as OpenAI's API answers."""
    response_id: Callable[[str, int], str] = chatcmpl_id
    """(32 hex digits, request number) -> the response `id`, in this server's style."""
    metrics: Metrics | None = None
    """This server's `/metrics` names; None: its real counterpart has neither `/metrics` nor `/tokenize`."""
    hooks: ServerHooks | None = None
    """The server reads requests and answers its other routes its own way (llama.cpp)."""
    any_model: bool = False
    """Any model name is answered by the loaded model (llama-server); others refuse a name they do not serve."""
    bare_routes: bool = False
    """Routes answer without the `/v1` prefix too (llama-server, DeepSeek's API); others only under it."""
    budget_param: str | None = None
    """The request key of this server's own per-request thinking budget, in tokens (vLLM >= 0.20:
    `thinking_token_budget`); None: it has none."""
    tool_engine: Engine = OPENAI_API
    """How this server puts tool calls on the wire (ids, arguments, chunking)."""
    reads_back: str | None = "reasoning_content"
    """The field of an earlier assistant turn whose reasoning this server takes into the prompt (qualeval.sim.
    passback); any other is dropped without a word. None: it reads none back."""


# --- usage and chunks ----------------------------------------------------------------------------------


def text(tokens: list[str]) -> str:
    return "".join(tokens)


def completion_tokens(gen: PlannedReply) -> int:
    """Reasoning, the closing marker when the reasoning closed, and the answer."""
    return len(gen.reasoning) + len(gen.answer) + (1 if gen.reasoning and gen.closed else 0)


def counts(gen: PlannedReply, ctx: Ctx) -> tuple[int, int, int]:
    """(prompt, completion, reasoning) tokens."""
    return ctx.prompt_tokens, completion_tokens(gen), len(gen.reasoning)


def plain_usage(gen: PlannedReply, ctx: Ctx) -> dict[str, Any]:
    prompt, completion, _ = counts(gen, ctx)
    return {"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion}


def token_steps(
    gen: PlannedReply,
    reasoning: Callable[[str, bool], bytes],
    answer: Callable[[str, bool], bytes],
    first_tick: int = 1,
) -> list[Step]:
    """One chunk per token: the reasoning's, the unseen end of the block where it closed, then the answer's.

    `reasoning` and `answer` make a token's chunk, told whether it is the first; servers that send a role chunk
    before any token write the first token in the same decode step (`first_tick` 0).
    """
    steps: list[Step] = []
    for token in gen.reasoning:
        first = not steps
        steps.append((first_tick if first else 1, reasoning(token, first)))
    if gen.reasoning and gen.closed:
        steps.append((1, None))
    for token in gen.answer:
        first = not steps
        steps.append((first_tick if first else 1, answer(token, first)))
    return steps


def usage_chunk(ctx: Ctx, usage: dict[str, Any]) -> bytes:
    """The `include_usage` chunk: no choices, only usage."""
    return sse(
        {
            "id": ctx.id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [],
            "usage": usage,
        }
    )


# --- structured outputs and the thinking switch, as a server reads them ---------------------------------


def response_format(body: dict[str, Any]) -> AskedConstraint | None:
    """OpenAI's `response_format`: json_schema or json_object; any other type but text is a 400."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict):
        return None
    kind = fmt.get("type")
    if kind == "json_schema":
        spec = fmt.get("json_schema") or {}
        return AskedConstraint("json", spec.get("schema") if isinstance(spec, dict) else None)
    if kind == "json_object":
        return AskedConstraint("json", fmt.get("schema"))
    if kind not in ("text", None):
        raise RequestRejected(400, f"unsupported response_format type: {kind!r}")
    return None


def schema_of(value: Any) -> Any:
    """A JSON schema given as an object or as its JSON text."""
    return orjson.loads(value) if isinstance(value, str) else value


OPEN_PARAMS: tuple[ConstraintReader, ...] = (response_format,)
"""What most servers read: `response_format` alone."""


def read_constraint(flavour: Flavour, body: dict[str, Any]) -> AskedConstraint | None:
    """The constraint this server would apply to the request, or None. Raises RequestRejected."""
    if flavour.known_params is not None:
        unknown = sorted(set(body) - flavour.known_params)
        if unknown:
            raise RequestRejected(400, f"Unrecognized request argument supplied: {', '.join(unknown)}")
    found: AskedConstraint | None = None
    for reader in flavour.constraints:
        found = reader(body) or found
    return found


_EFFORT = {"minimal": 0.15, "low": 0.35, "medium": 1.0, "high": 2.0}
"""`reasoning_effort` as a share of the thinking a question needs."""


def read_effort(flavour: Flavour, body: dict[str, Any]) -> Effort | None:
    """What the request allows the thinking, when it says: a reasoning effort, this server's thinking budget."""
    effort = body.get("reasoning_effort")
    budget = body.get(flavour.budget_param) if flavour.budget_param else None
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        budget = None  # -1 (vLLM): no budget
    if effort not in _EFFORT and budget is None:
        return None
    return Effort(scale=_EFFORT.get(str(effort), 1.0), budget=budget)


def read_thinking(flavour: Flavour, body: dict[str, Any]) -> bool:
    """Whether the model thinks on this request, as the server's switch decides."""
    return flavour.reasoning and flavour.thinking(body)
