"""The `qualeval` command. Thin: flags become the same config objects the Python API takes.

Exit codes: 0 done; 2 bad input (a file, field or flag); 3 the endpoint could not be reached or refused us.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from qualeval._version import __version__
from qualeval.client import ChatClient, check_config
from qualeval.errors import EndpointError, InputError, QualevalError
from qualeval.options import cli_parameters
from qualeval.probe import ProbeResult, probe
from qualeval.summary import TaskSummary
from qualeval.transport import run_async

app = typer.Typer(
    name="qualeval",
    help="Reasoning-aware quality and speed evaluation for OpenAI-compatible chat endpoints.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
errors = Console(stderr=True)


def _fail(exc: QualevalError) -> NoReturn:
    # the message is plain text: `pip install "qualeval[lm-eval]"` must not lose its brackets to rich markup
    errors.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(3 if isinstance(exc, EndpointError) else 2)


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        console.print(f"qualeval {__version__}")
        raise typer.Exit(0)


def _check_rate(flag: str, value: float) -> None:
    if not 0 <= value <= 1:
        raise InputError(f"{flag} must be between 0 and 1, got {value}")


@app.command("probe", rich_help_panel="Inspect")
def probe_cmd(
    base_url: Annotated[
        str | None,
        typer.Option(help="Endpoint, e.g. http://127.0.0.1:8011/v1.", envvar="OPENAI_BASE_URL", show_envvar=True),
    ] = None,
    model: Annotated[str, typer.Option(help="Model name to send.")] = "sim",
    output: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the JSON result here.")] = None,
    max_tokens: Annotated[
        int, typer.Option(help="Start token budget of each probe request (doubled for a sample that runs out).")
    ] = 2048,
    timeout: Annotated[float, typer.Option(help="Seconds per request attempt.")] = 120.0,
    max_retries: Annotated[int, typer.Option(help="Retries on 429, 5xx and connection errors.")] = 2,
    sim: Annotated[
        str | None,
        typer.Option(help="Probe a reference server of this flavour, started in-process (instead of --base-url)."),
    ] = None,
) -> None:
    """Report what an endpoint really honours: reasoning fields, streaming usage, structured outputs."""
    if output not in ("table", "json"):
        _fail(InputError(f"--format must be 'table' or 'json', got '{output}'"))
    try:
        if max_tokens < 1:
            raise InputError(f"--max-tokens must be at least 1, got {max_tokens}")
        with _endpoint(base_url, sim) as url:
            # each check is sampled repeatedly: let them all be in flight at once
            values: dict[str, object] = {"timeout": timeout, "max_retries": max_retries, "concurrency": 32}
            if url:
                values["base_url"] = url
            config = check_config(**values)
            result = run_async(_probe(config, model, max_tokens))
    except QualevalError as exc:
        _fail(exc)
    text = result.model_dump_json(indent=2)
    if json_path is not None:
        try:
            json_path.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            _fail(InputError(f"{json_path}: cannot write ({exc.strerror})"))
    if output == "json":
        sys.stdout.write(text + "\n")
    else:
        _print_probe(result)


@contextlib.contextmanager
def _endpoint(base_url: str | None, sim: str | None) -> Iterator[str | None]:
    """The URL to talk to: the one given, or a reference server started here for the command's duration."""
    if sim is None:
        yield base_url
        return
    if base_url:
        raise InputError("give --base-url or --sim, not both")
    from qualeval.sim import SimConfig, running_server

    with running_server(SimConfig(flavour=sim, port=0)) as url:
        yield url


async def _probe(config: object, model: str, max_tokens: int) -> ProbeResult:
    async with ChatClient(config) as client:  # type: ignore[arg-type]
        return await probe(client, model, max_tokens=max_tokens)


