"""Compare two runs item by item: does a serving change keep quality while it changes speed?

Records pair by task, sample id and repeat; when both runs swept the same load levels, each task and level is
compared on its own (one item at several levels is not independent evidence). Accuracy:
the difference B - A with a paired bootstrap interval (items resampled together) and McNemar's exact test on the
discordant pairs, over the items both runs got a model's answer for (a request either endpoint failed, or a
question a reference server did not know, is counted apart), read against noise as board and gate read it
(qualeval.figures.noise.read_noise).
Speed: ratios B / A of paired means with bootstrap intervals, each read against noise as board reads its own
(qualeval.figures.noise.read_speed: the interval excludes 1 and, with a rerun of A, the ratio is beyond the
rerun's spread), and the aggregate throughput ratio of the paired items (each side's output tokens over its time
from the first sent to the last finished), never of items one run alone holds, nor of open-loop runs, where it is
the arrival rate's.
Tasks and load levels come in numeric order (c=1, c=4, c=16), and beside the figures stand the settings the two
runs differ in and the warm-up pairs (compared on accuracy, as each run scores them, but on no speed figure), so
that a reader knows what the comparison is of.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from qualeval.errors import InputError
from qualeval.figures.board_speed import paired_ratio
from qualeval.figures.compare_server import server_notes, side_by_side
from qualeval.figures.episodecompare import with_episodes
from qualeval.figures.gate_clauses import open_loop
from qualeval.figures.noise import mcnemar_exact, minimum_detectable, read_noise, read_speed, run_noise, spread_factor
from qualeval.figures.repeats import cached_share, cached_side, identical_pairs, said_of
from qualeval.figures.rundir import (
    PairKey,
    RunDir,
    check_rerun,
    read_run,
    refuse_repeats,
    refuse_same,
    settings_apart,
)
from qualeval.figures.speeds import speed, untimed
from qualeval.figures.streams import match_streams
from qualeval.figures.toolfigures import tool_sides
from qualeval.records import (
    NOT_THE_MODELS,
    Comparison,
    Noise,
    Ratio,
    Record,
    Speed,
    TaskComparison,
    Timed,
)

__all__ = ["compare_runs", "side_by_side"]

BOOTSTRAP = 2000

Pair = tuple[Record, Record]


def _refuse_other_sweep(*runs: tuple[Path, RunDir]) -> None:
    """Runs of one level each pair by item whatever their labels (c=4 beside c=8); a sweep beside a run of other
    levels does not: which of its levels would stand for it is not compare's to pick."""
    swept = next(((root, run) for root, run in runs if len(run.levels) > 1), None)
    if swept is not None:
        other = next((root, run) for root, run in runs if run is not swept[1])
        raise InputError(
            f"{swept[0]}: swept the levels {', '.join(sorted(swept[1].levels))}, and {other[0]} ran "
            f"{', '.join(sorted(other[1].levels)) or 'one'}: compare runs of one level each, or the same sweeps"
        )


def _rekey(records: dict[PairKey, Record]) -> dict[PairKey, Record]:
    """Drop the level from the key: runs of one level each, whose labels differ."""
    out: dict[PairKey, Record] = {}
    for key, record in records.items():
        out.setdefault(key[:3], record)
    return out


def _bootstrap(pairs: list[tuple[float, float]], statistic: str, rng: Any) -> tuple[float, float]:
    import numpy as np

    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    index = rng.integers(0, len(pairs), size=(BOOTSTRAP, len(pairs)))
    if statistic == "difference":
        values = b[index].mean(axis=1) - a[index].mean(axis=1)
    else:
        denominator = a[index].mean(axis=1)
        values = b[index].mean(axis=1) / np.where(denominator == 0, np.nan, denominator)
    low, high = np.nanpercentile(values, [2.5, 97.5])
    return float(low), float(high)


