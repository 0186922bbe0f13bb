"""`qualeval board` (N runs of the same items on one page) and `qualeval gate` (a release gate for CI).

`gate` exits 0 GO, 1 NO-GO, 4 INCONCLUSIVE (too few items, or too much run-to-run spread, to tell), 5 INVALID (the
runs cannot be gated as they are: requests failed with no limit set, nothing answered by both, a figure one run
lacks, a TTFT served from a cache the other run did not have), 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from qualeval.cli.output import fail, note, stdout
from qualeval.errors import InputError, QualevalError

if TYPE_CHECKING:
    from qualeval.records import Board, GateResult

__all__ = ["register"]

_Rerun = Annotated[
    Path | None, typer.Option(help="A second run of the baseline's configuration: the run-to-run spread.")
]


def _write(out: Path, files: dict[str, str]) -> None:
    from qualeval.run import check_out

    check_out(out, ", ".join(files))  # never into a run directory, whose files these would stand beside or replace
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (out / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{out}: cannot write ({exc.strerror})") from None


def _labelled(runs: list[str]) -> tuple[list[Path], list[str | None]]:
    """`LABEL=RUN` or `RUN`, each: a folder that exists under the whole argument is that folder (`runs/c=4`),
    and so is one whose `=` comes after a slash."""
    paths: list[Path] = []
    labels: list[str | None] = []
    for arg in runs:
        label, sep, rest = arg.partition("=")
        if sep and label and not {"/", "\\"} & set(label) and not Path(arg).exists():
            if not rest:
                raise InputError(f"{arg}: no run directory after '{label}='")
            paths.append(Path(rest))
            labels.append(label)
        else:
            paths.append(Path(arg))
            labels.append(None)
    return paths, labels


def board_cmd(
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="[LABEL=]RUN...",
            help="Run directories of the same items, each optionally under a label of yours (fp16=runs/a); "
            "unlabelled runs are A, B, C... (the baseline first).",
        ),
    ],
    out: Annotated[Path, typer.Option(help="Folder for board.json, board.md and board.html.")],
    baseline: Annotated[
        str | None, typer.Option(help="The run the others are compared with, by folder or label (default: the first).")
    ] = None,
    rerun: _Rerun = None,
) -> None:
    """N runs of the same items side by side per task: accuracy, paired differences against the baseline
    (McNemar, Holm-corrected), which configs cannot be told from the best, tokens, truncation, latency,
    throughput, and the Pareto plots of accuracy against speed."""
    from qualeval.figures import board_runs
    from qualeval.report import board_html, board_markdown

    try:
        paths, labels = _labelled(runs)
        board = board_runs(paths, baseline=baseline, rerun=rerun, labels=labels)
        files = {"board.json": board.model_dump_json(indent=2) + "\n", "board.md": board_markdown(board)}
        _write(out, {**files, "board.html": board_html(board)})
    except QualevalError as exc:
        fail(exc)
    _print_board(board)
    note(f"wrote {out / 'board.json'}, board.md and board.html")


_TONES = {"better": "green", "worse": "red"}


def _print_board(board: Board) -> None:
    from qualeval.report import beyond_line, heads, key_rows, rows, tone

    shown = (1, 2, 3, 9)  # accuracy, vs baseline, tied with best, output tok/s: the reports have the rest
    console = stdout()
    # the key first and in full, one line a config (never a table's column, which a narrow terminal would cut):
    # the tables then name configs by label alone
    for label, settings, path in key_rows(board):
        role = " (baseline)" if label == board.baseline else ""
        console.print(f"{label}{role}: {settings} ({path})", highlight=False, soft_wrap=True, markup=False)
    if board.streams:  # which side of a --stream-parity run the tables pair, before them
        console.print(board.streams, highlight=False, soft_wrap=True, markup=False)
    for name, task in board.tasks.items():
        table = Table("config", *(heads(board)[i] for i in shown), title=name, title_justify="left")
        for (config, c), row in zip(task.configs.items(), rows(board, task), strict=True):
            versus = Text(row[2], style=_TONES.get(tone(board, c, "accuracy"), ""))
            table.add_row(config, row[1], versus, *(row[i] for i in shown[2:]))
        console.print(table)
        console.print(beyond_line(board, task), highlight=False, soft_wrap=True, markup=False)


def gate_cmd(
    candidate: Annotated[Path, typer.Argument(metavar="CANDIDATE", help="The run to gate.")],
    baseline: Annotated[Path, typer.Option(help="The run the candidate must not fall behind.")],
    policy: Annotated[Path, typer.Option(help="The policy (YAML): clauses per task or under `default:`.")],
    rerun: _Rerun = None,
    out: Annotated[Path | None, typer.Option(help="Folder for gate.json.")] = None,
) -> None:
    """A release gate: each policy clause GO, NO-GO, INCONCLUSIVE or INVALID, and the verdict. Exit 0 GO; 1 NO-GO;
    4 INCONCLUSIVE (too few items, or too much run-to-run spread, to tell); 5 INVALID (the runs cannot be gated as
    they are: requests failed and the policy sets no limit, nothing answered by both, a figure one run lacks, a
    TTFT served from a prefix cache the other run did not have); 2 bad input. Only 0 means ship."""
    from qualeval.figures import gate_runs

    try:
        result = gate_runs(baseline=baseline, candidate=candidate, policy_path=policy, rerun=rerun)
        if out is not None:
            _write(out, {"gate.json": result.model_dump_json(indent=2) + "\n"})
    except QualevalError as exc:
        fail(exc)
    _print_gate(result)
    raise typer.Exit(result.exit_code)


_MEANING = {
    "GO": "",
    "NO-GO": " (a clause missed its limit)",
    "INCONCLUSIVE": " (too few items, or too much run-to-run spread, to tell: not a GO)",
    "INVALID": " (the runs cannot be gated as they are: see the INVALID clauses)",
}


def _verdict_line(result: GateResult) -> str:
    """The verdict, what it means, and the tasks it does not cover: a GO never reads as covering a task that was
    not gated."""
    line = f"verdict: {result.verdict}{_MEANING[result.verdict]}"
    if result.not_gated:
        gated = ", ".join(dict.fromkeys(name.partition(" @ ")[0] for name in result.tasks))
        line += (
            f" for {gated} alone; not gated: {', '.join(result.not_gated)} (no clause of {result.policy} covers it, "
            "so this verdict says nothing of it)"
        )
    return line


def _print_gate(result: GateResult) -> None:
    console = stdout()
    for name, task in result.tasks.items():
        for clause in task.clauses:
            console.print(
                f"{name}: {clause.clause}: {clause.verdict}: {clause.detail}", highlight=False, soft_wrap=True
            )
        for line in task.notes:
            console.print(f"{name}: {line}", highlight=False, soft_wrap=True)
        if any(task.endpoint_errors):
            base, cand = task.endpoint_errors
            console.print(
                f"{name}: {task.unit} failed at the endpoint: baseline {base}, candidate {cand} (no answer of the "
                "model's, left out of every figure)",
                highlight=False,
                soft_wrap=True,
            )
        if task.unknown_questions:
            console.print(
                f"{name}: {task.unknown_questions} unknown questions (a reference server's refusals) left out of "
                "every figure",
                highlight=False,
                soft_wrap=True,
            )
    if result.streams:
        console.print(result.streams, highlight=False, soft_wrap=True)
    for name in result.not_gated:
        console.print(f"{name}: not gated: no clause of {result.policy} covers it", highlight=False, soft_wrap=True)
    console.print(_verdict_line(result), highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("board", rich_help_panel="Evaluate")(board_cmd)
    app.command("gate", rich_help_panel="Evaluate")(gate_cmd)
