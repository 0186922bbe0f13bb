"""What each command does besides reading its flags and printing: start what it needs, call the library in
order, write the files. The CLI calls one function here per command and prints what comes back, so the same
steps can be driven from Python; a whole run is driven by qualeval.api.run, and rescored by qualeval.run.rescoring.

The heavier modules are imported inside the functions that use them: `qualeval --help` should not load them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualeval.errors import InputError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from qualeval.records import ClientConfig, Comparison, ProbeResult, RunStore, RunSummary, TaskSummary
    from qualeval.run import ProbeOptions, ReadOptions
    from qualeval.sim import SimConfig, SimServer
    from qualeval.tasks import Sample

__all__ = [
    "compare_and_write",
    "merge_and_report",
    "probe_endpoint",
    "rescore_and_report",
    "run_sim_server",
    "score_and_write",
    "sim_endpoint",
    "task_sample",
    "write_json",
]


def _cannot_write(path: Path, exc: OSError) -> InputError:
    return InputError(f"{path}: cannot write ({exc.strerror})")


def write_json(path: Path, model: BaseModel) -> str:
    """`model` as indented JSON into `path`; returns the text, so a caller can print the same bytes."""
    text = model.model_dump_json(indent=2)
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    return text


@contextlib.contextmanager
def sim_endpoint(base_url: str | None, sim: str | None) -> Iterator[str | None]:
    """The URL to talk to: the one given, or a reference server of flavour `sim` started for the block."""
    if sim is None:
        yield base_url
        return
    if base_url:
        raise InputError("give --base-url or --sim, not both")
    from qualeval.sim import SimConfig, running_server

    with running_server(SimConfig(flavour=sim, port=0)) as url:
        yield url


def probe_endpoint(options: ProbeOptions, *, sim: str | None) -> ProbeResult:
    """Probe an endpoint (or a reference server started for it) for what it honours."""
    from qualeval.run import PROBE_CONCURRENCY
    from qualeval.wire import check_config, run_async

    with sim_endpoint(options.base_url, sim) as url:
        values: dict[str, object] = {
            "timeout": options.timeout,
            "max_retries": options.max_retries,
            "concurrency": PROBE_CONCURRENCY,
        }
        if url:
            values["base_url"] = url
        return run_async(_probe(check_config(**values), options))


async def _probe(config: ClientConfig, options: ProbeOptions) -> ProbeResult:
    from qualeval.run import add_passback, check_tools, probe, probe_passback
    from qualeval.wire import ChatClient

    async with ChatClient(config) as client:
        clock = asyncio.get_running_loop().time
        began = clock()
        # the passback check goes first: four short requests, where the probe's sampled checks can use up its time
        passed = await probe_passback(client, options.model, seconds=options.probe_time) if options.passback else None
        left = options.probe_time - (clock() - began)
        found = await probe(client, options.model, max_tokens=options.max_tokens, seconds=left)
        if options.tools:  # the probe's time is shared: the contracts get what the checks before them left
            left = options.probe_time - (clock() - began)
            await check_tools(client, options.model, found, seconds=left)
        if passed is not None:
            add_passback(found, passed)
            found.seconds = options.probe_time  # the budget of the whole probe, the passback check's share in it
        return found


def task_sample(task: str, *, data: Path | None, index: int, num_fewshot: int | None) -> Sample:
    """Sample number `index` of a task, rendered as it would be sent."""
    from qualeval.run import data_task, one_task_data
    from qualeval.scoring import check_scorers
    from qualeval.tasks import build_samples, load_task

    loaded = load_task(task)
    check_scorers([loaded])
    given = str(data)
    data = one_task_data(data, task, loaded)  # TASK=PATH, as `run` takes it, works here too
    loaded = data_task(loaded, data, given)  # the user's file, never the bundled samples in its place
    samples = build_samples(loaded, data=data, limit=index + 1, num_fewshot=num_fewshot)
    if index >= len(samples):
        raise InputError(f"--index {index}: task {loaded.name} has only {len(samples)} samples")
    return samples[index]


def score_and_write(
    task: str,
    responses: Path,
    out: Path,
    *,
    read: ReadOptions,
    reasoning_formats: Sequence[Path],
    thinking: bool | None,
    thinking_opened: bool | None,
    allow_code: bool,
    **options: Any,
) -> TaskSummary:
    """Score a file of responses offline and write items.jsonl, summary.json and the reports into `out`.

    `read`: how to read the file and match its ids; `reasoning_formats` are tried before the built-in ones;
    `options` are score_lines' (data, rescue, judge_*, note).
    """
    from qualeval.reasoning import resolve_formats
    from qualeval.run import SplitOptions, check_out, data_task, one_task_data, score_lines, write_offline
    from qualeval.tasks import load_task

    if responses.is_dir():  # a run directory's records are rescored, not scored as a file of responses
        run = (responses / "records.jsonl").exists()
        hint = f"a run directory is rescored with `qualeval rescore {responses}`" if run else "give the file"
        raise InputError(f"--responses {responses}: a folder, not a file of responses; {hint}")
    try:
        check_out(out)  # before any line is judged (or graded by a model judge)
        own = resolve_formats([str(p) for p in reasoning_formats]) if reasoning_formats else ()
        split = SplitOptions(formats=(*own, *resolve_formats(None)), thinking=thinking, opened=thinking_opened)
        loaded = load_task(task)
        given = str(options.get("data"))
        options["data"] = one_task_data(options.get("data"), task, loaded)  # TASK=PATH, as `run` takes it
        loaded = data_task(loaded, options["data"], given)  # the user's file, never the bundled samples
        items, summary, scored = score_lines(
            loaded, responses, read=read, split=split, allow_code=allow_code, **options
        )
        write_offline(out, loaded, responses, items, summary, scored)
    except OSError as exc:
        raise _cannot_write(out, exc) from None
    return summary


def compare_and_write(run_a: Path, run_b: Path, out: Path, *, seed: int, again: Path | None = None) -> Comparison:
    """Compare two run directories (and a rerun of A's, for the noise) and write compare.json and compare.html."""
    from qualeval.figures import compare_runs
    from qualeval.report import compare_html
    from qualeval.run import check_out

    check_out(out, "compare.json and compare.html")  # never into a run directory: checked before any run is read
    result = compare_runs(run_a, run_b, seed=seed, again=again)
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / "compare.json", result)
        (out / "compare.html").write_text(compare_html(result), encoding="utf-8")
    except OSError as exc:
        raise _cannot_write(out, exc) from None
    return result