_FIGURES = {
    "ttft": "ttft",
    "first_answer": "first_content",
    "latency": "end",
    "tpot": "tpot",
    "output_rate": "output_rate",
}
"""Each speed figure compared, by the attribute of a record's Timed view that holds it."""


def _value(timed: Timed, name: str) -> float | None:
    return getattr(timed, _FIGURES[name])


def _natural(name: str) -> tuple[float | str, ...]:
    """A sort key that reads the numbers in a name as numbers: c=1, c=4, c=16; rate=0.5, rate=2 (a string sort
    puts c=16 before c=4). re.split with a group alternates text and numbers, so like compares with like."""
    return tuple(float(part) if i % 2 else part for i, part in enumerate(re.split(r"(\d+(?:\.\d+)?)", name)))


def _group(key: PairKey, levels: set[str]) -> str:
    """The name a pair is compared under: its task, at its load level when the runs swept several."""
    level = key[3] if len(key) > 3 else ""
    return f"{key[0]} @ {level}" if level and len(levels) > 1 else key[0]


_Grouped = tuple[dict[str, list[Pair]], dict[str, tuple[int, int]], dict[str, int]]


def _grouped(a: RunDir, b: RunDir, shared: list[PairKey]) -> _Grouped:
    """Pairs by task, and by load level when the runs swept several: the same item at several levels is not
    independent evidence. A pair of warm-up requests is in (each run scores its warm-up, so leaving it out would
    give accuracies that are not the runs'), counted, and kept out of the speed ratios; a pair where either
    request got no answer of the model's (the endpoint failed it, or a reference server did not know the
    question) is left out, counted per side."""
    by_task: dict[str, list[Pair]] = defaultdict(list)
    failed: dict[str, tuple[int, int]] = {}
    warm: dict[str, int] = defaultdict(int)
    for key in shared:
        ra, rb = a.records[key], b.records[key]
        name = _group(key, a.levels)
        if ra.warmup and rb.warmup:
            warm[name] += 1
        fa, fb = ra.status in NOT_THE_MODELS, rb.status in NOT_THE_MODELS
        if fa or fb:
            ea, eb = failed.get(name, (0, 0))
            failed[name] = (ea + fa, eb + fb)
        else:
            by_task[name].append((ra, rb))
    return by_task, failed, dict(warm)


def _values(pairs: list[Pair], name: str) -> list[tuple[float, float]]:
    """Each pair's values of one speed figure, where both have it (warm-up pairs left out)."""
    timed = ((a.timed(), b.timed()) for a, b in pairs if not a.warmup and not b.warmup)
    both = ((_value(ta, name), _value(tb, name)) for ta, tb in timed)
    return [(va, vb) for va, vb in both if va is not None and vb is not None]


def _ratios(pairs: list[Pair], rng: Any) -> tuple[dict[str, Ratio], dict[str, str]]:
    """B / A of the paired means of each speed figure, warm-up requests left out; and, per figure with no ratio
    although both runs have it, why. A mean of 0 is a figure that was not measured (tokens that arrived in one
    chunk have no time between them): a ratio to it, or of it, says nothing of the config."""
    ratios, unread = {}, {}
    for name in _FIGURES:
        values = _values(pairs, name)
        if len(values) < 2:
            continue
        mean_a = sum(v[0] for v in values) / len(values)
        mean_b = sum(v[1] for v in values) / len(values)
        if mean_a <= 0 or mean_b <= 0:
            unread[name] = (
                f"no ratio: A's mean is {mean_a:.3g}, B's {mean_b:.3g}, and a mean of 0 is a figure not measured "
                "(tokens that arrived together have no time between them), so B / A says nothing"
            )
            continue
        low, high = _bootstrap(values, "ratio", rng)
        ratios[name] = Ratio(a=mean_a, b=mean_b, ratio=mean_b / mean_a, low=low, high=high, pairs=len(values))
    return ratios, unread


AGGREGATE = "output tokens/s (aggregate)"


