"""The serving workloads' length rules on a real server: llama-server with SmolLM2-135M-Instruct, whose chat
template adds a default system prompt (30 tokens around a user message). A llama-benchy-style workload makes
the server process `pp` tokens (and pp + context with llama-benchy's --depth), as llama-benchy does; a
vllm-style one sends `input_len` tokens of text and the template comes on top, as vllm bench serve does.

One small point runs llama-benchy 0.4.0 itself (the `benchy` extra) on the same server, offline as
benchmarks/vs_benchy.py runs it (a tokenizer folder written from the GGUF, qualeval's filler as its book), and
checks that the server processed as many prompt tokens per request for it as for qualeval; the timings are compared in
benchmarks/vs_benchy.py only (they need a quiet machine and repeats).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

import qualeval
from qualeval.serving.lengths import WARMUP
from tests.real_server.conftest import LlamaServer

pytestmark = [pytest.mark.real_server, pytest.mark.real_model]
BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


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
        assert processed(record) == record["usage"]["prompt_tokens"] == record["shape"]["prompt_tokens"]
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
        assert record["shape"]["prompt_tokens"] == record["shape"]["prompt_target"] == 200
        assert processed(record) == 200 + 30


def test_llama_benchy_and_qualeval_make_the_server_process_the_same_prompt_tokens(
    smollm2: LlamaServer, tmp_path: Path
) -> None:
    """pp 200, tg 8, two at once: llama-benchy's requests (read from the server's log: prompt_n + cache_n) and
    qualeval's (from its records' server timings) within 1% of each other."""
    if importlib.util.find_spec("llama_benchy") is None:
        pytest.skip('llama-benchy is not installed: pip install -e ".[benchy]"')
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from gguf_tokenizer import write_folder
        from vs_benchy import FILLER, book_server, run_benchy
        from vs_benchy import processed as in_log
    finally:
        sys.path.remove(str(BENCHMARKS))
    folder = write_folder(smollm2.model, tmp_path / "tokenizer")
    book = tmp_path / "book" / "filler.txt"
    book.parent.mkdir()
    book.write_text(FILLER.read_text(encoding="utf-8").split("\n", 2)[-1], encoding="utf-8")
    start = smollm2.log.stat().st_size
    with book_server(book) as url:
        run_benchy(sys.executable, smollm2.root, folder, url, [200, 8, 0, 2], 1, tmp_path)
    with smollm2.log.open(errors="replace") as log:
        log.seek(start)
        theirs = in_log(log.read(), 8)
    records, _ = run(smollm2, tmp_path / "qualeval", "benchy-pp1024-tg1024", "input_len=200", "seed=7")
    ours = [processed(r) for r in records]
    assert len(theirs) >= 2 and len(ours) == 2, (theirs, ours)  # llama-benchy's run, and its warm-up batch
    mean_theirs, mean_ours = sum(theirs) / len(theirs), sum(ours) / len(ours)
    assert abs(mean_ours - mean_theirs) <= max(1.0, mean_theirs / 100), (ours, theirs)
    assert all(near(n, 200) for n in theirs + ours), (theirs, ours)
