"""Serving workloads by name against llama.cpp's real llama-server, at small sizes: prompt lengths counted by its
`/tokenize`, output lengths forced with `ignore_eos`, and its own `/metrics` (started with `--metrics`) sampled
into the time series through llama.cpp's names in servermetrics.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.real_server.conftest import Servers
from tests.real_server.test_runs import final_records, qualeval

pytestmark = pytest.mark.real_server


def sets(prompts: int, *more: str) -> list[str]:
    # the seed the lengths below were checked at: prompts are drawn afresh per run otherwise
    out = ["--workload-set", f"num_prompts={prompts}", "--workload-set", "seed=42"]
    for item in more:
        out += ["--workload-set", item]
    return out


# each of the nine at a size the tiny model's 4,096-token context holds; the open-loop ones at a brisker rate.
# Outputs of 24 tokens or more: fewer would reach the client in one network read, leaving no decode time to time
WORKLOADS = {
    "benchy-pp1024-tg1024": [*sets(5, "input_len=200", "output_len=24"), "--concurrency", "2"],
    "benchy-pp8192-tg512": [*sets(3, "input_len=900", "output_len=40"), "--concurrency", "2"],
    "benchy-pp256-tg4096": [*sets(3, "output_len=48"), "--concurrency", "2"],
    "benchy-pp25000-tg256": [*sets(3, "input_len=1500", "output_len=40"), "--concurrency", "2"],
    # llama-benchy's rule takes the template's tokens for all 9 messages off the last prompt: longer than they are
    "benchy-pp2048-tg512-d4": [*sets(3, "input_len=120", "output_len=40"), "--concurrency", "2"],
    # vllm bench serve's random dataset, range ratio 0.9 kept: 16 requests at 4 a second, a few seconds of metrics
    "vllm-random-4000-500-rate0.3": [*sets(17, "input_len=300", "output_len=24"), "--request-rate", "4"],
    "vllm-random-4000-500-rate1.5-c25": [*sets(5, "input_len=300", "output_len=24"), "--request-rate", "8"],
    "vllm-sharegpt-rate0.3": [*sets(4, "path=SHAREGPT"), "--request-rate", "8"],
    "vllm-reasoning-rate0.2": [*sets(4, "max_tokens=64"), "--request-rate", "8"],
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_against_llama_server(servers: Servers, tmp_path: Path, name: str) -> None:
    server = servers.get()  # no default grammar: the random model writes on until it is stopped
    out = tmp_path / "run"
    share = tmp_path / "sharegpt.json"
    reply = "A quiet harbour with a long breakwater and small fishing boats. " * 2
    rows = [
        {"conversations": [{"from": "human", "value": f"Describe harbour number {i} and its boats."},
                           {"from": "gpt", "value": reply}]}
        for i in range(6)
    ]  # fmt: skip
    share.write_text(json.dumps(rows))
    flags = [f.replace("SHAREGPT", str(share)) for f in WORKLOADS[name]]
    done = qualeval("run", "--workload", name, "--base-url", server.url, "--model", "tiny", "--out", str(out),
                    "--no-probe", "--constraint", "off", *flags)  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = final_records(out)
    wanted = int(flags[flags.index("--workload-set") + 1].split("=")[1])
    # num_prompts counts the measured prompts, as vllm bench serve's --num-prompts does; the warm-up is extra
    assert len([r for r in records if not r["warmup"]]) == wanted and len(records) == wanted + 1
    summary = json.loads((out / "summary.json").read_text())
    workload = summary["serving"]["workload"]
    assert all(r["status"] != "transport_error" for r in records), records[0]["error"]
    if name == "vllm-reasoning-rate0.2":  # a task's items, scored, with the workload's budget
        assert all(r["request"]["max_tokens"] == 64 and "gold" in r for r in records)
        assert summary["tasks"]["syllogisms"]["scored"]
        return
    assert workload["forcing"] and workload["forcing"].get("ignore_eos") is True  # llama-server accepts it
    for record in records:
        shape = record["shape"]
        assert shape["prompt_count"] == "server"  # llama-server's own /tokenize
        assert abs(shape["prompt_tokens"] - shape["prompt_target"]) <= max(1, shape["prompt_target"] // 200) * 9
        timings = record["server_timings"]
        if name.startswith("benchy"):  # llama-benchy's rule: the count is what the server processes, every turn's
            assert (
                shape["prompt_tokens"] == timings["prompt_n"] + timings["cache_n"] == record["usage"]["prompt_tokens"]
            )
        # ignore_eos: every output runs to its target length, as the server itself counted it
        assert record["usage"]["completion_tokens"] == shape["output_target"] == record["server_timings"]["predicted_n"]
    assert workload["targets"]["output_short"] == 0
    level = next(iter(workload["levels"].values()))
    assert level["vllm"]["ttft"]["p99"] >= level["vllm"]["ttft"]["p50"] > 0
    # llama-benchy's tg t/s of a request needs its tokens seen to arrive over time: the tiny model can write them
    # all before the client's first read, and such a request has no rate (llama-benchy leaves it out too)
    growing = [r for r in records if not r["warmup"] and r["timing"]["itl"] and r["timing"]["itl"]["mean"] > 0]
    per_user = level["llama_benchy"]["tg_per_user"]
    assert (per_user or {}).get("n", 0) == len(growing) and (not growing or per_user["mean"] > 0)
    lines = [json.loads(x) for x in (out / "timeseries.jsonl").read_text().splitlines()]
    scraped = [x["server"][server.url] for x in lines if server.url in x["server"]]
    assert scraped and all(x["server"] == "llamacpp" for x in scraped)  # recognised from its metric names
    if name == "vllm-random-4000-500-rate0.3":  # 16 requests at 4 a second: seconds of the server's counters
        assert len(scraped) >= 2 and any(x.get("generation_throughput") for x in scraped[1:])
        assert "generation_throughput" in summary["server"][server.url]
        assert "## Server metrics" in (out / "report.md").read_text()
    assert f"## Serving workload: {name}" in (out / "report.md").read_text()
