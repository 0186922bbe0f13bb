"""The Python API: `qualeval.evaluate(...)` takes the same options as `qualeval run` (both are made from
qualeval.records.RunConfig, and both go through `run` here), and `qualeval.open_run(DIR)` reads a finished run
back."""

from __future__ import annotations

import asyncio
import difflib
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from qualeval.errors import EndpointError, InputError, QualevalWarning
from qualeval.figures import below
from qualeval.records import Record, RunConfig, RunStore, RunSummary
from qualeval.report import write_reports_or_warn
from qualeval.run import RunOptions, check_kinds, execute, load_config, progress_bar
from qualeval.wire import run_async

__all__ = ["RunResult", "evaluate", "evaluate_async", "finish_run", "open_run", "run"]


@dataclass
class RunResult:
    root: Path
    summary: RunSummary
    failed_under: list[str]
    """Tasks whose accuracy line (every item with a response; endpoint errors left out) fell below `fail_under` (empty
    when none was set)."""
    fail_under: float | None = None
    """The share the run's accuracy was held to (`fail_under`); None when none was set, or for open_run."""

    @property
    def endpoint_errors(self) -> int:
        """Requests that failed for good at the endpoint: no answer, so in no accuracy. Rerunning with the same
        `out` sends them again."""
        return sum(t.summary.endpoint_errors for t in self.summary.tasks.values())

    @property
    def records(self) -> list[Record]:
        return list(RunStore(self.root).records())

    def to_pandas(self) -> Any:
        """One row per record, flattened (Record.frame_row): ids, prompt, reasoning, content, answer,
        correctness, timing, usage, the sample's meta, whether it is scored and its shape."""
        import pandas as pd

        return pd.DataFrame(record.frame_row() for record in RunStore(self.root).records())


def finish_run(config: RunConfig, summary: RunSummary) -> RunResult:
    """Reports into the run directory (a report that fails is a warning), and the fail-under verdict."""
    assert config.out is not None
    store = RunStore(config.out)
    write_reports_or_warn(store, summary, store.records())
    _all_failed(summary)
    low = [] if config.fail_under is None else below(summary, config.fail_under)
    return RunResult(config.out, summary, low, config.fail_under)


async def run(
    profile: str | Path | None,
    options: Mapping[str, Any],
    *,
    progress: bool = False,
    on_record: Callable[[Record], None] | None = None,
) -> RunResult:
    """The one path of a run, for `evaluate` and `qualeval run` alike: the profile (a file, or a shipped profile's
    name) with the options on top (an option at None is not given), the run, its reports and the fail-under
    verdict. `progress` draws the bar on stderr; `on_record` hears every record as it is written."""
    config = load_config(Path(profile) if profile else None, dict(options))
    if not progress:
        summary = await execute(config, on_record=on_record)
    else:
        with progress_bar(also=on_record) as bar:
            summary = await execute(config, on_record=bar.on_record, on_start=bar.on_start)
    return finish_run(config, summary)