def _print_probe(result: ProbeResult) -> None:
    title = f"{result.base_url}  model {result.model}" + ("  [SIMULATED server]" if result.simulated else "")
    table = Table("capability", "found", title=title, title_justify="left")
    table.add_row("reasoning (non-stream)", result.reasoning_source)
    table.add_row("reasoning (stream)", result.stream_reasoning_source)
    table.add_row("reasoning fields seen", ", ".join(result.reasoning_fields) or "none")
    table.add_row("hidden reasoning (count only)", "yes" if result.hidden_reasoning else "no")
    table.add_row("usage in stream", "yes" if result.streaming_usage else "no")
    table.add_row("reasoning tokens reported", "yes" if result.reasoning_tokens_reported else "no (estimated)")
    for switch, verdict in result.thinking_switch.items():
        table.add_row(f"thinking off via {switch}", verdict)
    for mode, check in result.structured_outputs.items():
        table.add_row(f"structured: {mode}", check.verdict)
    console.print(table)
    for note in result.notes:
        console.print(f"note: {note}", highlight=False)


tasks_app = typer.Typer(help="List built-in tasks and render their samples.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks", rich_help_panel="Inspect")


@tasks_app.command("list")
def tasks_list() -> None:
    """List the built-in tasks."""
    from qualeval.tasks import builtin_tasks, parse_task

    table = Table("task", "documents from", "description")
    try:
        for name, path in builtin_tasks().items():
            spec = parse_task(path)
            source = (
                "generated" if spec.generator else "bundled" if spec.samples else spec.dataset_path or "--data only"
            )
            if spec.subsets:
                name += (
                    f" (+{len(spec.subsets.values)} {spec.subsets.label}s, groups: {', '.join(spec.subsets.groups)})"
                )
            table.add_row(name, source, spec.description.split(" (")[0].split(": ")[0].split(". ")[0])
    except QualevalError as exc:
        _fail(exc)
    console.print(table)


