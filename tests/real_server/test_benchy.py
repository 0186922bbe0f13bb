"""The serving workloads' length rules on a real server: llama-server with SmolLM2-135M-Instruct, whose chat
template adds a default system prompt (30 tokens around a user message). A llama-benchy-style workload makes
the server process `pp` tokens (and pp + context with llama-benchy's --depth), as llama-benchy does; a
vllm-style one sends `input_len` tokens of text and the template comes on top, as vllm bench serve does.

llama-benchy itself is not run here: it lives in its own environment (it pulls transformers); see
benchmarks/vs_benchy.py for the two side by side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

import qualeval
from qualeval.serving.lengths import WARMUP
from tests.real_server.conftest import LlamaServer

pytestmark = [pytest.mark.real_server, pytest.mark.real_model]


def run(
    server: LlamaServer, out: Path, workload: str, *sets: str, **options: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Two requests at once (no warm-up): few enough to be quick on a loaded machine."""
    qualeval.evaluate(
        model="smollm2", tasks=[], base_url=server.url, out=out, workload=workload, probe=False, constraint="off",
        workload_set=["num_prompts=2", "output_len=8", *sets], concurrency=[2], warmup=0, **options,
    )  # fmt: skip
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return records, json.loads((out / "manifest.json").read_text())["shaping"]


def processed(record: dict[str, Any]) -> int:
    """What llama-server processed or took from its cache for the prompt."""
    return record["server_timings"]["prompt_n"] + record["server_timings"]["cache_n"]


def template_tokens(server: LlamaServer, messages: list[dict[str, str]]) -> int:
    """The template's own tokens, from the server's /apply-template and /tokenize (not llama-benchy's way)."""
    prompt = httpx.post(f"{server.root}/apply-template", json={"messages": messages}, timeout=60).json()["prompt"]

    def count(text: str, special: bool) -> int:
        body = {"content": text, "add_special": special, "parse_special": special}
        return len(httpx.post(f"{server.root}/tokenize", json=body, timeout=60).json()["tokens"])

    return count(prompt, True) - sum(count(m["content"], False) for m in messages)


def near(got: int, want: int) -> bool:
    return abs(got - want) <= max(2, want // 100)


def test_llama_benchy_style_makes_the_server_process_pp_tokens(smollm2: LlamaServer, tmp_path: Path) -> None:
    records, shaping = run(smollm2, tmp_path / "pp", "benchy-pp1024-tg1024", "input_len=200")
    assert len(records) == 2 and all(r["status"] != "transport_error" for r in records)
    for record in records:
        assert near(processed(record), 200), (processed(record), record["server_timings"])
        assert processed(record) == record["usage"]["prompt_tokens"] == record["meta"]["prompt_tokens"]
        assert record["usage"]["completion_tokens"] == 8
    # llama-benchy's warm-up measurement gives the template's tokens the server's own template gives
    (found,) = shaping["template"]
    assert found["tokens"] == template_tokens(smollm2, [{"role": "user", "content": WARMUP}]) == 30
    # with a context (llama-benchy's --depth), the server processes pp + depth
    records, shaping = run(smollm2, tmp_path / "depth", "benchy-pp1024-tg1024", "input_len=120", "context=80")
    assert [m["role"] for m in records[0]["request"]["messages"]] == ["system", "user"]
    assert all(near(processed(r), 200) for r in records), [processed(r) for r in records]
    assert shaping["template"][0]["roles"] == ["system", "user"]


def test_vllm_style_sends_input_len_of_text(smollm2: LlamaServer, tmp_path: Path) -> None:
    """vllm bench serve's random dataset: input_len less the special tokens the tokenizer adds (SmolLM2's adds
    none) is the prompt's text; the server processes that and the template's 30 tokens."""
    sets = ("input_len=200", "range_ratio=0")
    records, shaping = run(smollm2, tmp_path / "vllm", "vllm-random-4000-500-rate0.3", *sets, request_rate=[20.0])
    assert shaping["specials"] == 0 and "template" not in shaping
    for record in records:
        assert record["meta"]["prompt_tokens"] == record["meta"]["prompt_target"] == 200
        assert processed(record) == 200 + 30
