"""Serving benchmarks: workloads, prompt lengths, replicas and shards, the server's own metrics.

workloads   llama-benchy's and `vllm bench serve`'s prompts by name (configs/workloads/)
lengths     token counting and filler      shaping  a run's items: workload, context lengths, shard
endpoints   replicas                       wiring   how they are wired into a run
timeseries  the once-a-second sampler (servermetrics.yaml: each server's /metrics names), and timeseries.jsonl read back
figures     the tools' own figures (with qualeval.figures; qualeval.report draws them: report.serving_sections,
            report.serving_plots)
"""
