"""The command line of the tool a workload mirrors, as this run's effective settings would give it: the
workload's prompts after every `--workload-set`, and the load after the profile and the flags (the workload
file's own `mirrors` is what it ships with, and says nothing of what a run changed).

One command per load level (neither tool sweeps in one command). `num_prompts` is what both tools mean by
their flags: the measured prompts; qualeval's warm-up requests come on top and are stated apart.
"""

from __future__ import annotations

import math

from qualeval.records import RunConfig, WorkloadPrompts

__all__ = ["reproduces"]


def _loads(config: RunConfig) -> list[tuple[int, float | None]]:
    """(concurrency cap, request rate) per load level, as the run sweeps them (qualeval.run.levels)."""
    if config.request_rate:
        return [(config.concurrency[0], rate) for rate in config.request_rate]
    return [(c, None) for c in config.concurrency]


def _vllm(
    prompts: WorkloadPrompts,
    cap: int,
    rate: float | None,
    config: RunConfig,
    tasks: list[str],
    percentiles: list[float],
) -> str:
    words = ["vllm bench serve"]
    if prompts.kind == "random":
        words += ["--dataset-name random", f"--random-input-len {prompts.input_len}"]
        words += [f"--random-output-len {prompts.output_len}"] if prompts.output_len else []
        words += [f"--random-range-ratio {prompts.range_ratio:g}"]
    elif prompts.kind == "sharegpt":
        words += ["--dataset-name sharegpt", f"--dataset-path {prompts.path}"]
        words += [f"--sharegpt-output-len {prompts.output_len}"] if prompts.output_len else []
    words.append(f"--num-prompts {prompts.num_prompts}")
    if rate is not None:
        words += [f"--request-rate {rate:g}", f"--burstiness {config.burstiness:g}"]
    words += [f"--max-concurrency {cap}", f"--seed {prompts.seed}", "--percentile-metrics ttft,tpot,itl,e2el"]
    words.append(f"--metric-percentiles {','.join(f'{p:g}' for p in percentiles)}")
    return " ".join(words) + _items(prompts, tasks)


def _benchy(prompts: WorkloadPrompts, cap: int, config: RunConfig, tasks: list[str]) -> str:
    words = ["llama-benchy", f"--pp {prompts.input_len}"]
    words += [f"--tg {prompts.output_len}"] if prompts.output_len else []
    words += [f"--depth {prompts.context}"] if prompts.context else []
    words += [f"--concurrency {cap}", f"--runs {math.ceil(prompts.num_prompts / cap)}"]
    asides = [f"{prompts.depth} earlier exchanges in each conversation"] if prompts.depth else []
    if prompts.num_prompts % cap:
        asides.append(f"its last run {prompts.num_prompts % cap} requests, not {cap}")
    if not config.batch:
        asides.append("sent as a closed loop, not in runs")
    return " ".join(words) + (f" ({'; '.join(asides)})" if asides else "") + _items(prompts, tasks)


def _items(prompts: WorkloadPrompts, tasks: list[str]) -> str:
    if prompts.kind == "task":
        return f" (the prompts: items of {', '.join(tasks) or prompts.task or 'syllogisms'}, scored)"
    if tasks and prompts.kind == "random":
        return f" (each prompt ends with an item of {', '.join(tasks)}, scored)"
    return ""


def reproduces(
    style: str, prompts: WorkloadPrompts, config: RunConfig, tasks: list[str], percentiles: list[float]
) -> str:
    """The mirrored tool's command for each load level, and the warm-up qualeval sends before each."""
    commands: list[str] = []
    for cap, rate in _loads(config):
        if style == "llama-benchy":
            commands.append(_benchy(prompts, cap, config, tasks))
        else:
            commands.append(_vllm(prompts, cap, rate, config, tasks, percentiles))
    shown = " ; ".join(dict.fromkeys(commands))
    warm = config.warmup
    if warm:
        shown += f". Before each level, {warm} warm-up request{'s' if warm > 1 else ''}, not counted in the figures"
    return shown
