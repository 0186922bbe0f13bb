"""Quality at every length, the time series from both ends, replicas and shards, against the reference server."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import qualeval
from qualeval.figures.accuracy import wilson
from qualeval.serving.timeseries import figures, kind_of, metric_maps, read_metrics
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.sim.observe import decay


def sim(**kw: Any) -> SimConfig:
    latency = kw.pop("latency", Latency(ttft_ms=2, decode_ms=0.5, prefill_ms_per_token=0.0005, jitter=0))
    behaviour = kw.pop("behaviour", Behaviour(reasoning_tokens=20))
    return SimConfig(port=0, behaviour=behaviour, latency=latency, **kw)


def evaluate(url: str | list[str], out: Path, **options: Any) -> qualeval.RunResult:
    options.setdefault("probe", False)
    options.setdefault("constraint", "off")
    return qualeval.evaluate(model="sim", base_url=url, out=out, **options)  # type: ignore[arg-type]


def test_context_scaling_shows_what_the_latency_model_implies(tmp_path: Path) -> None:
    """knowledge_qa at three context lengths on a server whose accuracy halves every 2,000 prompt tokens and
    whose prefill costs 0.05 ms a token: accuracy per length sits where the model puts it, and TTFT grows by
    the prefill rate times the added tokens."""
    latency = Latency(ttft_ms=10, decode_ms=0.2, prefill_ms_per_token=0.05, jitter=0)
    config = sim(tasks=("knowledge_qa",), accuracy_half_tokens=2000, latency=latency,
                 behaviour=Behaviour(reasoning_tokens=20, accuracy=0.9))  # fmt: skip
    lengths = [250, 2000, 6000]
    with running_server(config) as url:
        result = evaluate(url, tmp_path / "run", tasks=["knowledge_qa"], limit=60, context_lengths=lengths,
                          concurrency=[8], max_tokens=512)  # fmt: skip
    assert result.summary.serving is not None and result.summary.serving.context is not None
    table = result.summary.serving.context.tasks["knowledge_qa"]
    assert list(table) == [str(n) for n in lengths]
    accuracy = [table[str(n)].accuracy.accuracy for n in lengths]
    assert accuracy[0] > accuracy[1] > accuracy[2]
    for n in lengths:
        row = table[str(n)]
        assert row.prompt_tokens is not None
        implied = decay(0.9, round(row.prompt_tokens["mean"]) + 4, 2000)  # 4 template tokens per message
        low, high = wilson(row.accuracy.correct, row.accuracy.n)
        assert low <= implied <= high, (n, implied, low, high)
        assert abs(row.prompt_tokens["mean"] - n) <= n / 100
    # TTFT: the server's 10 ms plus 0.05 ms per prompt token is a floor (a busy machine only adds to it), and the
    # longest prompts' floor is far above the shortest prompts' (310 ms against 22.5 ms)
    for n in lengths:
        floor = 10 + 0.05 * table[str(n)].prompt_tokens["mean"]
        assert (table[str(n)].ttft or {})["p50"] >= floor - 0.5, (n, table[str(n)].ttft, floor)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Quality at every length" in report and "| knowledge_qa | 6000 | 60 |" in report
    assert "Quality at every length" in (tmp_path / "run" / "report.html").read_text()
    record = json.loads((tmp_path / "run" / "records.jsonl").read_text().splitlines()[-1])
    assert record["sample_id"].endswith("@6000") and record["shape"]["context_tokens"] == 6000
    assert "context_tokens" not in record["meta"]


def test_the_item_sits_at_the_chosen_depth(tmp_path: Path) -> None:
    with running_server(sim(tasks=("knowledge_qa",))) as url:
        evaluate(url, tmp_path / "run", tasks=["knowledge_qa"], limit=2, context_lengths=[800], context_depth=0.5)
    record = json.loads((tmp_path / "run" / "records.jsonl").read_text().splitlines()[0])
    text = record["request"]["messages"][-1]["content"]
    assert 0.35 < text.index("Answer") / len(text) < 0.65  # the instruction of the item, halfway in


def test_time_series_and_server_metrics(tmp_path: Path) -> None:
    """Once a second: client tokens/s, in flight, queued; the server's /metrics mapped from vLLM's names,
    speculative decoding included. The report plots them; compare puts two profiles side by side."""
    latency = Latency(ttft_ms=20, decode_ms=8, jitter=0)
    runs = {}
    for name, spec in (("base", 0), ("spec", 4)):
        config = sim(tasks=("knowledge_qa",), latency=latency, spec_draft=spec, spec_accept=0.7, max_running=4,
                     behaviour=Behaviour(reasoning_tokens=150))  # fmt: skip
        with running_server(config) as url:
            runs[name] = evaluate(url, tmp_path / name, tasks=["knowledge_qa"], limit=24, concurrency=[8],
                                  max_tokens=256)  # fmt: skip
    lines = [json.loads(x) for x in (tmp_path / "spec" / "timeseries.jsonl").read_text().splitlines()]
    assert len(lines) >= 2 and lines[0]["warmup"]
    assert max(x["in_flight"] for x in lines) == 8 and all(x["queued"] == 0 for x in lines)  # 8 workers, cap 8
    assert sum(x["tokens"] for x in lines) == sum(
        json.loads(r)["usage"]["completion_tokens"]
        for r in (tmp_path / "spec" / "records.jsonl").read_text().splitlines()
    )
    server = runs["spec"].summary.server
    assert server is not None
    figs = next(iter(server.values()))
    assert {"running", "waiting", "kv_cache_usage", "generation_throughput", "spec_acceptance_rate"} <= set(figs)
    # each of 4 draft tokens accepted at 0.7 until the first rejection: (0.7 + 0.7^2 + 0.7^3 + 0.7^4) / 4 = 0.44
    assert 0.35 < figs["spec_acceptance_rate"].mean < 0.55
    assert 2.4 < figs["spec_mean_accepted_length"].mean < 3.2  # 1 + 1.77 accepted per step
    assert figs["running"].max <= 4 and figs["waiting"].max >= 1  # --max-running 4 under 8 in flight
    assert runs["base"].summary.server is not None
    assert "spec_acceptance_rate" not in next(iter(runs["base"].summary.server.values()))
    html = (tmp_path / "spec" / "report.html").read_text()
    assert "Over time" in html and "Server metrics" in html
    done = subprocess.run(
        [sys.executable, "-m", "qualeval", "compare", str(tmp_path / "base"), str(tmp_path / "spec"),
         "--out", str(tmp_path / "cmp")], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    compared = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert compared["server"]["spec_acceptance_rate"][0] is None
    assert compared["server"]["spec_acceptance_rate"][1] > 0.35
    assert "knowledge_qa: TTFT p99 (ms)" in compared["server"] and "knowledge_qa: accuracy" in compared["server"]
    assert "server metrics, side by side" in done.stdout


def test_metric_names_are_data() -> None:
    """Each server's names come from servermetrics.yaml; a counter's figures need two scrapes."""
    text = (
        "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 3\n"
        "# TYPE sglang:generation_tokens counter\nsglang:generation_tokens_total 100\n"
    )
    before = read_metrics(text)
    after = read_metrics(text.replace(" 100", " 160"))
    spec = metric_maps()["sglang"]
    got = figures(spec, after, before, 2.0)
    assert got["running"] == 3 and got["generation_throughput"] == 30
    assert "generation_throughput" not in figures(spec, after, None, 2.0)
    assert set(metric_maps()) >= {"vllm", "sglang", "llamacpp"}


_OPENMETRICS = """# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-8B"} 0.25
# HELP vllm:generation_tokens Number of generation tokens processed.
# TYPE vllm:generation_tokens counter
vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 100.0
vllm:generation_tokens_created{engine="0",model_name="Qwen/Qwen3-8B"} 1.7646e+09
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 2.0 # {trace_id="oHg5SJ"} 0.067 1.7646e+09
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="Qwen/Qwen3-8B"} 5.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="Qwen/Qwen3-8B"} 5.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="Qwen/Qwen3-8B"} 0.9
vllm:time_to_first_token_seconds_created{engine="0",model_name="Qwen/Qwen3-8B"} 1.7646e+09
# EOF
"""


def _exposed(generated: float) -> str:
    """vLLM's metrics as prometheus_client's own OpenMetrics 1.0 exposition writes them."""
    from prometheus_client import CollectorRegistry, Counter, Gauge
    from prometheus_client.openmetrics.exposition import generate_latest

    registry = CollectorRegistry()
    labels = ["model_name", "engine"]
    Gauge("vllm:num_requests_running", "Running.", labels, registry=registry).labels("m", "0").set(3)
    Gauge("vllm:kv_cache_usage_perc", "KV-cache usage.", labels, registry=registry).labels("m", "0").set(0.25)
    Counter("vllm:generation_tokens", "Generated.", labels, registry=registry).labels("m", "0").inc(generated)
    return generate_latest(registry).decode()


def test_an_openmetrics_scrape_is_read_like_a_prometheus_one() -> None:
    """vLLM's newer frontend serves OpenMetrics 1.0 whatever was asked: counters with _total and _created,
    exemplars, `# EOF`; and prometheus_client's exposition names the samples `vllm_x` under `# TYPE vllm:x`."""
    spec, maps = metric_maps()["vllm"], metric_maps()
    for before, after in (
        (_OPENMETRICS, _OPENMETRICS.replace("} 100.0", "} 160.0")),
        (_exposed(100), _exposed(160)),
    ):
        kind = "application/openmetrics-text; version=1.0.0; charset=utf-8"
        now, then = read_metrics(after, kind), read_metrics(before, kind)
        assert kind_of(now, maps) == "vllm"
        got = figures(spec, now, then, 2.0)
        assert (got["running"], got["kv_cache_usage"], got["generation_throughput"]) == (3, 0.25, 30)
    assert read_metrics(_OPENMETRICS)["vllm:time_to_first_token_seconds_count"] == 5  # known by its `# EOF`