def _aggregate(
    t: TaskComparison, pairs: list[Pair], again: list[Pair] | None, speeds: tuple[Speed, Speed]
) -> TaskComparison:
    """The aggregate output tok/s of the paired items, B / A, with the interval, rerun spread and reading board
    and gate give output_tps (board_speed.paired_ratio, the same statistic, seed and rule): one reading of one
    figure. Where there is none, why: a resumed run, whose requests span sessions, has no one duration."""
    timed = [(ra.timed(), rb.timed()) for ra, rb in pairs if not ra.warmup and not rb.warmup]
    rerun = [(ra.timed(), rb.timed()) for ra, rb in again if not ra.warmup and not rb.warmup] if again else None
    whys = [(side, untimed([p[i] for p in timed])) for i, side in enumerate("AB")]
    said = [f"{side}: {why}" for side, why in whys if why]
    if said:
        return t.model_copy(update={"unread": {**t.unread, AGGREGATE: "no ratio: " + "; ".join(said)}})
    found = paired_ratio("output_tps", timed, rerun, False, 0)
    rate_a, rate_b = (s.output_throughput for s in speeds)
    if found is None or not rate_a or not rate_b:
        return t
    ratio, low, high, spread = found
    reading = read_speed(ratio, low, high, spread)
    entry = Ratio(
        a=rate_a, b=rate_b, ratio=ratio, low=low, high=high, pairs=len(timed), statistic="aggregate", spread=spread,
        within_spread=reading.within_spread, within_noise=reading.within, reading=reading.said,
    )  # fmt: skip
    return t.model_copy(update={"ratios": {**t.ratios, AGGREGATE: entry}})


_CACHED = frozenset({"ttft", "first_answer"})
"""The figures that start at the request sent, so hold the prompt processing a prefix cache skips."""


def _read_speed(t: TaskComparison, again: list[Pair] | None) -> TaskComparison:
    """Each ratio read against noise as board reads its own (noise.read_speed): its interval, and with a rerun of A
    the spread A2 showed on its own on the same figure (noise.spread_factor); TTFT and first answer not read where
    one side's prompts came from a prefix cache the other's did not (repeats.cached_side, the gate's test)."""
    cached = cached_side(*t.prompt_cache) is not None
    read = {}
    for name, r in t.ratios.items():
        if cached and name in _CACHED:
            update: dict[str, Any] = {"reading": "not comparable (cached): one side's prompts came from a prefix cache"}
            read[name] = r.model_copy(update=update)
            continue
        moved = _values(again, name) if again is not None else []
        spread = spread_factor(sum(v[1] for v in moved), sum(v[0] for v in moved)) if moved else None
        reading = read_speed(r.ratio, r.low, r.high, spread)
        update = {"spread": spread, "within_spread": reading.within_spread, "within_noise": reading.within}
        read[name] = r.model_copy(update={**update, "reading": reading.said})
    return t.model_copy(update={"ratios": read})


_ACCURACY = ("accuracy_a", "accuracy_b", "difference", "low", "high", "p_value", "detectable")


def _accuracy(pairs: list[Pair], rng: Any) -> dict[str, Any]:
    """The accuracy figures of paired items; none for a workload's synthetic prompts, which have no right answer
    (every one of them would count as wrong in both runs: 0% against 0%, measured of nothing)."""
    if not any(r.scored for pair in pairs for r in pair):
        flips: dict[str, Any] = {
            "a_right_b_wrong": 0,
            "a_wrong_b_right": 0,
            "flipped_to_wrong": [],
            "flipped_to_right": [],
        }
        return {**dict.fromkeys(_ACCURACY), **flips, "scored": False}
    flags = [(float(ra.right), float(rb.right)) for ra, rb in pairs]
    low, high = _bootstrap(flags, "difference", rng)
    to_wrong = [ra.sample_id for ra, rb in pairs if ra.right and not rb.right]
    to_right = [ra.sample_id for ra, rb in pairs if rb.right and not ra.right]
    return {
        "accuracy_a": sum(f[0] for f in flags) / len(flags),
        "accuracy_b": sum(f[1] for f in flags) / len(flags),
        "difference": (sum(f[1] for f in flags) - sum(f[0] for f in flags)) / len(flags),
        "low": low,
        "high": high,
        "a_right_b_wrong": len(to_wrong),
        "a_wrong_b_right": len(to_right),
        "p_value": mcnemar_exact(len(to_wrong), len(to_right)),
        "detectable": minimum_detectable(len(pairs), len(to_wrong) + len(to_right)),
        "flipped_to_wrong": to_wrong,
        "flipped_to_right": to_right,
    }


