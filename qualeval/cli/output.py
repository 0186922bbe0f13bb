"""Where the commands write: results to stdout, notes and errors to stderr, and the exit codes.

Exit codes: 0 done; 1 a task below `--fail-under`; 2 bad input (a file, field or flag); 3 the endpoint could not be
reached or refused us, or a run ended with requests that failed at the endpoint (rerun with the same --out).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from qualeval.errors import EndpointError, QualevalError

if TYPE_CHECKING:
    from qualeval.config import RunConfig
    from qualeval.records import RunSummary

__all__ = ["exit_code", "fail", "note", "stderr", "stdout", "with_progress"]


def stdout() -> Console:
    # made per use rather than held at module level: a console made once would keep its own state between
    # commands run in one process (tests invoke the app repeatedly)
    return Console()


def stderr() -> Console:
    return Console(stderr=True)


def note(text: str) -> None:
    """One plain line on stderr: paths and names are neither coloured as if they were numbers nor broken across
    lines (a wrapped path cannot be pasted back)."""
    stderr().print(text, highlight=False, markup=False, soft_wrap=True)


def exit_code(exc: QualevalError) -> int:
    return 3 if isinstance(exc, EndpointError) else 2


def fail(exc: QualevalError) -> NoReturn:
    # the message is plain text: `pip install "qualeval[lm-eval]"` must not lose its brackets to rich markup
    stderr().print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(exit_code(exc))


def with_progress(run_config: RunConfig, execute: Callable[..., Awaitable[RunSummary]]) -> RunSummary:
    """Run with a progress bar on stderr."""
    from qualeval.progress import progress_bar
    from qualeval.transport import run_async

    with progress_bar(stderr()) as bar:
        return run_async(execute(run_config, on_record=bar.on_record, on_start=bar.on_start))
