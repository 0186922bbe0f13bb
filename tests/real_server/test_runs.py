"""`qualeval probe` and `qualeval run`, as a user types them, against llama.cpp's real llama-server.

`qualeval run` sends no grammar of its own, so these servers start with a default one (`--grammar-file`)
that gives the random model a reasoning model's shape; a request's `response_format` still overrides it.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.real_server.conftest import ANSWER, LONG_THINK, THINK, LlamaServer, Servers

pytestmark = pytest.mark.real_server

ITEMS = 12
TASK = """\
name: tiny-sums
samples: [{samples}]
prompt:
  instruction: "Think, then answer as 'Answer: N'."
answer: {{type: number}}
scorer: numeric
generation: {{max_tokens: 512, temperature: 0.0}}
"""
RUN_TIMEOUT_S = 900  # bounded, never tight: a loaded machine can slow a request a hundredfold


def task_file(folder: Path, items: int = ITEMS, *, bare: bool = False) -> Path:
    samples = ", ".join(f'{{question: "What is {i} + {i}?", answer: "{2 * i}"}}' for i in range(items))
    path = folder / "tiny-sums.yaml"
    text = TASK.format(samples=samples)
    if bare:  # asks for the answer alone, so a constraint may bind from the first token
        asked = "Answer as 'Answer: N', nothing else.\"\n  bare: true"
        text = text.replace("Think, then answer as 'Answer: N'.\"", asked)
    path.write_text(text)
    return path


def qualeval(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env
    )


def run_args(server: LlamaServer, task: Path, out: Path, *more: str) -> list[str]:
    return ["run", "--base-url", server.url, "--model", "tiny", "--task", str(task), "--out", str(out), *more]


def final_records(out: Path) -> list[dict[str, Any]]:
    # split on newlines only: model text holds characters that str.splitlines() also breaks at (U+2028...)
    rows = [json.loads(line) for line in (out / "records.jsonl").read_bytes().split(b"\n") if line.strip()]
    return [r for r in rows if r.get("final", True) is not False]


def check_against_server(record: dict[str, Any]) -> None:
    """Token counts are the server's; its timed intervals lie inside the client's (1 ms for rounding)."""
    timings, timing, usage = record["server_timings"], record["timing"], record["usage"]
    assert timings is not None, "the record keeps llama.cpp's timings"
    assert usage["completion_tokens"] == timings["predicted_n"]
    assert usage["prompt_tokens"] == timings["prompt_n"] + timings["cache_n"]
    assert timings["prompt_ms"] + timings["predicted_ms"] <= timing["end"] + 1.0
    if timing.get("ttft") is not None:
        assert timings["prompt_ms"] <= timing["ttft"] + 1.0


def test_probe(servers: Servers, tmp_path: Path) -> None:
    server = servers.get(grammar=THINK)
    done = qualeval("probe", "--base-url", server.url, "--model", "tiny", "--format", "json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert not found["simulated"] and "tiny" in found["served_models"]
    assert found["reasoning_fields"] == ["reasoning_content"]
    assert found["reasoning_source"] == found["stream_reasoning_source"] == "field:reasoning_content"
    assert found["streaming_usage"] and not found["reasoning_tokens_reported"]
    schema = found["structured_outputs"]["response_format.json"]["verdict"]
    assert schema in ("enforced", "inconclusive"), found["structured_outputs"]
    assert found["structured_outputs"]["guided.json"]["verdict"] == "ignored"  # llama-server ignores vLLM keys


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_run(servers: Servers, tmp_path: Path, stream: bool) -> None:
    server = servers.get(grammar=THINK)
    out = tmp_path / "run"
    flags = ["--concurrency", "3", "--no-probe", "--constraint", "off", "--stream" if stream else "--no-stream"]
    done = qualeval(*run_args(server, task_file(tmp_path), out, *flags))
    assert done.returncode == 0, done.stderr
    records = final_records(out)
    assert len(records) == ITEMS and len({r["sample_id"] for r in records}) == ITEMS
    for record in records:
        assert record["status"] == "ok", record["error"]
        assert record["reasoning_source"] == "field:reasoning_content" and record["reasoning"].endswith("\n")
        assert record["content"].startswith("Answer: ") and record["extraction"]["value"] is not None
        check_against_server(record)
        assert (record["timing"]["first_content"] is not None) == stream
    summary = json.loads((out / "summary.json").read_text())
    assert "tiny-sums" in json.dumps(summary)
    assert (out / "report.html").exists()


def test_run_without_thinking(servers: Servers, tmp_path: Path) -> None:
    server = servers.get(grammar=ANSWER)
    out = tmp_path / "run"
    flags = ["--no-thinking", "--thinking-switch", "chat_template_kwargs", "--no-probe", "--constraint", "off"]
    done = qualeval(*run_args(server, task_file(tmp_path), out, *flags))
    assert done.returncode == 0, done.stderr
    for record in final_records(out):
        assert record["status"] == "ok" and record["reasoning"] == "" and record["reasoning_source"] == "none"
        assert record["request"]["chat_template_kwargs"] == {"enable_thinking": False}
        assert record["timing"]["first_content"] is not None  # time to the first answer token, thinking off
        check_against_server(record)


@pytest.mark.parametrize("thinking", [True, False], ids=["thinking", "no-thinking"])
def test_run_with_a_json_schema_constraint(servers: Servers, tmp_path: Path, thinking: bool) -> None:
    # thinking: the schema binds only after an optional, unconstrained think block (the probe finds the reasoning
    # channel that makes that so), sampled (not greedy) so that a random model closes it, and with room to spare.
    # Thinking off, the constraint binds from the first token, which only a task asking for a bare answer allows.
    server = servers.get(grammar=THINK if thinking else ANSWER)
    flags = ["--constraint", "single", "--constraint-style", "response_format"]
    if thinking:
        flags += ["--temperature", "1.0", "--max-tokens", "3000"]  # thinking: the server's default
    else:
        flags += ["--no-thinking", "--thinking-switch", "chat_template_kwargs", "--no-probe"]
    out = tmp_path / "run"
    done = qualeval(*run_args(server, task_file(tmp_path, bare=not thinking), out, *flags))
    assert done.returncode == 0, done.stderr
    records = final_records(out)
    assert len(records) == ITEMS
    statuses = Counter(r["status"] for r in records)
    assert statuses["ok"] >= (ITEMS // 2 if thinking else ITEMS), statuses
    for record in records:
        assert record["constraint"]["mode"] == "single" and "response_format" in record["request"]
        if record["status"] == "ok":
            answer = json.loads(record["content"])["answer"]
            assert isinstance(answer, int | float)
            if math.isfinite(answer):  # the grammar lets a random model write 7e3884, out of a float's range
                assert record["constraint"]["held"] is True
        else:
            assert record["status"] == "reasoning_truncated" and thinking


def test_concurrency_sweep(servers: Servers, tmp_path: Path) -> None:
    server = servers.get(grammar=THINK)
    out = tmp_path / "run"
    flags = ["--concurrency", "1,4", "--no-probe", "--constraint", "off"]
    done = qualeval(*run_args(server, task_file(tmp_path), out, *flags))
    assert done.returncode == 0, done.stderr
    records = final_records(out)
    levels = Counter(r["level"] for r in records)
    assert sorted(levels) == ["c=1", "c=4"] and set(levels.values()) == {ITEMS}, levels
    for level in levels:
        assert {r["sample_id"] for r in records if r["level"] == level} == {r["sample_id"] for r in records}
    assert all(r["status"] == "ok" for r in records)
    for record in records:
        check_against_server(record)
    speed = json.dumps(json.loads((out / "summary.json").read_text()))
    assert "c=1" in speed and "c=4" in speed


def test_server_killed_mid_run_then_resumed(servers: Servers, tmp_path: Path) -> None:
    server = servers.new(grammar=LONG_THINK)  # its own server: this test kills it
    server.start()
    task, out = task_file(tmp_path, items=40), tmp_path / "run"
    args = run_args(server, task, out, "--concurrency", "1", "--no-probe", "--constraint", "off", "--max-retries", "0")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        first = subprocess.Popen(
            [sys.executable, "-m", "qualeval", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        records = out / "records.jsonl"
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while time.monotonic() < deadline and first.poll() is None:
            if records.exists() and records.read_bytes().count(b"\n") >= 3:
                break
            time.sleep(0.01)
        server.kill()
        _, stderr = first.communicate(timeout=RUN_TIMEOUT_S)
        failed = [r for r in final_records(out) if r["status"] == "transport_error"]
        assert failed, f"the server was killed only after the run had finished: {stderr.decode()[-500:]}"
        server.start()  # the same port
        again = qualeval(*args)
        assert again.returncode == 0, again.stderr
    finally:
        server.stop()
    final = final_records(out)
    keys = Counter((r["sample_id"], r["repeat"], r["level"]) for r in final)
    assert len(keys) == 40 and set(keys.values()) == {1}, "exactly one final record per item"
    assert all(r["status"] == "ok" for r in final), Counter(r["status"] for r in final)
    retried = [r for r in final if r["sample_id"] in {f["sample_id"] for f in failed}]
    assert all(r["retried"] for r in retried), "the failed attempts before the resume stay counted"
