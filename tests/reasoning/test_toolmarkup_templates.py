"""find_markup reads back exactly the calls that real chat templates (llama.cpp's models/templates) write.

The markup each template renders for an assistant turn with tool calls is kept in
tests/data/toolmarkup_rendered.json, so these tests run without the templates; where the templates are on this
machine (../shared/data/chat_templates, or QUALEVAL_CHAT_TEMPLATES), the file is checked against a fresh render.
Rewrite it with `python -m tests.reasoning.test_toolmarkup_templates --write`."""

from __future__ import annotations

import datetime
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from qualeval.reasoning import Markup, find_markup
from qualeval.records import ToolCall

ROOT = Path(__file__).resolve().parents[2]
RENDERED = ROOT / "tests" / "data" / "toolmarkup_rendered.json"

# (template, format, most calls the template writes in one turn)
TEMPLATES: tuple[tuple[str, str, int], ...] = (
    ("Qwen-Qwen2.5-7B-Instruct", "hermes", 2),
    ("Qwen-Qwen3-0.6B", "hermes", 2),
    ("Qwen-QwQ-32B", "hermes", 2),
    ("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", "hermes", 2),
    ("NousResearch-Hermes-3-Llama-3.1-8B-tool_use", "hermes", 2),
    ("Qwen3.5-4B", "qwen3_xml", 2),
    ("Qwen3-Coder", "qwen3_xml", 2),
    ("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "qwen3_xml", 2),
    ("Kimi-K2-Instruct", "kimi_k2", 2),
    ("Kimi-K2-Thinking", "kimi_k2", 2),
    ("moonshotai-Kimi-K2", "kimi_k2", 2),
    ("openai-gpt-oss-120b", "harmony", 1),
    ("deepseek-ai-DeepSeek-V3.1", "deepseek_v31", 2),
    ("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek_v3", 2),
    ("llama-cpp-deepseek-r1", "deepseek_v3", 2),
    ("deepseek-ai-DeepSeek-V3.2", "dsml", 2),
    ("deepseek-ai-DeepSeek-V4", "dsml", 2),
    ("GLM-4.6", "glm", 2),
    ("GLM-4.7-Flash", "glm", 2),
    ("MiniMax-M2", "minimax_m2", 2),
    ("Mistral-Small-3.2-24B-Instruct-2506", "mistral", 2),
    ("unsloth-mistral-Devstral-Small-2507", "mistral", 2),
    ("mistralai-Ministral-3-14B-Reasoning-2512", "mistral", 2),
    ("mistralai-Mistral-Nemo-Instruct-2407", "mistral_json", 2),
    ("meta-llama-Llama-3.1-8B-Instruct", "llama3_json", 1),
    ("meta-llama-Llama-3.2-3B-Instruct", "llama3_json", 1),
    ("meta-llama-Llama-3.3-70B-Instruct", "llama3_json", 1),
)

# a string, a number, then a nested object with a list and a boolean, and a string with a space
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_weather", {"city": "Paris", "days": 3}),
    ("book_table", {"options": {"seats": [1, 2], "vip": True}, "note": "by the window"}),
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": name.replace("_", " "),
            "parameters": {"type": "object", "properties": {key: {"type": "string"} for key in args}},
        },
    }
    for name, args in CALLS
]


def template_dir() -> Path | None:
    named = os.environ.get("QUALEVAL_CHAT_TEMPLATES")
    candidates = [Path(named)] if named else [p / "shared" / "data" / "chat_templates" for p in ROOT.parents]
    return next((p for p in candidates if p.is_dir()), None)


def _environment() -> Any:
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])

    def tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, **kw: Any) -> str:
        # as transformers' chat-template tojson: no HTML escaping; generators (map(...)) become lists
        value = value if isinstance(value, dict | list | str | int | float | bool | None) else list(value)
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, **kw)

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC).strftime(fmt)
    return env


def _messages(count: int, string_args: bool) -> list[dict[str, Any]]:
    calls = [
        {
            # Mistral's templates want ids of 9 letters and digits
            "id": f"call{index}abcd",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args) if string_args else args},
        }
        for index, (name, args) in enumerate(CALLS[:count])
    ]
    return [{"role": "user", "content": "Plan my evening."}, {"role": "assistant", "content": "", "tool_calls": calls}]


def render_markup(path: Path, count: int) -> str:
    """What the template writes for the assistant's turn (its header too): the render past the user's turn."""
    template = _environment().from_string(path.read_text(encoding="utf-8"))
    common = {"tools": TOOLS, "bos_token": "<s>", "eos_token": "</s>"}
    for string_args in (False, True):
        try:
            messages = _messages(count, string_args)
            full = template.render(messages=messages, add_generation_prompt=False, **common)
            prompt = template.render(messages=messages[:1], add_generation_prompt=False, **common)
        except (ValueError, TypeError, AttributeError) as exc:
            error: Exception = exc
            continue
        if "{'" not in full:  # a template that printed a Python dict wants the arguments as text
            shared = next((i for i, (a, b) in enumerate(zip(full, prompt, strict=False)) if a != b), len(prompt))
            return full[shared:]
        error = ValueError("the template printed the arguments as a Python dict")
    raise error


def expected_calls(count: int) -> list[dict[str, str]]:
    return [{"name": name, "arguments": json.dumps(args)} for name, args in CALLS[:count]]


def render_all(folder: Path) -> list[dict[str, Any]]:
    cases = []
    for name, fmt, most in TEMPLATES:
        for count in sorted({1, most}):
            text = render_markup(folder / f"{name}.jinja", count)
            cases.append({"template": name, "format": fmt, "calls": expected_calls(count), "text": text})
    return cases


def rendered_cases() -> list[dict[str, Any]]:
    return json.loads(RENDERED.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", rendered_cases(), ids=lambda c: f"{c['template']}-{len(c['calls'])}")
def test_reads_back_the_calls_a_template_rendered(case: dict[str, Any]) -> None:
    calls = tuple(ToolCall(**call) for call in case["calls"])
    assert find_markup(case["text"]) == Markup(case["format"], calls, True)


@pytest.mark.parametrize("case", rendered_cases(), ids=lambda c: f"{c['template']}-{len(c['calls'])}")
def test_a_call_cut_anywhere_is_not_whole(case: dict[str, Any]) -> None:
    """Cut inside the last call's markup: the calls before it are read, and the markup is not whole."""
    text, last = case["text"], case["calls"][-1]
    cut = text.index(last["name"]) + len(last["name"]) + 3
    found = find_markup(text[:cut])
    assert found is not None and found.format.split("_")[0] == case["format"].split("_")[0]
    assert not found.whole
    assert [c.name for c in found.calls] == [c["name"] for c in case["calls"][:-1]]


def test_every_format_is_rendered_by_a_template() -> None:
    from qualeval.reasoning import markup_formats

    assert {fmt.name for fmt in markup_formats()} == {case["format"] for case in rendered_cases()}


def test_the_kept_markup_is_what_the_templates_render() -> None:
    folder = template_dir()
    if folder is None:
        pytest.skip("llama.cpp's chat templates are not on this machine (../shared/data/chat_templates)")
    assert render_all(folder) == rendered_cases()


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    found = template_dir()
    if found is None:
        raise SystemExit("no chat templates: set QUALEVAL_CHAT_TEMPLATES")
    RENDERED.write_text(json.dumps(render_all(found), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
