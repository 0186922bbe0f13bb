"""Serving benchmarks: workloads, prompt lengths, replicas and shards, the server's own metrics."""
