"""The commands that evaluate: `run` (its flags made from RunConfig), `score`, `compare`, `rescore`, `merge`, `demo`."""

from __future__ import annotations

import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from qualeval.cli import commands
from qualeval.cli.output import fail, note, stdout, stopped_by, take_options
from qualeval.cli.views import print_below, print_comparison, print_run, print_summary, print_task_scores
from qualeval.errors import InputError, QualevalError
from qualeval.records import ENDPOINT_FAILED, Record
from qualeval.report import context_claimed, context_refused
from qualeval.run import cli_parameters, given_or_default

__all__ = ["register"]

# the run options `score` takes (qualeval.run.options), with the help of one that means something else offline
SCORE_OPTIONS = (
    "rescue",
    "thinking",
    "thinking_opened",
    "reasoning_format",
    "judge_base_url",
    "judge_model",
    "allow_code_execution",
)
_SCORE_HELP = {"thinking": "Whether the responses were made with thinking on or off."}
RESCORE_OPTIONS = ("rescue", "allow_code_execution")
_RESCORE_HELP = {"rescue": "Override the run's --rescue setting."}
_ScoreData = Annotated[
    Path | None,
    typer.Option(
        help="Local data for the task: PATH, or TASK=PATH as run takes it (not needed when every line has a target)."
    ),
]
_ScoreFormat = Annotated[
    str,
    typer.Option(
        "--format",
        help="auto (default: by the .csv suffix and the first line's shape), qualeval (JSONL {id, content, "
        "reasoning?, finish_reason?, target?, choices?}; the text may also be under output, response, completion, "
        "generated_text, generation or text, the id under custom_id, sample_id, doc_id, idx, question_id, task_id or "
        "key), "
        "csv (the same fields as columns), lm-eval (samples_*.jsonl) or openai-batch (a Batch's output file).",
    ),
]
_TextField = Annotated[str | None, typer.Option(help="The field (or CSV column) that holds the model's response.")]
_IdField = Annotated[str | None, typer.Option(help="The field (or CSV column) that holds each item's id.")]
_MatchBy = Annotated[
    str,
    typer.Option(
        help="id: an id must be the task's own (gsm8k/test/6, 6, HumanEval/6) or carry the sample's question; "
        "number: an id of another tool's making that ends in a number (request-6) is that sample's."
    ),
]
_IdMap = Annotated[
    Path | None,
    typer.Option(help='A JSON object from the file\'s ids to the task\'s: {"request-1": "gsm8k/test/0", ...}.'),
]
_CompareOut = Annotated[
    Path | None, typer.Option(help="Folder for compare.json and compare.html (default: RUN_B/compare).")
]
_Profile = Annotated[
    Path | None,
    typer.Option(
        help="A run profile: a YAML file, or a shipped one by name (qwen3-sampling, deepseek-r1-sampling, smoke...); "
        "flags override it.",
        rich_help_panel="Run",
    ),
]


def score_cmd(
    task: Annotated[str, typer.Option(help="Task: built-in name, .yaml path, or lm_eval:NAME.")],
    responses: Annotated[Path, typer.Option(help="The responses: JSONL or CSV (see --format).")],
    out: Annotated[Path, typer.Option(help="Folder for items.jsonl, summary.json and the reports.")],
    data: _ScoreData = None,
    fmt: _ScoreFormat = "auto",
    text_field: _TextField = None,
    id_field: _IdField = None,
    match_by: _MatchBy = "id",
    id_map: _IdMap = None,
    **flags: Any,
) -> None:
    """Score responses from elsewhere with qualeval's extractor, offline: no endpoint, no requests."""
    from qualeval.run import FORMATS, ReadOptions

    given = given_or_default(flags)
    if fmt not in FORMATS:
        fail(InputError(f"--format must be one of {', '.join(FORMATS)}, got '{fmt}'"))
    if match_by not in ("id", "number"):
        fail(InputError(f"--match-by must be 'id' or 'number', got '{match_by}'"))
    if bool(given["judge_base_url"]) != bool(given["judge_model"]):
        fail(InputError("--judge-base-url and --judge-model go together"))
    read = ReadOptions(fmt, text_field, id_field, match_by, id_map)  # type: ignore[arg-type]
    try:
        summary = commands.score_and_write(
            task,
            responses,
            out,
            read=read,
            reasoning_formats=given["reasoning_format"],
            thinking=given["thinking"],
            thinking_opened=flags["thinking_opened"],  # None: inferred from the file's lines
            allow_code=given["allow_code_execution"],
            data=data,
            rescue=given["rescue"],
            judge_base_url=given["judge_base_url"],
            judge_model=given["judge_model"],
            note=lambda text: note(f"note: {text}"),
        )
    except QualevalError as exc:
        fail(exc)
    print_summary(summary)
    note(f"wrote items.jsonl, summary.json, report.md and report.html in {out}")