@tasks_app.command("show")
def tasks_show(
    task: Annotated[str, typer.Argument(help="Built-in name (gsm8k, mmlu:stem), a .yaml path, or lm_eval:NAME.")],
    data: Annotated[Path | None, typer.Option(help="Read the documents from this local file or folder.")] = None,
    index: Annotated[int, typer.Option(help="Which sample to render.")] = 0,
    num_fewshot: Annotated[int | None, typer.Option(help="Few-shot examples (the task's default otherwise).")] = None,
    output: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Render one real sample: its id, messages, gold answer, choices and metadata."""
    from qualeval.tasks import build_samples, load_task

    if output not in ("text", "json"):
        _fail(InputError(f"--format must be 'text' or 'json', got '{output}'"))
    if index < 0:
        _fail(InputError(f"--index must not be negative, got {index}"))
    try:
        loaded = load_task(task)
        samples = build_samples(loaded, data=data, limit=index + 1, num_fewshot=num_fewshot)
    except QualevalError as exc:
        _fail(exc)
    if index >= len(samples):
        _fail(InputError(f"--index {index}: task {loaded.name} has only {len(samples)} samples"))
    sample = samples[index]
    if output == "json":
        sys.stdout.write(sample.model_dump_json(indent=2) + "\n")
        return
    console.print(f"[bold]{sample.id}[/]  task {sample.task}", highlight=False)
    for message in sample.messages:
        console.rule(message.role, align="left")
        console.print(message.content, markup=False, highlight=False)
    console.rule()
    console.print(f"gold: {sample.gold}", markup=False, highlight=False)
    if sample.choices:
        console.print(f"choices: {list(sample.choices)}", markup=False, highlight=False)
    if sample.aliases:
        console.print(f"aliases: {list(sample.aliases)[:8]}", markup=False, highlight=False)
    if sample.meta:
        console.print(f"meta: {sample.meta}", markup=False, highlight=False)


_JUDGE_URL_HELP = (
    "A model judge (OpenAI-compatible base URL) asked only about free-form answers the rules reject; "
    "key from QUALEVAL_JUDGE_API_KEY or OPENAI_API_KEY."
)


@app.command("score", rich_help_panel="Evaluate")
def score_cmd(
    task: Annotated[str, typer.Option(help="Task: built-in name, .yaml path, or lm_eval:NAME.")],
    responses: Annotated[Path, typer.Option(help="JSONL of responses (see --format).")],
    out: Annotated[Path, typer.Option(help="Folder for items.jsonl, summary.json and the reports.")],
    data: Annotated[
        Path | None, typer.Option(help="Local data for the task (not needed when every line has a target).")
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="qualeval ({id, content, reasoning?, finish_reason?, target?, choices?}) or lm-eval "
            "(samples_*.jsonl).",
        ),
    ] = "qualeval",
    rescue: Annotated[
        bool,
        typer.Option(
            help="Also read answers from the reasoning when the content is empty "
            "(counted apart, never in the accuracy)."
        ),
    ] = False,
    thinking: Annotated[
        bool | None,
        typer.Option("--thinking/--no-thinking", help="Whether the responses were made with thinking on or off."),
    ] = None,
    thinking_opened: Annotated[
        bool, typer.Option(help="The chat template opened the thinking block (output has only </think>).")
    ] = False,
    reasoning_format: Annotated[
        list[Path] | None, typer.Option(help="A reasoning-format YAML to split with (repeatable), before built-ins.")
    ] = None,
    judge_base_url: Annotated[str | None, typer.Option(help=_JUDGE_URL_HELP)] = None,
    judge_model: Annotated[str | None, typer.Option(help="The model judge's model name.")] = None,
    allow_code_execution: Annotated[
        bool, typer.Option(help="Run the model's code to score code tasks (HumanEval), each in a sandboxed process.")
    ] = False,
) -> None:
    """Score responses from elsewhere with qualeval's extractor, offline: no endpoint, no requests."""
    from qualeval.formats import resolve_formats
    from qualeval.offline import SplitOptions, score_lines, write_offline
    from qualeval.scorers.humaneval import allow_code_execution as allow
    from qualeval.tasks import load_task

    allow(allow_code_execution)

    if fmt not in ("qualeval", "lm-eval"):
        _fail(InputError(f"--format must be 'qualeval' or 'lm-eval', got '{fmt}'"))
    if bool(judge_base_url) != bool(judge_model):
        _fail(InputError("--judge-base-url and --judge-model go together"))
    try:
        own = resolve_formats([str(p) for p in reasoning_format]) if reasoning_format else ()
        split = SplitOptions(formats=(*own, *resolve_formats(None)), thinking=thinking, opened=thinking_opened)
        loaded = load_task(task)
        items, summary, scored = score_lines(
            loaded,
            responses,
            data=data,
            fmt=fmt,  # type: ignore[arg-type]
            rescue=rescue,
            split=split,
            judge_base_url=judge_base_url,
            judge_model=judge_model,
        )
        write_offline(out, loaded, responses, items, summary, scored)
    except QualevalError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(InputError(f"{out}: cannot write ({exc.strerror})"))
    print_summary(summary)
    errors.print(f"wrote {out / 'items.jsonl'}, summary.json and report.html in {out}", highlight=False)


@app.command("compare", rich_help_panel="Evaluate")
def compare_cmd(
    run_a: Annotated[Path, typer.Argument(help="The baseline run directory.")],
    run_b: Annotated[Path, typer.Argument(help="The run to compare with it.")],
    out: Annotated[
        Path | None, typer.Option(help="Folder for compare.json and compare.html (default: RUN_B/compare).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    show: Annotated[int, typer.Option(help="Flipped items listed per task in the terminal.")] = 10,
) -> None:
    """Pair two runs item by item: accuracy difference with a paired bootstrap interval and McNemar's exact
    test, latency and throughput ratios, and the items that flipped."""
    from qualeval.compare import compare_runs
    from qualeval.report import compare_html

    out = out or run_b / "compare"
    try:
        result = compare_runs(run_a, run_b, seed=seed)
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.json").write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (out / "compare.html").write_text(compare_html(result), encoding="utf-8")
    except QualevalError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(InputError(f"{out}: cannot write ({exc.strerror})"))
    for name, t in result.tasks.items():
        table = Table(
            "measure",
            "A",
            "B",
            "B vs A",
            title=f"{name}: {t.pairs} paired items" + ("  [SIMULATED server]" if result.simulated else ""),
            title_justify="left",
        )
        table.add_row(
            "accuracy",
            f"{t.accuracy_a:.1%}",
            f"{t.accuracy_b:.1%}",
            f"{t.difference:+.1%}  [{t.low:+.1%}, {t.high:+.1%}]  McNemar p={t.p_value:.3g}",
        )
        for metric, r in t.ratios.items():
            table.add_row(metric, f"{r.a:,.1f}", f"{r.b:,.1f}", f"×{r.ratio:.3f}  [{r.low:.3f}, {r.high:.3f}]")
        if t.throughput_ratio is not None:
            table.add_row("output tokens/s (aggregate)", "", "", f"×{t.throughput_ratio:.3f}")
        table.add_row("flipped right → wrong", "", "", f"{t.a_right_b_wrong}: {', '.join(t.flipped_to_wrong[:show])}")
        table.add_row("flipped wrong → right", "", "", f"{t.a_wrong_b_right}: {', '.join(t.flipped_to_right[:show])}")
        console.print(table)
    if result.server:
        table = Table("server metric", "A", "B", title="server metrics, side by side", title_justify="left")
        for name, (va, vb) in result.server.items():
            table.add_row(name, *("–" if v is None else f"{v:,.3f}" for v in (va, vb)))
        console.print(table)
    errors.print(f"wrote {out / 'compare.json'} and {out / 'compare.html'}", highlight=False)


def run_cmd(config: Path | None = None, **flags: Any) -> None:
    """Evaluate a served model: every request's answer, score and timing, in one run directory."""
    from qualeval.api import finish_run
    from qualeval.options import load_config
    from qualeval.run import execute

    try:
        run_config = load_config(config, flags)
        summary = _with_progress(run_config, execute)
        result = finish_run(run_config, summary)
    except QualevalError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        where = flags.get("out") or "the run directory"
        errors.print(f"interrupted: every finished request is saved in {where}; rerun the same command to resume")
        raise typer.Exit(130) from None
    for report in summary.tasks.values():
        if not report.scored:  # a workload's synthetic prompts: nothing to score, speed is the point
            errors.print(f"{report.summary.task}: {report.summary.n} synthetic prompts, not scored", highlight=False)
            continue
        print_summary(report.summary)
        if report.published is not None:
            low, high = report.summary.interval
            inside = "inside" if low <= report.published <= high else "outside"
            errors.print(
                f"{report.summary.task}: published {report.published:.1%}, {inside} the interval", highlight=False
            )
        if report.faults:
            faults = ", ".join(f"{k} {v}" for k, v in sorted(report.faults.items()))
            errors.print(f"{report.summary.task}: failed attempts by fault: {faults}", highlight=False)
    from qualeval.loadreport import terminal_lines

    for line in terminal_lines(summary):
        errors.print(line, highlight=False)
    errors.print(f"run directory: {result.root}  (report: {result.root / 'report.html'})", highlight=False)
    if result.failed_under:
        errors.print(f"accuracy below {run_config.fail_under:.0%}: {', '.join(result.failed_under)}", highlight=False)
        raise typer.Exit(1)


run_cmd.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter(
            "config",
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[
                Path | None,
                typer.Option(help="A run profile (configs/*.yaml); flags override it.", rich_help_panel="Run"),
            ],
        ),
        *cli_parameters(),
    ]
)
app.command("run", rich_help_panel="Evaluate")(run_cmd)


def _with_progress(run_config: Any, execute: Any) -> Any:
    """Run with a progress bar on stderr."""
    from qualeval.progress import progress_bar

    with progress_bar(errors) as bar:
        return run_async(execute(run_config, on_record=bar.on_record, on_start=bar.on_start))


@app.command("rescore", rich_help_panel="Evaluate")
def rescore_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by qualeval run.")],
    rescue: Annotated[bool | None, typer.Option(help="Override the run's --rescue setting.")] = None,
    allow_code_execution: Annotated[
        bool, typer.Option(help="Run the model's code to score code tasks (HumanEval), each in a sandboxed process.")
    ] = False,
) -> None:
    """Re-extract and re-score every record with the current extractor and task files; no request is sent.
    Writes rescore/summary.json and rescore/report.{md,html} beside the originals."""
    from qualeval.report import write_reports_or_warn
    from qualeval.run import rescore
    from qualeval.scorers.humaneval import allow_code_execution as allow

    allow(allow_code_execution)  # a code task's programs run again only when this rescore is allowed to

    try:
        summary, store = rescore(run_dir, rescue=rescue)
    except QualevalError as exc:
        _fail(exc)
    write_reports_or_warn(store, summary, store.records())  # a report that fails is a warning, not an exit code
    for report in summary.tasks.values():
        print_summary(report.summary)
    errors.print(f"rescored into {store.root}", highlight=False)


