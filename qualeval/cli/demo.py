"""`qualeval demo`: the product end to end on this machine, against the reference server.

The server is SIMULATED (a vLLM-style reasoning model) with the traps real ones set: reasoning full of
distractor numbers, a token budget that some thinking overruns, and a structured-output parameter the server
silently ignores (`guided_*` on vLLM >= 0.12). Every report says it is simulated.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from qualeval.api import RunResult, run
from qualeval.errors import InputError
from qualeval.records import RunStore
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.wire import run_async

__all__ = ["DEMO_TASKS", "run_demo"]

DEMO_TASKS = ("word_problems", "knowledge_qa", "syllogisms")
_MODEL = "sim-reasoner"


def _clear(out: Path) -> None:
    """The demo owns its output: its own earlier run there is replaced (that run's server, on another port, is
    gone, so it could not be resumed); a directory holding anything else is refused, never overwritten."""
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return
    manifest = RunStore(out).manifest() if out.is_dir() else None
    config = manifest.config if manifest else None
    if not (manifest and manifest.simulated and config and config.model == _MODEL and config.tasks == [*DEMO_TASKS]):
        raise InputError(f"{out}: holds something other than a demo run; give the demo another --out")
    shutil.rmtree(out)


def run_demo(out: Path, *, progress: bool = False) -> RunResult:
    _clear(out)
    sim = SimConfig(
        flavour="vllm",
        port=0,
        model=_MODEL,
        tasks=DEMO_TASKS,
        behaviour=Behaviour(accuracy=0.8, reasoning_tokens=160, trap_rate=0.4, seed=7),
        latency=Latency(ttft_ms=25, prefill_ms_per_token=0.01, decode_ms=0.6, batch_slowdown=0.02, jitter=0.2),
    )
    with running_server(sim) as url:
        options: dict[str, Any] = {
            "base_url": url,
            "model": _MODEL,
            "tasks": list(DEMO_TASKS),
            "out": out,
            "limit": 24,
            "sample_seed": 0,
            "concurrency": 12,
            "max_tokens": 420,
            "constraint": "single",
            "constraint_style": "guided",
            "max_retries": 2,
        }
        return run_async(run(None, options, progress=progress))