def _paired_speed(pairs: list[Pair]) -> tuple[Speed, Speed]:
    """A's and B's speed figures over the paired items alone (warm-ups left out, as everywhere)."""
    return speed([ra.timed() for ra, _ in pairs]), speed([rb.timed() for _, rb in pairs])


def _task(pairs: list[Pair], speeds: tuple[Speed, Speed], rng: Any, per_request: bool) -> TaskComparison:
    accuracy = _accuracy(pairs, rng)  # first: the bootstrap draws stay in the order they always had
    ratios, unread = _ratios(pairs, rng)
    # the paired items' own aggregate: a run's summary pools items the other run never ran (another --limit); at a
    # set arrival rate it is the rate's whatever the config (gate_clauses.open_loop), and none is given
    rate_a, rate_b = (s.output_throughput for s in speeds)
    throughput = rate_b / rate_a if rate_a and rate_b and not per_request else None
    same = identical_pairs((said_of(ra), said_of(rb)) for ra, rb in pairs)
    cached = (cached_share(ra for ra, _ in pairs), cached_share(rb for _, rb in pairs))
    return TaskComparison(
        pairs=len(pairs), ratios=ratios, throughput_ratio=throughput, identical=same, prompt_cache=cached,
        unread=unread, **accuracy,
    )  # fmt: skip


def _noisy(tasks: dict[str, TaskComparison], noise: dict[str, Noise]) -> dict[str, TaskComparison]:
    """Each scored task's B - A read against noise (qualeval.figures.noise.read_noise, as board and gate read it):
    McNemar's test on its pairs, and with a rerun of A what the rerun moved on its own on the same group."""
    out = {}
    for name, t in tasks.items():
        found = noise.get(name)
        moved = abs(found.difference) if found is not None else None
        if not t.scored:
            out[name] = t
            continue
        reading = read_noise(t.pairs, t.a_right_b_wrong, t.a_wrong_b_right, moved=moved)
        update = {"within_noise": reading.within, "noise_reading": reading.said, "rerun_moved": moved}
        out[name] = t.model_copy(update=update)
    return out


def _read_checked(root_a: Path, root_b: Path, again: Path | None) -> tuple[RunDir, RunDir, RunDir | None]:
    """A, B and A's rerun read, refused where they are no pair to compare (rundir's checks), and keyed by item
    alone where they ran one level each under other labels."""
    a, b = read_run(root_a), read_run(root_b)
    refuse_same(root_a, a, root_b, b, "B")
    refuse_repeats(root_a, a)
    refuse_repeats(root_b, b)
    rerun = read_run(again) if again is not None else None
    if rerun is not None and again is not None:
        refuse_same(root_a, a, again, rerun, "A2, a rerun of A,")
        # B as its own rerun (or a copy of it) would make B - A its own noise: never beyond it
        refuse_same(root_b, b, again, rerun, "A2, a rerun of A,")
        check_rerun(a, rerun, again)
    runs = [(root_a, a), (root_b, b), *([(again, rerun)] if again is not None and rerun is not None else [])]
    matched, said = match_streams([(root, run.records) for root, run in runs])
    a, b, *rest = [_kept(run, dict(records), said) for (_, run), records in zip(runs, matched, strict=True)]
    rerun = rest[0] if rest else None
    if a.levels != b.levels:
        _refuse_other_sweep((root_a, a), (root_b, b))
        a, b = replace(a, records=_rekey(a.records)), replace(b, records=_rekey(b.records))
        rerun = replace(rerun, records=_rekey(rerun.records)) if rerun is not None else None
    return a, b, rerun


