"""Serving benchmarks: workloads, prompt lengths, replicas and shards, the server's own metrics.

workloads   llama-benchy's and `vllm bench serve`'s prompts by name (configs/workloads/)
lengths     token counting and filler      shaping  a run's items: workload, context lengths, shard
endpoints   replicas                       wiring   how they are wired into a run
timeseries  the once-a-second sampler (servermetrics.yaml: each server's /metrics names), and timeseries.jsonl read back
figures     the tools' own figures (with qualeval.figures; qualeval.report draws them: report.serving_sections,
            report.serving_plots)
"""

from qualeval.serving.shaping import needs_shaping, parse_shard, shape_work
from qualeval.serving.timeseries import read_series
from qualeval.serving.wiring import serving_client, serving_figures
from qualeval.serving.workloads import load_workload

__all__ = [
    "load_workload",
    "needs_shaping",
    "parse_shard",
    "read_series",
    "serving_client",
    "serving_figures",
    "shape_work",
]