def test_replicas_least_in_flight(tmp_path: Path) -> None:
    """Two replicas, one slow: the fast one answers more, and speed is reported per replica and overall."""
    slow = sim(tasks=("knowledge_qa",), latency=Latency(ttft_ms=30, decode_ms=3, jitter=0))
    fast = sim(tasks=("knowledge_qa",), latency=Latency(ttft_ms=2, decode_ms=0.3, jitter=0))
    with running_server(slow) as a, running_server(fast) as b:
        result = evaluate([a, b], tmp_path / "run", tasks=["knowledge_qa"], limit=30, concurrency=[4])
    rows = [json.loads(x) for x in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    served = {url: sum(r["endpoint"] == url for r in rows) for url in (a, b)}
    assert served[b] > served[a] > 0
    assert result.summary.serving is not None and result.summary.serving.endpoints is not None
    per = result.summary.serving.endpoints
    assert set(per) == {a, b} and per[a].requests + per[b].requests == 29  # the warm-up left out
    assert "## Speed per replica" in (tmp_path / "run" / "report.md").read_text()


def test_shards_merge_to_the_unsharded_summary(tmp_path: Path) -> None:
    with running_server(sim(tasks=("knowledge_qa",))) as url:
        whole = evaluate(url, tmp_path / "whole", tasks=["knowledge_qa"], limit=20, concurrency=[4])
        for k in range(3):
            done = subprocess.run(
                [sys.executable, "-m", "qualeval", "run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa",
                 "--limit", "20", "--concurrency", "4", "--no-probe", "--constraint", "off", "--shard", f"{k}/3",
                 "--out", str(tmp_path / f"shard{k}")], capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
    shards = [str(tmp_path / f"shard{k}") for k in (2, 0, 1)]  # any order
    done = subprocess.run([sys.executable, "-m", "qualeval", "merge", *shards, "--out", str(tmp_path / "merged")],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    merged = json.loads((tmp_path / "merged" / "summary.json").read_text())
    expected = whole.summary.model_dump(mode="json")
    for name, task in expected["tasks"].items():
        assert merged["tasks"][name]["summary"] == task["summary"]
    ids = [json.loads(x)["sample_id"] for x in (tmp_path / "merged" / "records.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(
        json.loads(x)["sample_id"] for x in (tmp_path / "whole" / "records.jsonl").read_text().splitlines()
    )
    assert (tmp_path / "merged" / "report.html").exists()
    missing = subprocess.run([sys.executable, "-m", "qualeval", "merge", shards[0], shards[1], "--out",
                              str(tmp_path / "m2")], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert missing.returncode == 2 and "missing: [1]" in missing.stderr


def test_sim_spec_decoding_is_faster_per_token() -> None:
    """A speculative profile of the reference server decodes in fewer steps: its per-token time shrinks."""
    from qualeval.sim.observe import spec_steps, speedup

    steps = spec_steps(1000, 4, 0.7, "x")
    assert steps is not None and steps[1] == 4 * steps[0]
    assert math.isclose(steps[2] / steps[1], 0.7 * (1 - 0.7**4) / (1 - 0.7) / 4, rel_tol=0.1)
    assert speedup(1000, steps) < 0.5