def rescore_and_report(
    run_dir: Path, *, rescue: bool | None, allow_code: bool, note: Callable[[str], None] | None = None
) -> tuple[RunSummary, RunStore]:
    """Re-score a run directory offline and write its reports (a report that fails is a warning); `note` hears
    which spec judged each task."""
    from qualeval.report import write_reports_or_warn
    from qualeval.run import rescore

    # the flag, not the run's manifest: a code task's programs run again only when this rescore is allowed to
    summary, store = rescore(run_dir, rescue=rescue, allow_code=allow_code, note=note)
    write_reports_or_warn(store, summary, store.records())
    return summary, store


def merge_and_report(runs: Sequence[Path], out: Path) -> tuple[RunSummary, RunStore]:
    """Join the shards of one run into `out` and write its reports (a report that fails is a warning)."""
    from qualeval.report import write_reports_or_warn
    from qualeval.run import merge_runs

    summary, store = merge_runs(runs, out)
    write_reports_or_warn(store, summary, store.records())
    return summary, store


def run_sim_server(config: SimConfig, on_listening: Callable[[SimServer, int], None]) -> None:
    """Run the reference server until interrupted; `on_listening` gets it and its bound port once it listens."""
    from qualeval.sim import SimServer

    server = SimServer(config)

    async def serve() -> None:
        try:
            port = await server.start()
        except OSError as exc:
            raise InputError(f"cannot listen on {config.host}:{config.port}: {exc.strerror}") from None
        on_listening(server, port)
        await asyncio.Event().wait()

    asyncio.run(serve())
