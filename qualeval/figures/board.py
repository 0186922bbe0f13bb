"""`qualeval board`: N runs of the same items (serving configs, engines, quantizations, levels of one sweep) side
by side, per task. Accuracy with its Wilson interval; the paired difference against the baseline with McNemar's
exact test, Holm-corrected for the number of configs compared with it, and read against noise as compare and gate
read it (qualeval.figures.noise.read_noise) on that Holm-adjusted p; which configs cannot be told apart from the
best (McNemar against the best, Holm-corrected likewise); tokens, truncation, latency and throughput; and which
configs are Pareto-efficient in accuracy against throughput and against first-answer latency.

Speed ratios are over the requests both answered and read against noise as compare reads its own
(qualeval.figures.board_speed): a bootstrap interval that excludes 1 and, with a rerun of the baseline, a ratio
beyond how far the rerun moved on its own; a TTFT served from a prefix cache on one side only is not read, and
open-loop runs are compared on each request's output tok/s.
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from qualeval.errors import InputError
from qualeval.figures.board_speed import output_rate, speed_ratios
from qualeval.figures.gate_clauses import open_loop
from qualeval.figures.noise import ALPHA, mcnemar_exact, read_noise, run_noise
from qualeval.figures.rundir import check_rerun, refuse_same, run_settings
from qualeval.figures.runset import Group, Loaded, PairCounts, figures, grouper, groups, load_runs, paired
from qualeval.figures.toolfigures import moved_on_tools, run_tools, tool_paired
from qualeval.records import Board, BoardRun, BoardTask, ConfigFigures, Noise, ToolPaired

__all__ = ["board_runs", "holm"]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest of m p-values times (m - i + 1), kept monotone, at most 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


_LABEL = re.compile(r"[\w.+-]{1,20}")


def _letters() -> Iterator[str]:
    """A, B, … Z, then AA, AB, …: the labels of runs the user did not name."""
    for width in itertools.count(1):
        for letters in itertools.product(string.ascii_uppercase, repeat=width):
            yield "".join(letters)


def _labels(given: Sequence[str | None]) -> list[str]:
    """The user's label where one was given, else the next letter no label took; a label that is not a short
    word, or given twice, is refused."""
    for label in given:
        if label is not None and not (isinstance(label, str) and _LABEL.fullmatch(label)):
            raise InputError(f"label {label!r}: a label is 1 to 20 letters, digits or _ . + - (e.g. fp16, q8_0)")
    named = [label for label in given if label is not None]
    twice = next((label for label in named if named.count(label) > 1), None)
    if twice is not None:
        raise InputError(f"label {twice!r} is given to two runs: each config needs its own")
    free = (letters for letters in _letters() if letters not in named)
    return [label if label is not None else next(free) for label in given]


def _runs(loaded: Sequence[Loaded], labels: Sequence[str]) -> list[BoardRun]:
    """Each run under its label, with the settings it differs from the others in (a key names them once, so the
    figures need not repeat them)."""
    every = [run_settings(run.manifest) for run in loaded]
    keys = list(dict.fromkeys(k for s in every for k in s))
    differ = [k for k in keys if len({repr(s.get(k)) for s in every}) > 1]
    return [
        BoardRun(
            name=label, path=str(run.path), settings={k: s.get(k) for k in differ}, simulated=run.manifest.simulated
        )
        for label, s, run in zip(labels, every, loaded, strict=True)
    ]


def _efficient(points: dict[str, tuple[float | None, float | None]]) -> dict[str, bool | None]:
    """Not dominated: no other config at least as good on both axes (higher is better) and better on one."""
    known = {n: (a, b) for n, (a, b) in points.items() if a is not None and b is not None}
    out: dict[str, bool | None] = dict.fromkeys(points)
    for name, (a, b) in known.items():
        out[name] = not any(x >= a and y >= b and (x > a or y > b) for other, (x, y) in known.items() if other != name)
    return out


def _versus(base: Loaded, others: dict[str, Loaded], keys: list[Any]) -> dict[str, tuple[float, float]]:
    """Per other config: McNemar's exact p against `base` on the items both answered, and Holm-adjusted; a config
    with no such item has no test (and is not counted in the correction)."""
    counts = {name: paired(base, run, keys) for name, run in others.items()}
    raw = {name: mcnemar_exact(c.down, c.up) for name, c in counts.items() if c.pairs}
    return dict(zip(raw, zip(raw.values(), holm(list(raw.values())), strict=True), strict=True))


def _accuracy(g: Group) -> float | None:
    return g.accuracy.accuracy if g.accuracy is not None else None


def _pareto(stats: dict[str, Group], per_request: bool) -> tuple[dict[str, bool | None], dict[str, bool | None]]:
    """Efficient in (accuracy, output tok/s), and in (accuracy, first-answer p50) with the latency negated."""
    first = {n: g.speed.first_answer.p50 if g.speed.first_answer else None for n, g in stats.items()}
    through = _efficient({n: (_accuracy(g), output_rate(g, per_request)) for n, g in stats.items()})
    quick = _efficient({n: (_accuracy(g), -v if (v := first[n]) is not None else None) for n, g in stats.items()})
    return through, quick


def _best(stats: dict[str, Group], counted: dict[str, PairCounts], baseline: str) -> str | None:
    """The config most ahead of the baseline on the items both answered (the baseline itself at +0): accuracies
    over different item sets (one config's endpoint errors left out) are not compared. A config that answered
    nothing is none; ties go to the earlier config, the baseline first."""
    answered = [n for n, g in stats.items() if g.answered and (n == baseline or counted[n].pairs)]
    return max(answered, key=lambda n: counted[n].difference if n != baseline else 0.0, default=None)


def _noise_reading(
    counts: PairCounts, p_adjusted: float | None, compared: int, noise: Noise | None, alpha: float
) -> dict[str, Any]:
    """A config's difference from the baseline read as compare and gate read it, on the Holm-adjusted p (with one
    config compared, the raw p, and so compare's very words)."""
    if p_adjusted is None or not counts.pairs:
        return {}
    test = "Holm-adjusted McNemar p" if compared > 1 else "McNemar p"
    moved = abs(noise.difference) if noise is not None else None
    reading = read_noise(counts.pairs, counts.down, counts.up, moved=moved, p_value=p_adjusted, test=test, alpha=alpha)
    return {"within_noise": reading.within, "noise_reading": reading.said}


def _share(group: Group | None) -> float | None:
    return group.speed.prompt_cache.share if group is not None and group.speed.prompt_cache else None


def _tool_versus(
    runs: dict[str, Loaded], baseline: str, keys: list[Any], again: Loaded | None, alpha: float
) -> dict[str, ToolPaired]:
    """Per config but the baseline: its per-item tool verdicts against the baseline's, McNemar Holm-corrected over
    the configs with a tool-call pair, read against noise as the accuracy is."""
    base = runs[baseline]
    pairs = {n: [(base.records[k], r.records[k]) for k in keys] for n, r in runs.items() if n != baseline}
    raw = {n: found.p_value for n, p in pairs.items() if (found := tool_paired(p)) and found.p_value is not None}
    adjusted = dict(zip(raw, holm(list(raw.values())), strict=True))
    moved = moved_on_tools([(base.records[k], again.records[k]) for k in keys]) if again is not None else None
    test = "Holm-adjusted McNemar p" if len(raw) > 1 else "McNemar p"
    out = {n: tool_paired(pairs[n], moved=moved, p_adjusted=p, test=test, alpha=alpha) for n, p in adjusted.items()}
    return {n: found for n, found in out.items() if found is not None}


def _task(
    group: str,
    keys: list[Any],
    runs: dict[str, Loaded],
    baseline: str,
    again: Loaded | None,
    alpha: float,
    noise: Noise | None,
    per_request: bool,
) -> BoardTask:
    stats = {name: figures(run, keys) for name, run in runs.items()}
    scored = any(g.scored for g in stats.values())
    vs_base = _versus(runs[baseline], {n: r for n, r in runs.items() if n != baseline}, keys)
    counted = {name: paired(runs[baseline], run, keys) for name, run in runs.items()}
    best = _best(stats, counted, baseline) if scored else None
    vs_best = _versus(runs[best], {n: r for n, r in runs.items() if n != best}, keys) if best else {}
    rerun = figures(again, keys) if again is not None else None
    through, quick = _pareto(stats, per_request) if scored else ({}, {})
    base_share, rerun_share = _share(stats[baseline]), _share(rerun)
    speeds = {
        name: speed_ratios(
            runs[baseline], run, again, keys, (base_share, _share(stats[name]), rerun_share), per_request=per_request
        )
        for name, run in runs.items()
        if name != baseline
    }
    tools_vs = _tool_versus(runs, baseline, keys, again, alpha)
    configs = {}
    for name, g in stats.items():
        counts = counted[name]
        p, p_adjusted = vs_base.get(name, (None, None))
        tied = name == best or (vs_best[name][1] >= alpha if name in vs_best else None)
        configs[name] = ConfigFigures(
            answered=g.answered,
            endpoint_errors=g.endpoint_errors,
            unknown_questions=g.unknown_questions,
            accuracy=g.accuracy,
            pairs=counts.pairs,
            difference=counts.difference if scored and counts.pairs else None,
            p_value=p if scored else None,
            p_adjusted=p_adjusted if scored else None,
            tied_with_best=tied if best else None,
            reasoning_tokens=g.speed.reasoning_tokens.mean if g.speed.reasoning_tokens else None,
            answer_tokens=g.speed.answer_tokens.mean if g.speed.answer_tokens else None,
            truncated=g.truncated,
            ttft=g.speed.ttft,
            first_answer=g.speed.first_answer,
            latency=g.speed.latency,
            output_tps=output_rate(g, per_request),
            spec_acceptance=g.spec_acceptance,
            correct_per_minute=g.correct_per_minute,
            speed=speeds.get(name, {}),
            pareto_throughput=through.get(name),
            pareto_first_answer=quick.get(name),
            tools=run_tools([runs[name].records[k] for k in keys], runs[name].parity, group),
            tool_paired=tools_vs.get(name),
            **(_noise_reading(counts, p_adjusted, len(vs_base), noise, alpha) if scored else {}),
        )
    return BoardTask(scored=scored, best=best, configs=configs, noise=noise)


def _refuse_copies(loaded: Sequence[Loaded], again: Loaded | None) -> None:
    """A run set beside itself (or a copy of it) would tie with itself by construction; a rerun of another
    configuration, or one of the configs again, would pass its own differences off as the baseline's noise."""
    for i, one in enumerate(loaded):
        for two in loaded[i + 1 :]:
            refuse_same(one.path, one, two.path, two, "each config")
    if again is not None:
        for run in loaded:
            refuse_same(run.path, run, again.path, again, "the rerun of the baseline")
        check_rerun(loaded[0], again, again.path, of=f"the baseline {loaded[0].path}")


def _ordered(
    runs: Sequence[Path | str], labels: Sequence[str | None] | None, baseline: Path | str | None
) -> tuple[list[Path], list[str | None]]:
    """The runs, the baseline first, with the label the user gave each (None: none given). A run given twice is
    refused (it would tie with itself), and so is a baseline that is none of the runs, by folder or label."""
    if isinstance(labels, str) or (labels is not None and not isinstance(labels, Sequence)):
        raise InputError(f"labels {labels!r}: give a list of labels, one a run (None for a letter)")
    if labels is not None and len(labels) != len(runs):
        raise InputError(f"{len(labels)} labels for {len(runs)} runs: give one a run (None for a letter)")
    given: list[str | None] = list(labels) if labels is not None else [None] * len(runs)
    paths = [Path(run) for run in runs]
    seen: dict[Path, int] = {}
    for i, path in enumerate(paths):
        first = seen.setdefault(path.resolve(), i)
        if first != i:
            twice = paths[first]
            also = f" (also as {twice})" if str(twice) != str(path) else ""
            raise InputError(f"{path}: given twice{also}: each config is set beside the others once")
    if baseline is None:
        return paths, given
    where = [i for i, (p, label) in enumerate(zip(paths, given, strict=True)) if baseline == label]
    where = where or [i for i, p in enumerate(paths) if p.resolve() == Path(baseline).resolve()]
    if not where:
        named = ", ".join(f"{label}={p}" if label else str(p) for p, label in zip(paths, given, strict=True))
        raise InputError(f"baseline {baseline}: not one of the runs ({named}): name one of them, by folder or label")
    i = where[0]
    return [paths[i], *paths[:i], *paths[i + 1 :]], [given[i], *given[:i], *given[i + 1 :]]


def _check_alpha(alpha: object) -> float:
    """The significance level: a number strictly between 0 and 1 (0 would find nothing, 1 everything)."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InputError(f"alpha {alpha!r}: a significance level is a number between 0 and 1 (e.g. 0.05)")
    return float(alpha)


def board_runs(
    runs: Sequence[Path | str],
    *,
    baseline: Path | str | None = None,
    rerun: Path | str | None = None,
    alpha: float = ALPHA,
    labels: Sequence[str | None] | None = None,
) -> Board:
    """The board of `runs`; `baseline` one of them, by folder or label (default: the first); `rerun` a second run
    of the baseline's configuration. `labels`, one a run: the name each config goes by on the board (None, or no
    `labels`: A, B, C… in the board's order, the baseline first, skipping the labels given). `alpha`: the
    significance level, between 0 and 1."""
    if isinstance(runs, str | Path):  # one folder, whose name would otherwise be read letter by letter
        raise InputError(f"a board takes a list of run directories, not one ({runs})")
    alpha = _check_alpha(alpha)
    rerun = Path(rerun) if rerun is not None else None
    paths, given = _ordered(runs, labels, baseline)
    if len(paths) < 2:
        raise InputError("a board needs at least two runs (the baseline and one to set beside it)")
    named_as = _labels(given)
    loaded = load_runs([*paths, *([rerun] if rerun is not None else [])])
    again = loaded[len(paths)] if rerun is not None else None
    loaded = loaded[: len(paths)]
    _refuse_copies(loaded, again)
    named = _runs(loaded, named_as)
    by_name = {r.name: run for r, run in zip(named, loaded, strict=True)}
    noise = run_noise(loaded[0].records, again.records, grouper(loaded[0])) if again is not None else {}
    per_request = open_loop(*(run.manifest for run in loaded))
    tasks = {}
    for group, keys in groups(loaded[0]).items():
        tasks[group] = _task(group, keys, by_name, named[0].name, again, alpha, noise.get(group), per_request)
    return Board(
        baseline=named[0].name,
        rerun=str(rerun) if rerun is not None else None,
        alpha=alpha,
        correction="holm",
        runs=named,
        tasks=tasks,
        per_request=per_request,
        streams=loaded[0].streams,
    )
