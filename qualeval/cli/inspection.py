"""The commands that look before a run: `probe` (what an endpoint honours) and `tasks list|show`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from qualeval.cli import commands
from qualeval.cli.output import fail
from qualeval.cli.views import print_probe, print_sample, print_tasks
from qualeval.errors import InputError, QualevalError

__all__ = ["register"]

_BaseUrl = Annotated[
    str | None,
    typer.Option(help="Endpoint, e.g. http://127.0.0.1:8011/v1 (default: OPENAI_BASE_URL, else OpenAI's)."),
]
_ProbeTokens = Annotated[
    int, typer.Option(help="Start token budget of each probe request (doubled for a sample that runs out).")
]
_Sim = Annotated[
    str | None,
    typer.Option(help="Probe a reference server of this flavour, started in-process (instead of --base-url)."),
]
_Task = Annotated[str, typer.Argument(help="Built-in name (gsm8k, mmlu:stem), a .yaml path, or lm_eval:NAME.")]


def probe_cmd(
    base_url: _BaseUrl = None,
    model: Annotated[str, typer.Option(help="Model name to send.")] = "sim",
    output: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the JSON result here.")] = None,
    max_tokens: _ProbeTokens = 2048,
    timeout: Annotated[float, typer.Option(help="Seconds per request attempt.")] = 120.0,
    max_retries: Annotated[int, typer.Option(help="Retries on 429, 5xx and connection errors.")] = 2,
    sim: _Sim = None,
) -> None:
    """Report what an endpoint really honours: reasoning fields, streaming usage, structured outputs."""
    if output not in ("table", "json"):
        fail(InputError(f"--format must be 'table' or 'json', got '{output}'"))
    try:
        if max_tokens < 1:
            raise InputError(f"--max-tokens must be at least 1, got {max_tokens}")
        result = commands.probe_endpoint(
            base_url, sim=sim, model=model, max_tokens=max_tokens, timeout=timeout, max_retries=max_retries
        )
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
    num_fewshot: Annotated[int | None, typer.Option(help="Few-shot examples (the task's default otherwise).")] = None,
    output: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Render one real sample: its id, messages, gold answer, choices and metadata."""
    if output not in ("text", "json"):
        fail(InputError(f"--format must be 'text' or 'json', got '{output}'"))
    if index < 0:
        fail(InputError(f"--index must not be negative, got {index}"))
    try:
        sample = commands.task_sample(task, data=data, index=index, num_fewshot=num_fewshot)
    except QualevalError as exc:
        fail(exc)
    if output == "json":
        sys.stdout.write(sample.model_dump_json(indent=2) + "\n")
    else:
        print_sample(sample)


def register(app: typer.Typer) -> None:
    app.command("probe", rich_help_panel="Inspect")(probe_cmd)
    tasks_app = typer.Typer(help="List built-in tasks and render their samples.", no_args_is_help=True)
    tasks_app.command("list")(tasks_list)
    tasks_app.command("show")(tasks_show)
    app.add_typer(tasks_app, name="tasks", rich_help_panel="Inspect")