def compare_cmd(
    runs: Annotated[
        list[Path],
        typer.Argument(
            metavar="A [A2] B",
            help="A B: the baseline run and the run to compare with it; A A2 B: with A2 a second run of A's "
            "configuration and items (its seeds, server address and folder aside), to measure the run-to-run noise.",
        ),
    ],
    out: _CompareOut = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    show: Annotated[int, typer.Option(help="Flipped items listed per task in the terminal.")] = 10,
) -> None:
    """Pair two runs item by item: accuracy difference with a paired bootstrap interval and McNemar's exact
    test, the smallest difference the items can detect, latency and throughput ratios, and the items that
    flipped; given a rerun of A, the run-to-run noise, and whether B - A is within it."""
    if len(runs) not in (2, 3):
        raise typer.BadParameter(f"A B, or A A2 B (A2 a rerun of A's configuration); got {len(runs)} runs")
    if seed < 0:
        fail(InputError(f"--seed must be 0 or more, got {seed}"))
    if show < 0:
        fail(InputError(f"--show must be 0 or more (flipped items listed per task), got {show}"))
    try:
        run_a, again, run_b = (runs[0], None, runs[1]) if len(runs) == 2 else runs
        out = out or (run_b.parent if run_b.is_file() else run_b) / "compare"  # B may be RUN/records.jsonl
        result = commands.compare_and_write(run_a, run_b, out, seed=seed, again=again)
    except QualevalError as exc:
        fail(exc)
    print_comparison(result, show)
    note(f"wrote {out / 'compare.json'} and {out / 'compare.html'}")


def run_cmd(config: _Profile = None, **flags: Any) -> None:
    """Evaluate a served model: every request's answer, score and timing, in one run directory."""
    from qualeval.api import run
    from qualeval.wire import run_async

    with stopped_by() as signals:
        try:
            result = run_async(run(config, flags, progress=True))
        except QualevalError as exc:
            fail(exc)
        except KeyboardInterrupt:
            where = flags.get("out") or "the run directory"
            how = "stopped by SIGTERM" if signals else "interrupted"
            note(f"{how}: every finished request is saved in {where}; rerun the same command to resume")
            raise typer.Exit(128 + (signals[0] if signals else signal.SIGINT)) from None
    print_run(result.summary)
    note(f"run directory: {result.root}  (report: {result.root / 'report.html'})")
    errors = result.endpoint_errors
    if result.failed_under and result.fail_under is not None:
        print_below(result.summary, result.fail_under, result.failed_under, errors)
    if errors:
        too_long = _too_long(result.records)
        for length, (count, reason) in too_long.items():
            where = f"at --context-length {length}" if length else "with prompts"
            note(
                f"error: {count} requests {where} are longer than the server's context ({reason}); they are not in "
                f"the accuracy and would fail again on a rerun: use a shorter length, or serve a longer context"
            )
        claimed = _claimed(result.records)
        if claimed:
            count, reason = claimed
            note(
                f"error: {count} requests the server refused as longer than its context ({reason}), though its own "
                "figures put them within it: that is the server's claim, not the prompts' length; they are not in "
                f"the accuracy. Rerun with the same --out ({result.root}) to send them again"
            )
        again = errors - sum(count for count, _ in too_long.values()) - (claimed[0] if claimed else 0)
        if again:
            note(
                f"error: {again} requests ended in an endpoint error and have no answer; they are not in the "
                f"accuracy. Rerun with the same --out ({result.root}) to send them again"
            )
        raise typer.Exit(3)
    if result.failed_under:
        raise typer.Exit(1)