@app.command("merge", rich_help_panel="Evaluate")
def merge_cmd(
    runs: Annotated[list[Path], typer.Argument(help="The shard directories (--shard 0/N … N-1/N) of one run.")],
    out: Annotated[Path, typer.Option(help="The merged run directory.")],
) -> None:
    """Join the shards of one run (`qualeval run --shard K/N`) into one run directory: records, time series,
    summary and reports, as if it had run in one process."""
    from qualeval.merge import merge_runs
    from qualeval.report import write_reports_or_warn

    try:
        summary, store = merge_runs(runs, out)
    except QualevalError as exc:
        _fail(exc)
    write_reports_or_warn(store, summary, store.records())
    for report in summary.tasks.values():
        if report.scored:
            print_summary(report.summary)
    errors.print(f"merged {len(runs)} shards into {store.root}", highlight=False)


@app.command("demo", rich_help_panel="Evaluate")
def demo_cmd(
    out: Annotated[Path, typer.Option(help="Where to write the demo run.")] = Path("runs/demo"),
) -> None:
    """Start the reference server (SIMULATED vLLM with a reasoning model's traps) and evaluate it end to end."""
    from qualeval.demo import run_demo

    try:
        result = run_demo(out, progress=_with_progress)
    except QualevalError as exc:
        _fail(exc)
    for report in result.summary.tasks.values():
        print_summary(report.summary)
    console.print(f"\nDemo report (simulated server): {result.root / 'report.html'}", highlight=False)
    console.print(f"Markdown: {result.root / 'report.md'} · records: {result.root / 'records.jsonl'}", highlight=False)


