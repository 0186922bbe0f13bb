"""The commands that look before a run: `probe` (what an endpoint honours) and `tasks list|show`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from qualeval.cli import commands
from qualeval.cli.output import fail, take_options
from qualeval.cli.views import print_probe, print_sample, print_tasks
from qualeval.errors import InputError, QualevalError
from qualeval.run import ProbeOptions, cli_parameters, options_from

__all__ = ["register"]

_Sim = Annotated[
    str | None,
    typer.Option(help="Probe a reference server of this flavour, started in-process (instead of --base-url)."),
]
_Task = Annotated[str, typer.Argument(help="Built-in name (gsm8k, mmlu:stem), a .yaml path, or lm_eval:NAME.")]


def probe_cmd(
    output: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the JSON result here.")] = None,
    sim: _Sim = None,
    **flags: Any,
) -> None:
    """Report what an endpoint really honours: reasoning fields, streaming usage, structured outputs."""
    if output not in ("table", "json"):
        fail(InputError(f"--format must be 'table' or 'json', got '{output}'"))
    try:
        options = options_from(flags, ProbeOptions)
        result = commands.probe_endpoint(options, sim=sim)
        text = commands.write_json(json_path, result) if json_path is not None else result.model_dump_json(indent=2)
    except QualevalError as exc:
        fail(exc)
    if output == "json":
        sys.stdout.write(text + "\n")
    else:
        print_probe(result)


def tasks_list() -> None:
    """List the built-in tasks."""
    try:
        print_tasks()
    except QualevalError as exc:
        fail(exc)


def tasks_show(
    task: _Task,
    data: Annotated[
        Path | None,
        typer.Option(help="Read the documents from this local file or folder: PATH, or TASK=PATH as run takes it."),
    ] = None,
    index: Annotated[int, typer.Option(help="Which sample to render.")] = 0,
    output: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    **flags: Any,
) -> None:
    """Render one real sample: its id, messages, gold answer, choices and metadata."""
    if output not in ("text", "json"):
        fail(InputError(f"--format must be 'text' or 'json', got '{output}'"))
    if index < 0:
        fail(InputError(f"--index must not be negative, got {index}"))
    try:
        sample = commands.task_sample(task, data=data, index=index, num_fewshot=flags["num_fewshot"])
    except QualevalError as exc:
        fail(exc)
    if output == "json":
        sys.stdout.write(sample.model_dump_json(indent=2) + "\n")
    else:
        print_sample(sample)


def register(app: typer.Typer) -> None:
    # `probe` takes one option per ProbeOptions field (qualeval.run.options), after its own
    take_options(probe_cmd, cli_parameters(ProbeOptions))
    take_options(tasks_show, cli_parameters(names=("num_fewshot",)))
    app.command("probe", rich_help_panel="Inspect")(probe_cmd)
    tasks_app = typer.Typer(help="List built-in tasks and render their samples.", no_args_is_help=True)
    tasks_app.command("list")(tasks_list)
    tasks_app.command("show")(tasks_show)
    app.add_typer(tasks_app, name="tasks", rich_help_panel="Inspect")
