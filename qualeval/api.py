"""The Python API: `qualeval.evaluate(...)` takes the same options as `qualeval run`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from qualeval.config import RunConfig, load_config
from qualeval.errors import EndpointError
from qualeval.report import write_reports_or_warn
from qualeval.run import RunSummary, execute, timed_of
from qualeval.runner import Record
from qualeval.store import RunStore
from qualeval.transport import run_async

__all__ = ["RunResult", "evaluate", "finish_run"]


@dataclass
class RunResult:
    root: Path
    summary: RunSummary
    failed_under: list[str]
    """Tasks whose accuracy fell below `fail_under` (empty when none was set)."""

    @property
    def records(self) -> list[Record]:
        return [Record.model_validate(row) for row in RunStore(self.root).records()]

    def to_pandas(self) -> Any:
        """One row per record, flattened: ids, status, answer, correctness, timing and usage."""
        import pandas as pd

        rows = []
        for row in RunStore(self.root).records():
            timing, usage = row.get("timing") or {}, row.get("usage") or {}
            timed = timed_of(row)
            rows.append(
                {
                    "sample_id": row["sample_id"],
                    "task": row["task"],
                    "attempt": row["attempt"],
                    "status": row["status"],
                    "correct": row["score"]["correct"],
                    "extracted": row["extraction"]["value"],
                    "rung": row["extraction"]["rung"],
                    "gold": row["gold"],
                    "naive_correct": row.get("naive_correct"),
                    "constraint_held": (row.get("constraint") or {}).get("held"),
                    "reasoning_source": row["reasoning_source"],
                    "level": row.get("level", ""),
                    "warmup": bool(row.get("warmup")),
                    "retries": len(row.get("retried") or ()),
                    "timing_tpot": timed.tpot,
                    "timing_reasoning_duration": timed.reasoning_duration,
                    "finish_reason": row["finish_reason"],
                    **{
                        f"timing_{k}": timing.get(k)
                        for k in ("first_byte", "ttft", "first_reasoning", "first_content", "end", "decode_rate")
                    },
                    **{
                        f"usage_{k}": usage.get(k)
                        for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "answer_tokens")
                    },
                    **{f"meta_{k}": v for k, v in (row.get("meta") or {}).items()},
                }
            )
        return pd.DataFrame(rows)


def finish_run(config: RunConfig, summary: RunSummary) -> RunResult:
    """Reports into the run directory (a report that fails is a warning), and the fail-under verdict."""
    assert config.out is not None
    store = RunStore(config.out)
    write_reports_or_warn(store, summary, store.records())
    _all_failed(summary)
    low = [
        name
        for name, t in summary.tasks.items()
        if config.fail_under is not None and t.summary.accuracy < config.fail_under
    ]
    return RunResult(config.out, summary, low)


def evaluate(
    *,
    model: str,
    tasks: list[str],
    base_url: str | None = None,
    out: str | Path | None = None,
    config: str | Path | None = None,
    on_record: Callable[[Record], None] | None = None,
    **options: Any,
) -> RunResult:
    """Run tasks against an endpoint and return the summary and records.

    Args:
        model: the model name to send.
        tasks: built-in names (`gsm8k`, `mmlu:stem`), task YAML paths, or `lm_eval:NAME`.
        base_url: the endpoint (default: OPENAI_BASE_URL).
        out: the run directory (default: runs/<model>-<time>); an existing run there is resumed.
        config: a profile file from configs/; the other arguments override it.
        **options: any other `qualeval run` option, by its flag name with underscores (`limit`,
            `concurrency`, `samples_per_item`, `constraint`, `data={"gsm8k": "path"}`, ...).
    """
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    flags = {
        "model": model,
        "tasks": tasks,
        "base_url": base_url,
        "out": out or Path("runs") / f"{model.replace('/', '_')}-{stamp}",
        **options,
    }
    run_config = load_config(Path(config) if config else None, flags)
    summary = run_async(execute(run_config, on_record=on_record))
    return finish_run(run_config, summary)


def _all_failed(summary: RunSummary) -> None:
    """A run whose every request failed says so, with the error, rather than reporting 0% accuracy."""
    statuses = [t.summary.statuses for t in summary.tasks.values()]
    total = sum(sum(st.values()) for st in statuses)
    failed = sum(st.get("transport_error", 0) for st in statuses)
    if total and failed == total:
        errors = Counter[str]()
        for t in summary.tasks.values():
            errors.update(t.errors)
        message = errors.most_common(1)[0][0] if errors else "no response"
        raise EndpointError(f"every request failed ({failed} of {total}): {message}")