def print_summary(summary: TaskSummary) -> None:
    """The terminal view of one task's summary."""
    low, high = summary.interval
    responses = f" ({summary.records} responses)" if summary.records and summary.records != summary.n else ""
    table = Table("measure", "value", title=f"{summary.task}: {summary.n} items{responses}", title_justify="left")
    table.add_row(
        "accuracy (95% Wilson)", f"{summary.accuracy:.1%}  [{low:.1%}, {high:.1%}]  ({summary.correct:g}/{summary.n})"
    )
    if summary.accuracy_answered is not None:
        table.add_row("accuracy over answered items", f"{summary.accuracy_answered:.1%}")
    for name, cell in summary.measures.items():
        table.add_row(
            name.replace("_", "-level ", 1), f"{cell.accuracy:.1%}  [{cell.low:.1%}, {cell.high:.1%}]  (n={cell.n})"
        )
    if summary.accuracy_without_judge is not None:
        judged = summary.rungs.get("judge", 0)
        table.add_row(f"by the rules alone (a model judge accepted {judged})", f"{summary.accuracy_without_judge:.1%}")
    if summary.naive_accuracy is not None:
        table.add_row("naive extractor (last number/letter anywhere)", f"{summary.naive_accuracy:.1%}")
    table.add_row("statuses", ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())))
    table.add_row("extraction rungs", ", ".join(f"{k} {v}" for k, v in sorted(summary.rungs.items())))
    if summary.constraint_held:
        table.add_row("constraint", ", ".join(f"{k} {v}" for k, v in sorted(summary.constraint_held.items())))
    if summary.rescued:
        table.add_row("rescued from reasoning (not counted)", f"{summary.rescued} ({summary.rescue_correct} right)")
    for name, macro in summary.macro_accuracy.items():
        cells = summary.breakdowns[name]
        shown = ", ".join(f"{k} {c.accuracy:.0%}" for k, c in list(cells.items())[:8])
        more = f" (+{len(cells) - 8} more)" if len(cells) > 8 else ""
        table.add_row(f"by {name} (macro {macro:.1%})", shown + more)
    console.print(table)


