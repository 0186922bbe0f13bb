"""The `qualeval` command. It only parses and prints: flags become the same config objects the Python API takes,
qualeval.cli.commands does the work, and qualeval.cli.views shows the result.

Exit codes: 0 done; 1 a task below `--fail-under`; 2 bad input (a file, field or flag); 3 the endpoint could not be
reached or refused us, or a run ended with requests that failed at the endpoint (rerun with the same --out);
4 `qualeval gate` could not tell (INCONCLUSIVE: too few items), 5 it found the runs unfit to gate (INVALID), where
0 is GO and 1 NO-GO.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from qualeval._version import __version__
from qualeval.cli import board, evaluate, inspection, serve_sim
from qualeval.cli.output import OneLineUsageErrors, exit_code, stderr, stdout
from qualeval.errors import QualevalError

app = typer.Typer(
    name="qualeval",
    cls=OneLineUsageErrors,  # a usage error is one `error:` line, exit 2, as the README promises
    help="Reasoning-aware quality and speed evaluation for OpenAI-compatible chat endpoints.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        stdout().print(f"qualeval {__version__}")
        raise typer.Exit(0)


inspection.register(app)
evaluate.register(app)
board.register(app)
serve_sim.register(app)

# the help lists what a new user reaches for first
_ORDER = ("demo", "run", "compare", "board", "gate", "merge", "rescore", "score", "probe", "serve-sim")
app.registered_commands.sort(key=lambda c: _ORDER.index(c.name) if c.name in _ORDER else len(_ORDER))


def main() -> None:
    try:
        app()
    except QualevalError as exc:  # anything a command did not catch itself
        stderr().print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(exit_code(exc))


__all__ = [
    "app",
    "main",
]
