"""Structured outputs as each flavour of the reference server applies (or ignores) them."""

from __future__ import annotations

import json
import random
import re

import pytest

from qualeval.sim.behaviour import AskedConstraint, constrained, regex_example
from tests.conftest import ask, chat, fast_sim, sim_url

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


@pytest.mark.parametrize(
    "pattern", [r"qv-[0-9]{4}", r"(yes|no)", r"[A-D]", r"\d+(\.\d+)?", r"#### \d{1,3}", r"[a-z]+ [a-z]+", r"(?:ab)+c?"]
)
def test_regex_examples_match(pattern: str) -> None:
    assert re.fullmatch(pattern, regex_example(pattern, random.Random(1)))


def test_constrained_choice_and_json() -> None:
    rng = random.Random(0)
    assert constrained(AskedConstraint("choice", ["A", "B"]), "b", rng) == "B"
    assert json.loads(constrained(AskedConstraint("json", SCHEMA), "42", rng)) == {"answer": 42}


@pytest.mark.parametrize(
    ("flavour", "extra", "applied"),
    [
        ("vllm", {"structured_outputs": {"choice": ["left", "right"]}}, True),
        ("vllm", {"structured_outputs": {"choices": ["left", "right"]}}, False),  # the docs' typo: ignored
        ("vllm", {"guided_choice": ["left", "right"]}, False),  # removed in 0.12
        ("vllm-0.10", {"guided_choice": ["left", "right"]}, True),
        ("sglang", {"structured_outputs": {"choice": ["left", "right"]}}, False),
        ("sglang", {"regex": "(left|right)"}, True),
    ],
)
def test_choice_constraints(flavour: str, extra: dict[str, object], applied: bool) -> None:
    with sim_url(fast_sim(flavour)) as url:
        resp = chat(url, ask("Which way?", stream=False, extra_body=extra))
    assert (resp.completion.content.strip() in ("left", "right")) is applied
    assert resp.completion.reasoning  # reasoning-aware servers still think before the constrained answer


def test_json_schema_response_format_everywhere_it_is_accepted() -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}
    for flavour in ("vllm", "sglang", "llamacpp", "ollama", "openai", "inline-think"):
        with sim_url(fast_sim(flavour)) as url:
            resp = chat(url, ask("How many?", stream=True, response_format=fmt))
        assert set(json.loads(resp.completion.content)) == {"answer"}, flavour


def test_reasoning_unaware_server_skips_thinking_under_a_grammar() -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}
    with sim_url(fast_sim("inline-think")) as url:
        resp = chat(url, ask("How many?", response_format=fmt))
    assert resp.completion.reasoning == "" and json.loads(resp.completion.content)


def test_truncated_reasoning_yields_no_json() -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}
    with sim_url(fast_sim("vllm")) as url:
        resp = chat(url, ask("How many?", response_format=fmt, max_tokens=10), {"x-qualeval-sim": "reasoning=50"})
    assert resp.completion.status == "reasoning_truncated" and resp.completion.content == ""


def test_llamacpp_rejects_unknown_response_format_types() -> None:
    with sim_url(fast_sim("llamacpp")) as url:
        resp = chat(url, ask("x", response_format={"type": "regex", "pattern": "a"}))
        bad_switch = chat(url, ask("x", chat_template_kwargs={"enable_thinking": "false"}))
    assert resp.http_status == 400 and 'must be one of "text" or "json_object"' in (resp.error or "")
    assert bad_switch.http_status == 400 and "enable_thinking" in (bad_switch.error or "")


def test_ignore_constraints_switch() -> None:
    with sim_url(fast_sim("vllm", ignore_constraints=True)) as url:
        resp = chat(url, ask("x", extra_body={"structured_outputs": {"choice": ["left", "right"]}}))
    assert resp.completion.content.strip() not in ("left", "right")