@app.command("serve-sim", rich_help_panel="Reference server")
def serve_sim(
    flavor: Annotated[
        str, typer.Option("--flavor", "--flavour", help="Wire format to reproduce; --list-flavors shows them.")
    ] = "vllm",
    port: Annotated[int, typer.Option(help="TCP port; 0 picks a free one.")] = 8011,
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    answers: Annotated[
        Path | None, typer.Option(help="JSONL answer key: question and answer fields (GSM8K's `#### N` lines work).")
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option(help="Use a task's samples as the answer key (a built-in name or a .yaml path); repeatable."),
    ] = None,
    data: Annotated[
        list[str] | None,
        typer.Option(help="Local data for --task: PATH for every task, or TASK=PATH; repeatable."),
    ] = None,
    model: Annotated[str, typer.Option(help="Model id listed by /v1/models.")] = "sim",
    accuracy: Annotated[float, typer.Option(help="Probability of answering a keyed question right.")] = 0.8,
    reasoning_tokens: Annotated[int, typer.Option(help="Median reasoning length in tokens.")] = 120,
    empty_rate: Annotated[float, typer.Option(help="Probability of finishing with no answer.")] = 0.0,
    trap_rate: Annotated[float, typer.Option(help="Probability of a distractor number after the answer.")] = 0.3,
    seed: Annotated[int, typer.Option(help="Seed for every simulated choice.")] = 0,
    ttft_ms: Annotated[float, typer.Option(help="Base time to first token.")] = 40.0,
    prefill_ms_per_token: Annotated[float, typer.Option(help="Added to TTFT per prompt token.")] = 0.02,
    decode_ms: Annotated[float, typer.Option(help="Interval between tokens of a lone request.")] = 8.0,
    batch_slowdown: Annotated[
        float, typer.Option(help="Share by which each further request in flight stretches the decode interval.")
    ] = 0.03,
    jitter: Annotated[float, typer.Option(help="Relative latency jitter, drawn from the seed.")] = 0.1,
    burst: Annotated[bool, typer.Option(help="No delays at all (client benchmarks).")] = False,
    max_running: Annotated[int, typer.Option(help="Requests decoded at once; others queue (0: no limit).")] = 0,
    faults: Annotated[
        str,
        typer.Option(
            help="Random faults per request, e.g. '429=0.05,500=0.03,drop=0.01'. Names: 429 500 503 drop "
            "malformed slow-headers empty-choices stall html context."
        ),
    ] = "",
    retry_after: Annotated[float, typer.Option(help="Retry-After seconds sent with a 429.")] = 1.0,
    ignore_constraints: Annotated[
        bool,
        typer.Option(help="Ignore structured-output parameters, as some vLLM versions do with a reasoning parser."),
    ] = False,
    max_model_len: Annotated[int, typer.Option(help="Context length; longer requests get a 400.")] = 32768,
    accuracy_half_tokens: Annotated[
        int, typer.Option(help="Accuracy halves every this many prompt tokens (0: the same at every length).")
    ] = 0,
    spec_draft: Annotated[int, typer.Option(help="Speculative decoding: draft tokens per step (0: off).")] = 0,
    spec_accept: Annotated[float, typer.Option(help="Probability each draft token is accepted.")] = 0.6,
    kv_tokens: Annotated[int, typer.Option(help="KV-cache capacity in tokens (the usage gauge of /metrics).")] = 262144,
    log: Annotated[
        Path | None, typer.Option(help="Append one JSON line per request: what it received and sent, and when.")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(help="Require this bearer key (401 otherwise).", envvar="QUALEVAL_SIM_API_KEY")
    ] = None,
    list_flavors: Annotated[
        bool, typer.Option("--list-flavors", "--list-flavours", help="List the flavours and exit.")
    ] = False,
) -> None:
    """Run the reference server: a deterministic, SIMULATED OpenAI-compatible reasoning model."""
    from qualeval.sim import FLAVOURS, Behaviour, Latency, SimConfig, SimServer, parse_faults

    if list_flavors:
        table = Table("flavour", "what it reproduces")
        for f in FLAVOURS.values():
            table.add_row(f.name, f.description)
        console.print(table)
        return
    try:
        _check_rate("--accuracy", accuracy)
        _check_rate("--empty-rate", empty_rate)
        _check_rate("--trap-rate", trap_rate)
        _check_rate("--spec-accept", spec_accept)
        if min(accuracy_half_tokens, spec_draft, kv_tokens) < 0:
            raise InputError("--accuracy-half-tokens, --spec-draft and --kv-tokens must not be negative")
        if not 0 <= port <= 65535:
            raise InputError(f"--port must be between 0 and 65535, got {port}")
        if reasoning_tokens < 1:
            raise InputError(f"--reasoning-tokens must be at least 1, got {reasoning_tokens}")
        if min(ttft_ms, prefill_ms_per_token, decode_ms, batch_slowdown, jitter, retry_after) < 0:
            raise InputError("latency, jitter and retry-after values must not be negative")
        config = SimConfig(
            flavour=flavor,
            host=host,
            port=port,
            model=model,
            answers=answers,
            tasks=tuple(task or ()),
            task_data={
                n if sep else "*": Path(v if sep else n) for n, sep, v in (d.partition("=") for d in data or [])
            },
            behaviour=Behaviour(
                accuracy=accuracy,
                reasoning_tokens=reasoning_tokens,
                empty_rate=empty_rate,
                trap_rate=trap_rate,
                seed=seed,
            ),
            latency=Latency(
                ttft_ms=ttft_ms,
                prefill_ms_per_token=prefill_ms_per_token,
                decode_ms=decode_ms,
                batch_slowdown=batch_slowdown,
                jitter=jitter,
                burst=burst,
            ),
            max_running=max_running,
            faults=parse_faults(faults),
            retry_after=retry_after,
            ignore_constraints=ignore_constraints,
            max_model_len=max_model_len,
            accuracy_half_tokens=accuracy_half_tokens,
            spec_draft=spec_draft,
            spec_accept=spec_accept,
            kv_tokens=kv_tokens,
            log=log,
            api_key=api_key,
        )
        server = SimServer(config)
    except QualevalError as exc:
        _fail(exc)

    async def serve() -> None:
        try:
            bound = await server.start()
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        source = answers or ", ".join(task or ())
        keyed = f", answer key {source} ({len(server.key.entries)} items)" if server.key else ""
        print(f"qualeval reference server: SIMULATED model, flavour {flavor}{keyed}", flush=True)
        print(f"listening on http://{host}:{bound}/v1", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except QualevalError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        pass


# the help lists what a new user reaches for first
_ORDER = ["demo", "run", "compare", "merge", "rescore", "score", "probe", "serve-sim"]
app.registered_commands.sort(key=lambda c: _ORDER.index(c.name) if c.name in _ORDER else len(_ORDER))


def main() -> None:
    try:
        app()
    except QualevalError as exc:  # anything a command did not catch itself
        errors.print(f"error: {exc}", highlight=False, markup=False)
        sys.exit(3 if isinstance(exc, EndpointError) else 2)
