"""Tool calls written as the model writes them, in each format engines parse: the text a server leaves in the
content or the reasoning when its tool parser misses the call.

Written from the chat templates that render these calls (llama.cpp's `models/templates/`, named beside each
writer) and nothing else: no module of the server imports qualeval's markup reader, so a test that reads this
text back checks the reader against a writer of its own, not the reader against itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["MARKUP_FORMATS", "write_calls"]

Call = tuple[str, dict[str, Any]]
"""(function name, arguments)."""


def _json(value: Any) -> str:
    # templates write `tojson`: ", " and ": " separators, non-ASCII kept
    return json.dumps(value, ensure_ascii=False)


def _raw(value: Any) -> str:
    """A parameter value as the XML-like templates write it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else _json(value)


def _hermes(calls: Sequence[Call]) -> str:
    # Qwen-Qwen2.5-7B-Instruct.jinja, NousResearch-Hermes-*-tool_use.jinja
    return "\n".join(f"<tool_call>\n{_json({'name': n, 'arguments': a})}\n</tool_call>" for n, a in calls)


def _qwen3_xml(calls: Sequence[Call]) -> str:
    # Qwen3-Coder.jinja, Qwen3.5-4B.jinja: one parameter a tag, its value on lines of its own
    def one(name: str, args: dict[str, Any]) -> str:
        params = "".join(f"<parameter={k}>\n{_raw(v)}\n</parameter>\n" for k, v in args.items())
        return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"

    return "\n".join(one(n, a) for n, a in calls)


def _kimi_k2(calls: Sequence[Call]) -> str:
    # Kimi-K2-Thinking.jinja: the call id is functions.NAME:COUNTER, the arguments JSON
    body = "".join(
        f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{_json(a)}<|tool_call_end|>"
        for i, (n, a) in enumerate(calls)
    )
    return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>"


def _harmony(calls: Sequence[Call]) -> str:
    # openai-gpt-oss-120b.jinja: a commentary message to=functions.NAME; <|call|> ends the turn, so each later call
    # opens a message of its own
    return "".join(
        f"{'<|start|>assistant' if i else ''}<|channel|>commentary to=functions.{n} <|constrain|>json"
        f"<|message|>{_json(a)}<|call|>"
        for i, (n, a) in enumerate(calls)
    )


def _deepseek_v3(calls: Sequence[Call]) -> str:
    # deepseek-ai-DeepSeek-R1-Distill-*.jinja: `function` and the name, the arguments in a json fence
    body = "\n".join(
        f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{_json(a)}\n```<｜tool▁call▁end｜>" for n, a in calls
    )
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def _deepseek_v31(calls: Sequence[Call]) -> str:
    # deepseek-ai-DeepSeek-V3.1.jinja: the name, the separator, the arguments
    body = "".join(f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{_json(a)}<｜tool▁call▁end｜>" for n, a in calls)
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def _dsml(calls: Sequence[Call]) -> str:
    # deepseek-ai-DeepSeek-V3.2.jinja: string="true" for a text value written as it is, "false" for JSON
    token = "｜DSML｜"

    def param(key: str, value: Any) -> str:
        text = isinstance(value, str)
        return (
            f'<{token}parameter name="{key}" string="{"true" if text else "false"}">'
            f"{value if text else _json(value)}</{token}parameter>\n"
        )

    invokes = "".join(
        f'<{token}invoke name="{n}">\n' + "".join(param(k, v) for k, v in a.items()) + f"</{token}invoke>\n"
        for n, a in calls
    )
    return f"<{token}function_calls>\n{invokes}</{token}function_calls>"


def _glm(calls: Sequence[Call]) -> str:
    # GLM-4.6.jinja: the name right after <tool_call>, then key/value tag pairs
    def one(name: str, args: dict[str, Any]) -> str:
        pairs = "".join(f"\n<arg_key>{k}</arg_key>\n<arg_value>{_raw(v)}</arg_value>" for k, v in args.items())
        return f"<tool_call>{name}{pairs}\n</tool_call>"

    return "\n".join(one(n, a) for n, a in calls)


def _minimax_m2(calls: Sequence[Call]) -> str:
    # MiniMax-M2.jinja: invoke and parameter tags inside one <minimax:tool_call> block
    invokes = "".join(
        f'<invoke name="{n}">\n'
        + "".join(f'<parameter name="{k}">{_raw(v)}</parameter>\n' for k, v in a.items())
        + "</invoke>\n"
        for n, a in calls
    )
    return f"<minimax:tool_call>\n{invokes}</minimax:tool_call>"


def _mistral(calls: Sequence[Call]) -> str:
    # Mistral-Small-3.2-24B-Instruct-2506.jinja: [TOOL_CALLS]NAME[ARGS]{json} a call, no closing token
    return "".join(f"[TOOL_CALLS]{n}[ARGS]{_json(a)}" for n, a in calls)


def _mistral_json(calls: Sequence[Call]) -> str:
    # mistralai-Mistral-Nemo-Instruct-2407.jinja: every call in one JSON list
    return "[TOOL_CALLS]" + _json([{"name": n, "arguments": a} for n, a in calls])


def _llama3_json(calls: Sequence[Call]) -> str:
    # meta-llama-Llama-3.1-8B-Instruct.jinja: {"name": ..., "parameters": ...} as the whole reply
    return "; ".join(_json({"name": n, "parameters": a}) for n, a in calls)


_WRITERS: dict[str, Callable[[Sequence[Call]], str]] = {
    "hermes": _hermes,
    "qwen3_xml": _qwen3_xml,
    "kimi_k2": _kimi_k2,
    "harmony": _harmony,
    "deepseek_v3": _deepseek_v3,
    "deepseek_v31": _deepseek_v31,
    "dsml": _dsml,
    "glm": _glm,
    "minimax_m2": _minimax_m2,
    "mistral": _mistral,
    "mistral_json": _mistral_json,
    "llama3_json": _llama3_json,
}

MARKUP_FORMATS = tuple(_WRITERS)
"""The formats, named as vLLM's `--tool-call-parser` and qualeval's `parsers/tools/*.yaml` name them."""


def write_calls(fmt: str, calls: Sequence[Call]) -> str:
    """The calls as a model writes them in `fmt` (one of MARKUP_FORMATS)."""
    return _WRITERS[fmt](calls)
