"""Constraints: derived from the answer spec, sent per endpoint convention, validated, and the modes."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from typing import Any

import pytest

import qualeval
from qualeval.errors import InputError
from qualeval.figures.accuracy import summarize
from qualeval.records import AnswerSpec, Record, styles_from_probe
from qualeval.run.pipeline import resolve_mode
from qualeval.scoring.constrain import constraint_for, request_params, validate
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.tasks import build_samples, load_task

CHOICE = AnswerSpec(type="choice")


def test_constraint_per_answer_type() -> None:
    c = constraint_for(CHOICE, ("w", "x", "y"))
    assert (c.kind, c.choices, c.pattern) == ("choice", ("A", "B", "C"), "(A|B|C)")
    n = constraint_for(AnswerSpec(type="number"))
    assert n.kind == "regex" and n.pattern and n.schema_["properties"]["answer"]["type"] == "number"
    assert constraint_for(AnswerSpec(type="boolean")).choices == ("yes", "no")
    assert constraint_for(AnswerSpec(type="choice", labels="text"), ("up", "down")).choices == ("up", "down")
    assert constraint_for(AnswerSpec(type="text")).kind == "json"


def test_request_params_per_style() -> None:
    c = constraint_for(CHOICE, ("w", "x"))
    assert request_params(c, "structured_outputs") == ("choice", {"structured_outputs": {"choice": ["A", "B"]}})
    assert request_params(c, "guided") == ("choice", {"guided_choice": ["A", "B"]})
    assert request_params(c, "sglang") == ("regex", {"regex": "(A|B)"})
    kind, params = request_params(c, "response_format")
    assert kind == "json" and params["response_format"]["json_schema"]["schema"]["properties"]["answer"]["enum"] == [
        "A",
        "B",
    ]


def test_llamacpp_conventions_grammar_and_json_schema() -> None:
    choice = constraint_for(AnswerSpec(type="choice", labels="text"), ('say "hi"', "back\\slash"))
    assert request_params(choice, "grammar") == ("choice", {"grammar": 'root ::= "say \\"hi\\"" | "back\\\\slash"\n'})
    kind, params = request_params(constraint_for(AnswerSpec(type="number")), "grammar")
    assert kind == "regex" and params["grammar"].startswith('root ::= "-"?')
    kind, params = request_params(constraint_for(AnswerSpec(type="text")), "grammar")
    assert kind == "json" and 'root ::= "{\\"answer\\": " string "}"' in params["grammar"]
    kind, params = request_params(choice, "json_schema")
    assert kind == "json" and params["json_schema"]["properties"]["answer"]["enum"] == ['say "hi"', "back\\slash"]


@pytest.mark.parametrize(
    ("spec", "choices"),
    [
        (CHOICE, ("w", "x", "y")),
        (AnswerSpec(type="boolean"), ()),
        (AnswerSpec(type="number"), ()),
        (AnswerSpec(type="text"), ()),
        (AnswerSpec(type="choice", labels="text"), ('say "hi"', "back\\slash", "two\nlines")),
    ],
    ids=["letters", "yes-no", "number", "text", "texts"],
)
def test_everything_a_grammar_lets_through_validates(spec: AnswerSpec, choices: tuple[str, ...]) -> None:
    import random

    from qualeval.sim.gbnf import parse_grammar  # parses GBNF as llama-server does, and samples its language

    constraint = constraint_for(spec, choices)
    kind, params = request_params(constraint, "grammar")
    grammar, rng = parse_grammar(params["grammar"]), random.Random(0)
    for _ in range(300):
        text = grammar.sample(rng)
        assert validate(constraint, kind, text)[0], text


@pytest.mark.parametrize(
    ("kind", "content", "held", "answer"),
    [
        ("choice", "B", True, "B"),
        ("choice", " B\n", True, "B"),
        ("choice", "E", False, None),
        ("json", '{"answer": "A"}', True, "A"),
        ("json", '{"answer": "Q"}', False, None),
        ("json", '{"answer": "A", "why": 1}', False, None),
        ("json", "A", False, None),
    ],
)
def test_validation_never_trusts_the_server(kind: str, content: str, held: bool, answer: str | None) -> None:
    assert validate(constraint_for(CHOICE, ("w", "x", "y", "z")), kind, content) == (held, answer)


def test_styles_from_probe_verdicts() -> None:
    verdicts = {
        "guided.choice": "ignored",
        "structured_outputs.choice": "enforced",
        "response_format.json": "enforced",
        "sglang.regex": "rejected",
    }
    assert styles_from_probe(verdicts) == ["structured_outputs", "response_format"]
    assert styles_from_probe({}) == []


def run(flavour: str, mode: str, styles: Sequence[str], *, limit: int = 12, **sim: Any) -> list[Record]:
    task = load_task("mmlu:anatomy")
    from tests.conftest import SHARED

    samples = build_samples(task, data=SHARED / "mmlu", limit=limit)
    config = SimConfig(
        flavour=flavour,
        port=0,
        tasks=("mmlu:anatomy",),
        task_data=SHARED / "mmlu",
        behaviour=Behaviour(accuracy=1.0, reasoning_tokens=30),
        latency=Latency(burst=True),
        **sim,
    )
    # the run's own path: `styles` is the convention forced (probed, so the reasoning channel is known), or none
    # known (no probe to find one)
    options: dict[str, Any] = {"constraint": mode, "constraint_style": styles[0] if styles else None}
    with running_server(config) as url, tempfile.TemporaryDirectory() as out:
        result = qualeval.evaluate(
            "sim", "mmlu:anatomy", base_url=url, out=out, data=str(SHARED / "mmlu"), limit=limit, warmup=0,
            probe=bool(styles), **options,
        )  # fmt: skip
        records = result.records
    assert sorted(r.sample_id for r in records) == sorted(s.id for s in samples)  # the same items
    return records


needs_mmlu = pytest.mark.skipif(
    not (__import__("tests.conftest").conftest.SHARED / "mmlu").exists(), reason="../shared/data/mmlu missing"
)


@needs_mmlu
def test_single_mode_on_a_server_that_enforces() -> None:
    records = run("vllm", "single", ["structured_outputs"])
    assert all(r.constraint.held is True and r.extraction.rung == "constraint" for r in records)
    assert all(r.score.correct for r in records)
    assert all(
        r.request.model_dump(mode="json")["structured_outputs"]["choice"] == ["A", "B", "C", "D"] for r in records
    )
    assert all(r.reasoning for r in records)  # the grammar applies after the thinking


@needs_mmlu
def test_a_constraint_the_server_ignored_is_recorded_and_the_ladder_takes_over() -> None:
    records = run("vllm", "single", ["guided"])  # vLLM >= 0.12 silently drops guided_*
    assert all(r.constraint.held is False for r in records)
    assert all(r.extraction.rung == "anchor" and r.score.correct for r in records)
    assert summarize("t", [r.outcome() for r in records]).constraint_held == {"broken": len(records)}


@needs_mmlu
def test_followup_mode_keeps_its_cost_apart() -> None:
    records = run("vllm", "followup", ["structured_outputs"])
    for r in records:
        assert r.constraint.mode == "followup" and r.constraint.held is True and r.constraint.agreement == "agrees"
        follow = r.constraint.followup
        assert follow is not None and follow.content.strip() in "ABCD"
        assert (follow.usage.completion_tokens or 0) < (r.usage.completion_tokens or 0)
        assert "structured_outputs" not in r.request.model_dump(mode="json")  # the main request went out unconstrained
        assert r.score.correct and r.extraction.rung == "anchor"  # the content's own answer, confirmed
        asked = follow.request.messages  # what the follow-up sent is kept, as the main request is
        assert len(asked) == 1 and "Response:" in asked[0].content
        assert "Answer: X" not in asked[0].content  # the task's instruction, a template to copy, is not shown


@needs_mmlu
def test_single_or_followup_without_any_enforced_convention_is_refused() -> None:
    for mode in ("single", "followup"):
        with pytest.raises(InputError, match=f"--constraint {mode}: no structured-output convention"):
            run("deepseek", mode, [])


def test_resolve_mode_never_constrains_from_the_first_token_on_its_own() -> None:
    assert resolve_mode("auto", ["structured_outputs"]) == ("single", "structured_outputs", None)
    mode, style, note = resolve_mode("auto", ["response_format"], inline="inline:paired")
    assert (mode, style) == ("followup", "response_format") and note and "inline:paired" in note
    assert resolve_mode("auto", ["grammar", "json_schema"])[:2] == ("single", "json_schema")
    assert resolve_mode("auto", ["grammar"])[:2] == ("followup", "grammar")  # grammar binds from the first token
    assert resolve_mode("auto", [])[:2] == ("off", None)
    assert resolve_mode("off", ["structured_outputs"]) == ("off", None, None)


def test_without_a_reasoning_channel_a_constraint_never_takes_the_working_a_prompt_asks_for() -> None:
    # thinking off on a server that separates reasoning: a constraint would bind from the first token
    mode, style, note = resolve_mode("auto", ["structured_outputs"], thinking=False)
    assert (mode, style) == ("followup", "structured_outputs") and note and "thinking is off" in note
    mode, _, note = resolve_mode("single", ["structured_outputs"], thinking=False)
    assert mode == "followup" and note and "working the prompt asks for" in note
    # a prompt that asks for the answer alone loses nothing to it: an explicit single stays single
    mode, _, note = resolve_mode("single", ["response_format"], inline="none", bare=True)
    assert mode == "single" and note and "first token" in note
    assert resolve_mode("auto", ["response_format"], inline="none", bare=True)[0] == "followup"
    assert resolve_mode("single", ["structured_outputs"], thinking=True)[:2] == ("single", "structured_outputs")


@needs_mmlu
def test_auto_picks_single_only_when_something_is_enforced() -> None:
    assert all(r.constraint.mode == "single" for r in run("sglang", "auto", ["sglang"], limit=3))
    assert all(r.constraint.mode == "off" for r in run("sglang", "auto", [], limit=3))


@needs_mmlu
def test_truncated_reasoning_under_a_constraint_gives_no_answer_and_no_verdict() -> None:
    task = load_task("mmlu:anatomy")
    from tests.conftest import SHARED

    samples = build_samples(task, data=SHARED / "mmlu", limit=3)
    config = SimConfig(port=0, behaviour=Behaviour(reasoning_tokens=400), latency=Latency(burst=True))
    with running_server(config) as url, tempfile.TemporaryDirectory() as out:  # the run's own path
        result = qualeval.evaluate(
            "sim", "mmlu:anatomy", base_url=url, out=out, data=str(SHARED / "mmlu"), limit=3, warmup=0,
            constraint="single", constraint_style="structured_outputs", max_tokens=20, rescue=True,
        )  # fmt: skip
        records = result.records
    assert sorted(r.sample_id for r in records) == sorted(s.id for s in samples)
    for r in records:
        assert r.status == "reasoning_truncated" and r.constraint.held is None
        assert r.extraction.rung == "none" and not r.score.correct
        assert r.rescue is not None and r.rescue.rung in ("rescue", "none")
    json.dumps([r.model_dump() for r in records])  # records serialise
