"""Where the commands write: results to stdout, notes and errors to stderr, and the exit codes.

Exit codes: 0 done; 1 a task below `--fail-under`; 2 bad input (a file, field or flag); 3 the endpoint could not be
reached or refused us, or a run ended with requests that failed at the endpoint (rerun with the same --out);
4 `qualeval gate` could not decide (qualeval.cli.board); 130 stopped by Ctrl-C (SIGINT), 143 by SIGTERM (128 + the
signal, as a shell reports it).
"""

from __future__ import annotations

import contextlib
import inspect
import signal
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from qualeval.errors import EndpointError, QualevalError, QualevalNote, QualevalWarning

__all__ = [
    "OneLineUsageErrors",
    "exit_code",
    "fail",
    "note",
    "shown_warnings",
    "stderr",
    "stdout",
    "stopped_by",
]


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


@contextlib.contextmanager
def shown_warnings() -> Iterator[None]:
    """Within the block, every qualeval warning is one `warning: ...` line on stderr (a QualevalNote one `note: ...`
    line), each time it is given: a run is owed its own warnings whatever an earlier one said. Other warnings are
    shown as Python shows them. Everything is restored when the block ends."""
    with warnings.catch_warnings():
        shown = warnings.showwarning
        warnings.simplefilter("always", QualevalWarning)

        def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if not issubclass(category, QualevalWarning):
                shown(message, category, *args, **kwargs)
                return
            note(f"{'note' if issubclass(category, QualevalNote) else 'warning'}: {message}")

        warnings.showwarning = show
        yield


def exit_code(exc: QualevalError) -> int:
    return 3 if isinstance(exc, EndpointError) else 2


def fail(exc: QualevalError) -> NoReturn:
    # the message is plain text: `pip install "qualeval[lm-eval]"` must not lose its brackets to rich markup
    stderr().print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(exit_code(exc))


def take_options(command: Callable[..., None], options: list[inspect.Parameter]) -> None:
    """A command's own parameters, then options made from a model's fields (qualeval.run.options.cli_parameters),
    which reach it in its `**flags`, each None when not given."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
    command.__signature__ = inspect.Signature([*own, *options])  # type: ignore[attr-defined]


@contextlib.contextmanager
def stopped_by() -> Iterator[list[signal.Signals]]:
    """SIGTERM (a scheduler's stop, `kill`, `docker stop`) stops a run as Ctrl-C does: it is handed to SIGINT's
    handler, which asyncio's runner turns into a cancelled run (its finished records saved, its files closed)
    and a KeyboardInterrupt. The list says which signal it was, for the message and the exit code."""
    got: list[signal.Signals] = []

    def on_term(signum: int, frame: Any) -> None:
        got.append(signal.SIGTERM)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, on_term)
    try:
        yield got
    finally:
        signal.signal(signal.SIGTERM, before)


def _is_click_error(exc: Exception) -> bool:
    # by name: typer >= 0.26 raises its own vendored copy of click's exceptions, older typer click's, and click
    # itself is not a dependency to import
    return any(cls.__name__ == "ClickException" for cls in type(exc).__mro__)


def usage_line(exc: Exception) -> str:
    """A usage error (unknown option, missing value, bad choice, wrong type) as one line: click's message, in the
    house style, with where the full list of flags is."""
    text = " ".join(str(getattr(exc, "format_message", exc.__str__)()).split()).rstrip(".")
    text = text[:1].lower() + text[1:]
    ctx = getattr(exc, "ctx", None)
    return f"{text} (see {ctx.command_path} --help)" if ctx is not None else text


@contextlib.contextmanager
def _one_line() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        # NoArgsIsHelpError is `qualeval` or `qualeval tasks` alone: typer shows the help for it
        if not _is_click_error(exc) or type(exc).__name__ == "NoArgsIsHelpError":
            raise
        note(f"error: {usage_line(exc)}")
        raise typer.Exit(int(getattr(exc, "exit_code", 2))) from None


class OneLineUsageErrors(TyperGroup):
    """The root command: a usage error anywhere below it is one `error:` line on stderr and exit 2, like every
    other bad input, instead of click's usage text and typer's five-line boxed panel. Help is not an error and
    is shown as typer draws it.

    Every subcommand (and the `tasks` group) is parsed and run inside the root's `invoke`, and the root's own
    options inside its `make_context`, so these two cover every command.
    """

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        with _one_line():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with _one_line(), shown_warnings():
            return super().invoke(ctx)
