"""Wire formats of real servers, reproduced field for field (see shared docs: wire-formats.md), and the one table
of them. Every other part reads `FLAVOURS`: the server (which checks `SimConfig.flavour` against it), the CLI's
list of flavours, the tests.

A flavour is one entry here: its wire format (each server's in a module of its own), the parameters it reads
and the extras it serves. A variant of a known server is one more entry; a new server is one more module too.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from qualeval.sim.flavours import deepseek, llamacpp, llamacpp_server, ollama, openai, openrouter, sglang, vllm
from qualeval.sim.flavours.common import OPEN_PARAMS, Flavour, always_thinks, response_format
from qualeval.sim.flavours.unparsed import unparsed
from qualeval.sim.toolengine import LLAMACPP, VLLM

__all__ = ["FLAVOURS", "Flavour", "table"]

_VLLM_NEW = (response_format, vllm.structured_outputs)


def table(*flavours: Flavour) -> Mapping[str, Flavour]:
    """Flavours by name, read-only: a server or test that wants another flavour builds a table of its own."""
    return MappingProxyType({f.name: f for f in flavours})


FLAVOURS: Mapping[str, Flavour] = table(
    Flavour(
        "vllm",
        "vLLM >= 0.16 (as 0.33): `reasoning`, usage reasoning_tokens",
        *vllm.wire("0.33"),
        tool_engine=VLLM,
        constraints=_VLLM_NEW,
        metrics=vllm.METRICS,
        budget_param="thinking_token_budget",  # vLLM >= 0.20: a logits processor closes the block there
        reads_back="reasoning",  # vLLM >= 0.16 reads only `reasoning` back and drops `reasoning_content` (vLLM #38488)
    ),
    Flavour(
        "vllm-0.13",
        "vLLM 0.11.1-0.15: `reasoning` and `reasoning_content` both",
        *vllm.wire("0.13"),
        tool_engine=VLLM,
        constraints=_VLLM_NEW,
        metrics=vllm.METRICS,
        reads_back="reasoning",  # chat_utils reads `reasoning` back since the rename; taken as 0.33 does
    ),
    Flavour(
        "vllm-0.10",
        "vLLM <= 0.11.0: `reasoning_content`, guided_* parameters",
        *vllm.wire("0.10"),
        tool_engine=VLLM,
        constraints=(response_format, vllm.guided),
        metrics=vllm.METRICS,
        reads_back=None,  # before interleaved thinking (vLLM #28531), no reasoning reached the template
    ),
    Flavour(
        "vllm-qwen3-leak",
        "vLLM 0.13 qwen3 parser with a template that opens <think>: leaks",
        *vllm.wire("0.13", vllm.qwen3_leak),
        tool_engine=VLLM,
        constraints=_VLLM_NEW,
        metrics=vllm.METRICS,
        reads_back="reasoning",  # as vllm-0.13
    ),
    Flavour(
        "sglang",
        "SGLang 0.5.14-0.5.22: `reasoning_content`, top-level usage.reasoning_tokens",
        sglang.whole,
        sglang.stream,
        constraints=(response_format, sglang.regex),
        response_id=sglang.response_id,
        metrics=sglang.METRICS,
    ),
    Flavour(
        "llamacpp",
        "llama-server b11434: `reasoning_content`, `timings`, GBNF `grammar`, its own errors and routes",
        llamacpp.whole,
        llamacpp.stream,
        metrics=llamacpp.METRICS,
        hooks=llamacpp_server.HOOKS,
        tool_engine=LLAMACPP,  # reads its own parameters, switches and errors
        any_model=True,
        bare_routes=True,
    ),
    Flavour(
        "ollama",
        'Ollama >= v0.32.6: `reasoning`, content "" when truncated',
        ollama.whole,
        ollama.stream,
        constraints=OPEN_PARAMS,
        thinking=ollama.thinking,
        reasoning_aware=False,
        response_id=ollama.response_id,
        reads_back="reasoning",  # its OpenAI layer reads `reasoning` into the message's thinking
    ),
    Flavour(
        "deepseek",
        "DeepSeek API: `reasoning_content`, usage on the finish chunk",
        deepseek.whole,
        deepseek.stream,
        thinking=deepseek.thinking,
        response_id=deepseek.response_id,
    ),
    Flavour(
        "openai",
        "OpenAI: no reasoning text, only usage reasoning_tokens",
        openai.whole,
        openai.stream,
        constraints=OPEN_PARAMS,
        thinking=openai.thinking,
        known_params=openai.PARAMS,
        reads_back=None,  # Chat Completions takes no reasoning back
    ),
    Flavour(
        "openrouter",
        "OpenRouter: `reasoning` + `reasoning_details`, SSE comments",
        openrouter.whole,
        openrouter.stream,
        constraints=OPEN_PARAMS,
        thinking=always_thinks,
        response_id=openrouter.response_id,
        reads_back="reasoning",  # `reasoning` (and `reasoning_details`), passed on to the provider
    ),
    Flavour(
        "inline-think",
        "no reasoning parser: <think>...</think> inside content",
        *vllm.wire("0.33", unparsed("think"), parser=False),
        tool_engine=VLLM,
        constraints=OPEN_PARAMS,
        reasoning_aware=False,
        metrics=vllm.METRICS,
        reads_back="reasoning",  # vLLM 0.33 without a parser: it still reads `reasoning` back
    ),
    Flavour(
        "think-close-only",
        "template opens <think>: content holds reasoning...</think>answer",
        *vllm.wire("0.33", unparsed("close-only"), parser=False),
        tool_engine=VLLM,
        constraints=OPEN_PARAMS,
        reasoning_aware=False,
        metrics=vllm.METRICS,
        reads_back="reasoning",  # as inline-think
    ),
    Flavour(
        "harmony",
        "gpt-oss Harmony channels inside content (no parser)",
        *vllm.wire("0.33", unparsed("harmony"), parser=False),
        tool_engine=VLLM,
        constraints=OPEN_PARAMS,
        thinking=always_thinks,
        reasoning_aware=False,
        metrics=vllm.METRICS,
        reads_back="reasoning",  # as inline-think
    ),
    Flavour(
        "plain",
        "a non-reasoning model: content only",
        *vllm.wire("0.33", unparsed("plain"), parser=False),
        tool_engine=VLLM,
        constraints=OPEN_PARAMS,
        reasoning=False,
        reasoning_aware=False,
        metrics=vllm.METRICS,
        reads_back=None,  # a model that never thinks: its template writes no reasoning
    ),
)
