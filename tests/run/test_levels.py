"""Budget levels: every item once per output-token budget, reasoning effort, server thinking budget, or thinking
on and off, each a level of its own beside the load levels, checked on the reference server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.errors import InputError
from qualeval.records import SAMPLING, RunConfig
from qualeval.run.levels import Level, RequestSettings, levels, request_settings
from qualeval.sim import Behaviour, Latency, SimConfig, running_server


def _config(**values: Any) -> RunConfig:
    return RunConfig(base_url="http://x/v1", model="m", tasks=["knowledge_qa"], out=Path("o"), **values)


def _set(level: Level) -> dict[str, Any]:
    """The request settings a level sets, by name."""
    return level.request.model_dump(exclude_unset=True)


def test_labels_name_the_axes_that_sweep() -> None:
    assert [(lv.label, _set(lv)) for lv in levels(_config())] == [("c=16", {})]  # the default load
    one = levels(_config(max_tokens=512, concurrency=[1, 4]))  # one budget: it sets the requests, names nothing
    assert [(lv.label, lv.cap, _set(lv)) for lv in one] == [
        ("c=1", 1, {"max_tokens": 512}),
        ("c=4", 4, {"max_tokens": 512}),
    ]
    budgets = levels(_config(max_tokens="512,2048", concurrency=[8]))
    assert [(lv.label, lv.cap, lv.request.max_tokens) for lv in budgets] == [
        ("max_tokens=512", 8, 512),
        ("max_tokens=2048", 8, 2048),
    ]
    crossed = levels(_config(concurrency=[1, 4], reasoning_effort="low,high", max_tokens=[4096]))
    assert [lv.label for lv in crossed] == ["c=1 effort=low", "c=1 effort=high", "c=4 effort=low", "c=4 effort=high"]
    assert _set(crossed[1]) == {"max_tokens": 4096, "reasoning_effort": "high"}
    paired = levels(_config(thinking_pair=True, thinking_budget=[64]))
    assert [(lv.label, _set(lv)) for lv in paired] == [
        ("thinking=on", {"extra_body": {"thinking_token_budget": 64}, "thinking": True}),
        ("thinking=off", {"thinking": False}),
    ]  # fmt: skip


def test_thinking_off_is_asked_once_whatever_the_efforts_and_thinking_budgets() -> None:
    efforts = levels(_config(thinking_pair=True, reasoning_effort="low,medium,high", max_tokens=[2048]))
    assert [(lv.label, _set(lv)) for lv in efforts] == [
        ("effort=low thinking=on", {"max_tokens": 2048, "reasoning_effort": "low", "thinking": True}),
        ("effort=medium thinking=on", {"max_tokens": 2048, "reasoning_effort": "medium", "thinking": True}),
        ("effort=high thinking=on", {"max_tokens": 2048, "reasoning_effort": "high", "thinking": True}),
        ("thinking=off", {"max_tokens": 2048, "thinking": False}),
    ]  # fmt: skip
    budgets = levels(_config(thinking_pair=True, thinking_budget=[64, 256], max_tokens=[512, 4096], concurrency=[1]))
    off = [(lv.label, _set(lv)) for lv in budgets if not lv.request.thinking]
    assert off == [
        ("max_tokens=512 thinking=off", {"max_tokens": 512, "thinking": False}),
        ("max_tokens=4096 thinking=off", {"max_tokens": 4096, "thinking": False}),
    ]  # the output budget still bounds the answer; the thinking budget has nothing to bound
    assert len(budgets) == 6


def test_request_settings_are_typed_and_a_misspelt_one_is_one_line_naming_it() -> None:
    assert set(SAMPLING) <= set(RequestSettings.model_fields)  # every sampling flag reaches the request
    assert request_settings({"max_tokens": 512}).max_tokens == 512
    with pytest.raises(InputError, match="request setting 'max_token': not a setting"):
        request_settings({"max_token": 512})
    run = RequestSettings(thinking=True, max_tokens=256, temperature=0.6)
    assert RequestSettings(thinking=False).over(run) == RequestSettings(thinking=False, max_tokens=256, temperature=0.6)


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--max-tokens", "512,0"], "--max-tokens: must be at least 1, got 0"),
        (["--thinking-pair", "--thinking"], "--thinking-pair runs thinking on and off"),
        (["--thinking-budget", "64", "--no-thinking"], "--thinking-budget caps the thinking"),
        (["--max-tokens", "512", "--max-tokens", "512,2048"], "--max-tokens: a level is given twice: 512, 512, 2048"),
        (["--concurrency", "4,4"], "--concurrency: a level is given twice"),
    ],
)
def test_bad_budget_flags_are_one_line(flags: list[str], words: str, tmp_path: Path) -> None:
    args = ["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--task", "knowledge_qa"]
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r"), *flags])
    assert done.exit_code == 2, done.output
    assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr


def _run(url: str, out: Path, *flags: str) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    done = CliRunner().invoke(
        app,
        ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "30", "--concurrency", "6",
         "--out", str(out), *flags],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"], records, done.stderr


def _sim(flavour: str = "vllm") -> SimConfig:
    behaviour = Behaviour(reasoning_tokens=300, accuracy=0.9, trap_rate=0.0, effort_gain=1.0)
    return SimConfig(port=0, flavour=flavour, tasks=("knowledge_qa",), behaviour=behaviour, latency=Latency(burst=True))


def test_output_budgets_run_the_same_items_and_accuracy_follows_the_budget(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        task, records, _ = _run(url, tmp_path / "r", "--max-tokens", "96,4096")
    small, large = task["levels"]["max_tokens=96"], task["levels"]["max_tokens=4096"]
    by_level: dict[str, set[str]] = {}
    for record in records:
        assert record["request"]["max_tokens"] == int(record["level"].split("=")[1])
        by_level.setdefault(record["level"], set()).add(record["sample_id"])
    assert by_level["max_tokens=96"] == by_level["max_tokens=4096"] and len(by_level["max_tokens=96"]) == 30
    truncated = {lv: sum(r["status"] == "reasoning_truncated" for r in records if r["level"] == lv) for lv in by_level}
    assert truncated["max_tokens=96"] > truncated["max_tokens=4096"]  # the budget runs out inside the thinking
    assert small["accuracy"]["accuracy"] < large["accuracy"]["accuracy"]


def test_effort_and_a_server_thinking_budget_are_sent_and_checked(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        task, records, _ = _run(url, tmp_path / "effort", "--reasoning-effort", "low,high")
        assert {r["request"]["reasoning_effort"] for r in records} == {"low", "high"}
        assert (
            task["levels"]["effort=low"]["accuracy"]["accuracy"] < task["levels"]["effort=high"]["accuracy"]["accuracy"]
        )
        task, records, _ = _run(url, tmp_path / "budget", "--thinking-budget", "16,1024", "--max-tokens", "4096")
        assert {r["request"]["thinking_token_budget"] for r in records} == {16, 1024}
        assert all(r["status"] == "ok" for r in records)  # the server ends the thinking, the answer follows
        low, high = task["levels"]["thinking_budget=16"], task["levels"]["thinking_budget=1024"]
        assert low["accuracy"]["accuracy"] < high["accuracy"]["accuracy"]


def test_a_server_without_a_thinking_budget_is_refused_before_the_run(tmp_path: Path) -> None:
    with running_server(_sim("llamacpp")) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "4",
             "--thinking-budget", "64", "--out", str(tmp_path / "r")],
        )  # fmt: skip
    assert done.exit_code != 0 and "ignores thinking_token_budget" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r" / "records.jsonl").exists() or not (tmp_path / "r" / "records.jsonl").read_text()


def test_thinking_on_and_off_are_paired_levels(tmp_path: Path) -> None:
    with running_server(_sim()) as url:
        task, records, _ = _run(url, tmp_path / "r", "--thinking-pair", "--max-tokens", "4096")
    assert set(task["levels"]) == {"thinking=on", "thinking=off"}
    for record in records:
        on = record["level"] == "thinking=on"
        assert record["request"]["chat_template_kwargs"] == {"enable_thinking": on}
        assert (record["reasoning"] != "") == on


def test_stream_parity_sends_every_level_both_ways() -> None:
    plain = levels(_config(stream_parity=True))
    assert [(lv.label, lv.request.stream) for lv in plain] == [("stream=on", True), ("stream=off", False)]
    paired = levels(_config(stream_parity=True, thinking_pair=True, concurrency=[1, 4]))
    labels = [lv.label for lv in paired]
    assert "c=4 thinking=off stream=off" in labels and len(labels) == 8
    assert {lv.request.thinking for lv in paired if lv.label.endswith("stream=on")} == {True, False}