def _kept(run: RunDir, records: dict[PairKey, Record], said: str | None) -> RunDir:
    """The run as it pairs (one side of a --stream-parity run beside plain runs), its levels those it keeps."""
    return replace(run, records=records, levels={k[3] for k in records}, streams=said)


def _unanswered(failed: dict[str, tuple[int, int]], tasks: dict[str, TaskComparison]) -> dict[str, tuple[int, int]]:
    """The groups left with no pair to compare, every one an endpoint error: (A's, B's) counts."""
    return {name: e for name, e in sorted(failed.items(), key=lambda kv: _natural(kv[0])) if name not in tasks}


def compare_runs(
    root_a: Path | str, root_b: Path | str, *, seed: int = 0, again: Path | str | None = None
) -> Comparison:
    """B against A item by item; with `again`, a second run of A's configuration, the run-to-run noise too."""
    import numpy as np

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed {seed!r}: the bootstrap's seed is a whole number, 0 or more")
    root_a, root_b, again = Path(root_a), Path(root_b), Path(again) if again is not None else None
    a, b, rerun = _read_checked(root_a, root_b, again)
    shared = sorted(set(a.records) & set(b.records))
    if not shared:
        raise InputError(f"{root_a} and {root_b} share no items: they ran different tasks or samples")
    rng = np.random.default_rng(seed)  # one generator through every task, in order: results repeat exactly
    grouped, failed, warm = _grouped(a, b, shared)
    speeds = {name: _paired_speed(pairs) for name, pairs in grouped.items()}
    per_request = open_loop(a.manifest, b.manifest)
    tasks = {
        name: _task(pairs, speeds[name], rng, per_request).model_copy(
            update={"endpoint_errors": failed.get(name, (0, 0)), "warmup_pairs": warm.get(name, 0)}
        )
        for name, pairs in sorted(grouped.items(), key=lambda kv: _natural(kv[0]))
    }
    noise: dict[str, Noise] = {}
    if rerun is not None:
        found = run_noise(a.records, rerun.records, lambda key: _group(key, a.levels))
        noise = dict(sorted(found.items(), key=lambda kv: _natural(kv[0])))
    again_pairs = _grouped(a, rerun, sorted(set(a.records) & set(rerun.records)))[0] if rerun is not None else None
    tasks = {
        name: _read_speed(t, again_pairs.get(name, []) if again_pairs is not None else None)
        for name, t in _noisy(tasks, noise).items()
    }
    tools = {
        name: tool_sides(grouped[name], (a.parity, b.parity), name, again_pairs.get(name) if again_pairs else None)
        for name in tasks
    }
    tasks = {name: t.model_copy(update={"tools": tools[name]}) for name, t in tasks.items()}
    settings = settings_apart(a.manifest, b.manifest)
    tasks = with_episodes(tasks, grouped, settings)  # a multi-turn task: by turn, and what B - A is of
    if not per_request:  # open loop: the aggregate is the arrival rate's, and output_rate compares the runs
        tasks = {
            name: _aggregate(t, grouped[name], again_pairs.get(name) if again_pairs else None, speeds[name])
            for name, t in tasks.items()
        }
    return Comparison(
        a=str(root_a),
        b=str(root_b),
        again=str(again) if again is not None else None,
        noise=noise,
        simulated=a.manifest.simulated or b.manifest.simulated,
        open_loop=per_request,
        unpaired_a=len(set(a.records) - set(b.records)),
        unpaired_b=len(set(b.records) - set(a.records)),
        tasks=tasks,
        unanswered=_unanswered(failed, tasks),
        server=side_by_side(a.summary, b.summary, tasks, speeds),
        server_notes=server_notes(a.summary, b.summary),
        settings=settings,
        streams=a.streams,
    )
