"""Sampling per thinking mode, as model cards give it: from a task, a profile (shipped ones by name) or flags, in
that order of precedence, and a warning where a run would decode greedily in thinking mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.records import ByThinking
from qualeval.run.checks import sampling_warnings
from qualeval.run.levels import RequestSettings
from qualeval.run.options import load_config, profiles
from qualeval.run.pipeline import request_for
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.tasks import build_samples, load_task

CARD = {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "min_p": 0.0}
NO_THINKING = {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0.0}


def _body(tmp_path: Path, *flags: str) -> tuple[dict[str, object], str]:
    sim = SimConfig(
        port=0, tasks=("knowledge_qa",), behaviour=Behaviour(reasoning_tokens=8), latency=Latency(burst=True)
    )
    with running_server(sim) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "1", "--warmup", "0",
             "--constraint", "off", "--out", str(tmp_path / "run"), *flags],
        )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    record = json.loads((tmp_path / "run" / "records.jsonl").read_text().splitlines()[0])
    return record["request"], " ".join(done.stderr.split())


def _sampled(body: dict[str, object]) -> dict[str, object]:
    return {k: body[k] for k in ("temperature", "top_p", "top_k", "min_p", "presence_penalty") if k in body}


def test_a_shipped_profile_by_name_sends_the_cards_sampling_for_the_mode_asked(tmp_path: Path) -> None:
    body, stderr = _body(tmp_path / "on", "--config", "qwen3-sampling", "--thinking")
    assert _sampled(body) == CARD and "temperature 0" not in stderr
    body, _ = _body(tmp_path / "off", "--config", "qwen3-sampling", "--no-thinking")
    assert _sampled(body) == NO_THINKING
    body, _ = _body(tmp_path / "flag", "--config", "qwen3-sampling", "--thinking", "--temperature", "0.3")
    assert _sampled(body) == {**CARD, "temperature": 0.3}  # a flag overrides the profile


def test_thinking_on_at_temperature_0_warns_and_names_the_profile(tmp_path: Path) -> None:
    body, stderr = _body(tmp_path, "--thinking")
    assert body["temperature"] == 0.0  # the task's own default is left as it is: a default never changes the ask
    assert "thinking on at temperature 0" in stderr and "--config qwen3-sampling" in stderr


def test_a_tasks_own_sampling_per_mode_applies_under_the_runs(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "name: t\nsamples: [{question: q, answer: a}]\nscorer: exact\n"
        "generation: {temperature: 0.0, top_p: 0.5, sampling: {thinking: {temperature: 0.6, top_k: 40}}}\n"
    )
    task = load_task(str(path))
    sample = build_samples(task)[0]
    on = request_for(task, sample, "m", RequestSettings(thinking=True))
    assert (on.temperature, on.top_p, on.top_k) == (0.6, 0.5, 40)
    off = request_for(task, sample, "m", RequestSettings(thinking=False))
    assert (off.temperature, off.top_p, off.top_k) == (0.0, 0.5, None)
    run = ByThinking.model_validate({"thinking": {"top_k": 20}})
    thinking_run = RequestSettings(thinking=True, sampling=run)
    assert request_for(task, sample, "m", thinking_run).top_k == 20  # the run's over the task's
    flagged = RequestSettings(thinking=True, sampling=run, top_k=5)
    assert request_for(task, sample, "m", flagged).top_k == 5  # a flag over both


def test_repeated_samples_at_temperature_0_warn(tmp_path: Path) -> None:
    config = load_config(None, {"model": "m", "base_url": "http://x", "tasks": ["knowledge_qa"], "out": tmp_path,
                                "samples_per_item": 3})  # fmt: skip
    lines = sampling_warnings(config, [load_task("knowledge_qa")])
    assert len(lines) == 1 and "--samples-per-item 3 at temperature 0" in lines[0]
    warm = config.model_copy(update={"temperature": 0.7})
    assert sampling_warnings(warm, [load_task("knowledge_qa")]) == []


def test_the_shipped_profiles_load() -> None:
    assert {"qwen3-sampling", "deepseek-r1-sampling", "smoke"} <= set(profiles())
    for name in profiles():
        config = load_config(Path(name), {"model": "m", "base_url": "http://x", "tasks": ["gsm8k"], "out": "o"})
        assert config.model


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--sampling", "temperature=0.6"], "--sampling: 'temperature=0.6' is not MODE.NAME=VALUE"),
        (["--sampling", "thinking.top_q=1"], "--sampling"),
        (["--sampling", "thinking.top_p=3"], "top_p must be between 0 and 1"),
        (["--top-k", "-5"], "--top-k: top_k must be -1 or more"),
        (["--config", "nosuch"], "no shipped profile of that name"),
    ],
)
def test_bad_sampling_is_one_line_naming_the_flag(flags: list[str], words: str) -> None:
    done = CliRunner().invoke(
        app, ["run", "--base-url", "http://127.0.0.1:9", "--model", "m", "--task", "gsm8k", "--out", "o", *flags]
    )
    assert done.exit_code == 2
    assert words in " ".join(done.stderr.split()) and len(done.stderr.strip().splitlines()) == 1