def _too_long(records: Iterable[Record]) -> dict[int, tuple[int, str]]:
    """Per target context length (0: a prompt of the task's or a workload's own length), the requests the server
    refused as longer than its context, and its reason: sending them again would only fail again."""
    out: dict[int, tuple[int, str]] = {}
    for r in records:
        if r.status in ENDPOINT_FAILED and r.error and context_refused(r.error):
            length = (r.shape.context_tokens or 0) if r.shape else 0
            count, reason = out.get(length, (0, r.error))
            out[length] = (count + 1, reason)
    return dict(sorted(out.items()))


def _claimed(records: Iterable[Record]) -> tuple[int, str] | None:
    """The requests refused as longer than the server's context whose own figures put them within it (a server
    that says so under load, say), and the first reason: a rerun may well have them answered."""
    refused = [r.error for r in records if r.status in ENDPOINT_FAILED and r.error and context_claimed(r.error)]
    return (len(refused), refused[0]) if refused else None


def rescore_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by qualeval run.")], **flags: Any
) -> None:
    """Re-extract and re-score every record with the current extractor and task files; no request is sent.
    Writes rescore/summary.json and rescore/report.{md,html} beside the originals."""
    allow = bool(flags["allow_code_execution"])  # this rescore's own permission, never the run's
    try:
        summary, store = commands.rescore_and_report(
            run_dir, rescue=flags["rescue"], allow_code=allow, note=lambda text: note(f"note: {text}")
        )
    except QualevalError as exc:
        fail(exc)
    print_task_scores(summary)  # as the run printed them: per level where the levels asked differently
    note(f"rescored into {store.root}")


def merge_cmd(
    runs: Annotated[list[Path], typer.Argument(help="The shard directories (--shard 0/N … N-1/N) of one run.")],
    out: Annotated[Path, typer.Option(help="The merged run directory.")],
) -> None:
    """Join the shards of one run (`qualeval run --shard K/N`) into one run directory: records, time series,
    summary and reports, as if it had run in one process."""
    try:
        summary, store = commands.merge_and_report(runs, out)
    except QualevalError as exc:
        fail(exc)
    print_task_scores(summary)
    note(f"merged {len(runs)} shards into {store.root}")


def demo_cmd(
    out: Annotated[Path, typer.Option(help="Where to write the demo run.")] = Path("runs/demo"),
) -> None:
    """Start the reference server (SIMULATED vLLM with a reasoning model's traps) and evaluate it end to end."""
    from qualeval.cli.demo import run_demo

    try:
        result = run_demo(out, progress=True)
    except QualevalError as exc:
        fail(exc)
    for report in result.summary.tasks.values():
        print_summary(report.summary)
    console = stdout()
    console.print(f"\nDemo report (simulated server): {result.root / 'report.html'}", highlight=False, soft_wrap=True)
    console.print(
        f"Markdown: {result.root / 'report.md'} · records: {result.root / 'records.jsonl'}",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    # `run` takes one option per RunConfig field (qualeval.run.options), after the profile that they override
    take_options(run_cmd, cli_parameters())
    take_options(score_cmd, cli_parameters(names=SCORE_OPTIONS, helps=_SCORE_HELP))
    take_options(rescore_cmd, cli_parameters(names=RESCORE_OPTIONS, helps=_RESCORE_HELP))
    app.command("score", rich_help_panel="Evaluate")(score_cmd)
    app.command("compare", rich_help_panel="Evaluate")(compare_cmd)
    app.command("run", rich_help_panel="Evaluate")(run_cmd)
    app.command("rescore", rich_help_panel="Evaluate")(rescore_cmd)
    app.command("merge", rich_help_panel="Evaluate")(merge_cmd)
    app.command("demo", rich_help_panel="Evaluate")(demo_cmd)