async def evaluate_async(
    model: str,
    tasks: str | Sequence[str],
    *,
    base_url: str | None = None,
    out: str | Path | None = None,
    config: str | Path | None = None,
    progress: bool = False,
    on_record: Callable[[Record], None] | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """`evaluate` for code that already runs an event loop (`await qualeval.evaluate_async(...)`)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    flags: dict[str, Any] = {"model": model, "tasks": tasks, "base_url": base_url, **options}
    flags["out"] = out or Path("runs") / f"{model.replace('/', '_')}-{stamp}"
    unknown = sorted(set(flags) - set(RunConfig.model_fields))
    if unknown:  # a caller that no type checker reads
        near = difflib.get_close_matches(unknown[0], RunConfig.model_fields, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise InputError(
            f"evaluate() got an unknown option '{unknown[0]}' (options are the flags of qualeval run){hint}"
        )
    check_kinds(options, "")  # text for a number is refused, never converted: only flags arrive as text
    result = await run(config, flags, progress=progress, on_record=on_record)
    _warn_endpoint_errors(result)
    return result


def _warn_endpoint_errors(result: RunResult) -> None:
    """The API's counterpart of the CLI's `error:` line and exit 3: requests that failed at the endpoint have no
    answer, so the accuracy is over fewer items than asked for; a caller that reads only the accuracy is told."""
    if result.endpoint_errors:
        warnings.warn(
            f"{result.endpoint_errors} requests ended in an endpoint error and have no answer; they are in no "
            f"accuracy (RunResult.endpoint_errors). Run again with out={str(result.root)!r} to send them again",
            QualevalWarning,
            stacklevel=3,
        )


def evaluate(
    model: str,
    tasks: str | Sequence[str],
    *,
    base_url: str | None = None,
    out: str | Path | None = None,
    config: str | Path | None = None,
    progress: bool = False,
    on_record: Callable[[Record], None] | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """Run tasks against an endpoint and return the summary and records.

    Args:
        model: the model name to send.
        tasks: a task or a list of them: built-in names (`gsm8k`, `mmlu:stem`), task YAML paths, `lm_eval:NAME`.
        base_url: the endpoint (default: OPENAI_BASE_URL).
        out: the run directory (default: runs/<model>-<time>); an existing run there is resumed.
        config: a profile file from configs/, or a shipped profile's name; the other arguments override it.
        progress: draw a progress bar on stderr.
        on_record: called with every record as it is written.
        **options: every other `qualeval run` option by name, typed in qualeval.run.keywords.RunOptions and
            described in qualeval.records.RunConfig (`limit=50`, `concurrency=[1, 4]`, `data="path"` or
            `data={"gsm8k": "path"}`):
            endpoint: api_key, timeout, max_retries, probe, probe_time, stream, stream_parity, max_tokens_field,
                endpoints;
            tasks: data, limit, limit_per_subject, sample_seed, num_fewshot, samples_per_item;
            load: concurrency, request_rate, burstiness, arrival_seed, warmup, slo, batch, shard;
            generation: max_tokens, temperature, top_p, top_k, min_p, presence_penalty, sampling, thinking,
            thinking_pair, reasoning_effort, thinking_budget, thinking_switch, thinking_opened, reasoning_format,
            reasoning_passback;
            answers: constraint, constraint_style, rescue, judge_base_url, judge_model, allow_code_execution,
            fail_under, published, within;
            serving: workload, workload_set, context_lengths, context_depth, filler, tokenizer, force_output.

    Works inside a running event loop too (Jupyter): the run then goes on a worker thread with its own loop.
    """
    running = evaluate_async(
        model, tasks, base_url=base_url, out=out, config=config, progress=progress, on_record=on_record, **options
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_async(running)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="qualeval") as pool:
        return pool.submit(run_async, running).result()


def open_run(root: str | Path) -> RunResult:
    """An earlier run directory, typed: its summary and records, without running anything. The folder of a
    `qualeval score` is refused, naming where its results are."""
    root = Path(root)
    summary_path = root / "summary.json"
    if not summary_path.exists():
        raise InputError(f"{root}: no summary.json here; is this a finished qualeval run directory?")
    try:
        summary = RunSummary.model_validate_json(summary_path.read_bytes())
    except ValueError as exc:
        raise InputError(f"{summary_path}: not a qualeval run summary ({exc.__class__.__name__})") from None
    if summary.source is not None and not RunStore(root).records_path.exists():
        # `qualeval score` writes items.jsonl, not records: a result here would hold none, as if nothing was judged
        raise InputError(
            f"{root}: scored offline by qualeval score (from {summary.source}), not a run: its figures are in "
            f"summary.json and each line's verdict in items.jsonl; open_run reads run directories"
        )
    return RunResult(root, summary, [])


def _all_failed(summary: RunSummary) -> None:
    """A run whose every request failed says so, with the error, rather than reporting 0% accuracy; so does one
    whose scored tasks got no answer of the model's at all (a reference server that knows none of their
    questions): an accuracy of "–" and exit 0 would look like a run that worked."""
    statuses = [t.summary.statuses for t in summary.tasks.values()]
    total = sum(sum(st.values()) for st in statuses)
    failed = sum(st.get("transport_error", 0) for st in statuses)
    if total and failed == total:
        errors = Counter[str]()
        for t in summary.tasks.values():
            errors.update(t.summary.error_reasons)
        message = errors.most_common(1)[0][0] if errors else "no response"
        raise EndpointError(f"every request failed ({failed} of {total}): {message}")
    scored = {name: t.summary.statuses for name, t in summary.tasks.items() if t.scored}
    asked = sum(sum(st.values()) for st in scored.values())
    unknown = sum(st.get("unknown_question", 0) for st in scored.values())
    failed = sum(st.get("transport_error", 0) for st in scored.values())
    if unknown and unknown + failed == asked:
        also = f", {failed} failed at the endpoint" if failed else ""
        raise EndpointError(
            f"no item was answered by the model: {unknown} of {asked} requests were questions the reference "
            f"server's answer key does not hold (unknown_question){also}; start it with this run's tasks "
            f"(serve-sim --task {next(iter(scored))}) or --answers FILE"
        )
