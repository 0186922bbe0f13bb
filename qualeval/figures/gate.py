"""`qualeval gate`: a release gate over a baseline run and a candidate of the same items, by a policy file.

Accuracy is a non-inferiority test on the paired items. With n items both runs answered, `down` right in the
baseline and wrong in the candidate and `up` the reverse, the difference is d = (up - down) / n. Its interval is
the data's alone, never the margin's: Bonett and Price's adjusted Wald interval for a paired difference (2012),
which adds one item to each discordant cell and two to n, d~ = (up - down) / (n + 2) and q~ = (up + down + 2) /
(n + 2), se = sqrt((q~ - d~^2) / (n + 2)); unadjusted, items that all agree would have no variance and pass any
margin. The one-sided 95% bounds are d~ -/+ 1.645 se (held within -1 and +1), the same whatever margin the
policy sets, and the verdict compares them with the margin m (`max_drop`, above 0: no number of items shows a
drop of exactly none). d is read against noise as compare and board read it (figures.noise.read_noise:
McNemar's exact test, and with a rerun what the rerun moved on its own):

- GO when the lower bound is above -m: a drop of m or more is rejected at 5%, one-sided. A wider margin never
  turns a GO into anything else. Where no pair is discordant the bound is -2.33 / (n + 2): 150 agreeing items
  pass a margin of 2 points, 100 do not, as the exact binomial bound has it;
- NO-GO when d <= -m and d is beyond noise: a real drop, by the margin or more (the detail says whether the upper
  bound is below -m too);
- INCONCLUSIVE otherwise: a drop past the margin that is within noise (these items cannot tell it from chance), or
  a difference whose lower bound does not clear the margin, with the smallest difference the items can detect
  (McNemar at alpha 0.05, power 0.8, Connor's approximation) and the number of paired items on which this same GO
  rule would clear the margin, the shares of items down and up kept as seen;
- INVALID when no item was answered by both runs, or one run is scored and the other not.

Speed and validity clauses are qualeval.figures.gate_clauses'. A task's verdict is its worst clause's, INVALID
before NO-GO before INCONCLUSIVE before GO, and the run's the worst gated task's; a task that no clause covers is
not gated, and the result names it (`not_gated`) so that a GO is never read as covering it.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

from qualeval.errors import InputError
from qualeval.figures.gate_clauses import open_loop, speed_clauses, validity_clauses
from qualeval.figures.gate_tools import tool_clauses
from qualeval.figures.noise import mcnemar_exact, minimum_detectable, read_noise, run_noise
from qualeval.figures.policy import check_tasks, clauses_for, load_policy
from qualeval.figures.rundir import check_rerun, refuse_same
from qualeval.figures.runset import Key, Loaded, PairCounts, figures, grouper, groups, load_runs, paired
from qualeval.records import TOOL_CLAUSES, Clauses, ClauseVerdict, GateResult, Noise, TaskGate, Verdict

__all__ = ["EXIT_CODES", "bounds", "gate_runs", "items_needed", "noninferiority"]

EXIT_CODES: dict[Verdict, int] = {"GO": 0, "NO-GO": 1, "INCONCLUSIVE": 4, "INVALID": 5}
Z_ONE_SIDED = NormalDist().inv_cdf(0.95)
_ORDER: tuple[Verdict, ...] = ("INVALID", "NO-GO", "INCONCLUSIVE", "GO")


def bounds(counts: PairCounts) -> tuple[float, float]:
    """The one-sided 95% bounds of the paired difference (the module's adjusted Wald interval): the data's
    alone, so that the evidence shown never moves with the margin it is held against."""
    n = counts.pairs + 2
    centre = (counts.up - counts.down) / n
    share = (counts.up + counts.down + 2) / n
    width = Z_ONE_SIDED * math.sqrt((share - centre * centre) / n)
    # the adjusted interval can pass -1 or +1 (all 10 pairs discordant: -109.6 points), which no difference of
    # shares can be; the margin is below 1, so holding them within +-1 moves no verdict
    return max(centre - width, -1.0), min(centre + width, 1.0)


def items_needed(counts: PairCounts, margin: float) -> int | None:
    """The fewest paired items on which the GO rule itself would clear the margin, the shares of items down and up
    kept as seen (rounded to whole items at each size). None when the difference seen is at or below -margin or
    when more than ten million items would be needed."""
    d = counts.difference
    if margin <= 0 or counts.pairs == 0 or d <= -margin:
        return None
    share = (counts.down + counts.up) / counts.pairs
    # the bound's closed form (the adjustment aside), then a walk over whole items: rounding moves it by a few
    closed = Z_ONE_SIDED**2 * max(share - d * d, 0.0) / (d + margin) ** 2
    agreeing = Z_ONE_SIDED * math.sqrt(2) / (d + margin)  # the adjustment's floor: no pair discordant
    n = max(1, math.ceil(max(closed, agreeing)) - 2)
    if n > 10_000_000:
        return None

    def go(size: int) -> bool:
        scaled = PairCounts(
            pairs=size,
            down=round(counts.down / counts.pairs * size),
            up=round(counts.up / counts.pairs * size),
        )
        return bounds(scaled)[0] > -margin

    while n > 1 and go(n - 1):
        n -= 1
    while not go(n):
        n += 1
        if n > 10_000_000:
            return None
    return n


def _advice(margin: float, detectable: float | None, needed: int | None, drop: bool) -> str:
    """What more items would do, in a whole sentence."""
    smallest = "no difference at all" if detectable is None else f"differences of {100 * detectable:.1f} points or more"
    if drop:
        return f"these items detect {smallest}, so more items would tell whether the drop is real"
    clears = (
        f"about {needed} paired items would clear the margin at the discordance seen"
        if needed
        else "no practical number of items would clear the margin at the discordance seen"
    )
    if detectable is not None and detectable <= margin:
        return f"the difference is too close to the margin for these items, which detect {smallest}; {clears}"
    return f"these items detect {smallest}, not the margin of {100 * margin:.1f}; {clears}"


def noninferiority(counts: PairCounts, margin: float, *, moved: float | None = None) -> ClauseVerdict:
    """The accuracy clause on paired counts (the rule is the module's docstring); `moved`: |A2 - A|, what a rerun
    of the baseline moved on its own, which the reading against noise holds the difference against."""
    n, limit = counts.pairs, -margin
    if n == 0:
        detail = (
            "no item was answered by both runs (the endpoint failed them, or the server knew none of the "
            "questions), so there is no accuracy to test"
        )
        return ClauseVerdict(clause="accuracy", verdict="INVALID", limit=limit, value=None, pairs=0, detail=detail)
    d = counts.difference
    low, high = bounds(counts)
    detectable = minimum_detectable(n, counts.down + counts.up)
    needed = items_needed(counts, margin)
    reading = read_noise(n, counts.down, counts.up, moved=moved)
    found = {
        "limit": limit,
        "value": d,
        "low": low,
        "high": high,
        "pairs": n,
        "detectable": detectable,
        "items_needed": needed,
        "p_value": mcnemar_exact(counts.down, counts.up),
        "within_noise": reading.within,
    }
    shown = f"{100 * d:+.1f} points on {n} paired items (one-sided 95% bounds {100 * low:+.1f} to {100 * high:+.1f})"
    past = f"a drop at or past the margin of {100 * limit:.1f}"
    if low > limit:
        detail = f"{shown}: the lower bound is above the margin of {100 * limit:.1f}; {reading.said}"
        return ClauseVerdict(clause="accuracy", verdict="GO", detail=detail, **found)
    if d <= limit and not reading.within:
        bound = (
            "and so is its upper bound" if high < limit else f"though its upper bound, {100 * high:+.1f}, is inside it"
        )
        return ClauseVerdict(
            clause="accuracy", verdict="NO-GO", detail=f"{shown}: {past}, {bound}; {reading.said}", **found
        )
    if d <= limit:
        detail = f"{shown}: {past}; {reading.said}; {_advice(margin, detectable, needed, True)}"
    else:
        why = f"the lower bound is not above the margin of {100 * limit:.1f}"
        detail = f"{shown}: {why}; {reading.said}; {_advice(margin, detectable, needed, False)}"
    return ClauseVerdict(clause="accuracy", verdict="INCONCLUSIVE", detail=detail, **found)


def _worst(verdicts: list[Verdict]) -> Verdict:
    return next((v for v in _ORDER if v in verdicts), "GO")


def gate_runs(
    *, baseline: Path | str, candidate: Path | str, policy_path: Path | str, rerun: Path | str | None = None
) -> GateResult:
    """The candidate against the baseline by the policy file; `rerun` a second run of the baseline's configuration.
    Every argument is by name: the two runs swapped would gate the baseline against the candidate."""
    baseline, candidate, policy_path = Path(baseline), Path(candidate), Path(policy_path)
    rerun = Path(rerun) if rerun is not None else None
    rules = load_policy(policy_path)
    runs = load_runs([baseline, candidate, *([rerun] if rerun is not None else [])])
    base, cand = runs[0], runs[1]
    again = runs[2] if rerun is not None else None
    refuse_same(baseline, base, candidate, cand, "the candidate")
    if again is not None and rerun is not None:
        refuse_same(baseline, base, rerun, again, "the rerun of the baseline")
        refuse_same(candidate, cand, rerun, again, "the rerun of the baseline")
        check_rerun(base, again, rerun, of=f"the baseline {baseline}")
    by_group = groups(base)
    unscored = {k[0] for k, r in base.records.items() if not r.scored} & {
        k[0] for k, r in cand.records.items() if not r.scored
    }
    untooled = {k[0] for k in base.records} - {k[0] for k, r in base.records.items() if r.tools is not None}
    check_tasks(policy_path, rules, {name.partition(" @ ")[0] for name in by_group}, unscored, untooled)
    noise = run_noise(base.records, again.records, grouper(base)) if again is not None else {}
    tasks, covered = {}, set()
    for name, keys in by_group.items():
        task = _task_gate(
            clauses_for(rules, name.partition(" @ ")[0]), (base, cand, again), keys, noise.get(name), name
        )
        if task is not None:
            tasks[name] = task
            covered.add(name.partition(" @ ")[0])
    if not tasks:
        raise InputError(
            f"{policy_path}: no clause applies to these runs: the policy asks only what they do not have (an accuracy "
            "of tasks that are not scored, tool clauses of tasks with no tool-call item)"
        )
    verdict = _worst([t.verdict for t in tasks.values()])
    return GateResult(
        baseline=str(baseline),
        rerun=str(rerun) if rerun is not None else None,
        candidate=str(candidate),
        policy=str(policy_path),
        verdict=verdict,
        exit_code=EXIT_CODES[verdict],
        tasks=tasks,
        not_gated=sorted({name.partition(" @ ")[0] for name in by_group} - covered),
        streams=base.streams,
    )


def _accuracy(
    clauses: Clauses, runs: tuple[Loaded, Loaded], keys: list[Key], noise: Noise | None
) -> tuple[list[ClauseVerdict], list[str]]:
    """The accuracy clause, or a note where `default:`'s does not apply (neither run scored: synthetic prompts)."""
    if clauses.accuracy is None:
        return [], []
    base, cand = runs
    margin = clauses.accuracy.max_drop
    scored = [any(run.records[k].scored for k in keys) for run in runs]
    if not any(scored):
        return [], [
            "accuracy: not applied, the prompts are not scored in either run (synthetic prompts, no right answer)"
        ]
    if not all(scored):
        which = "baseline" if scored[0] else "candidate"
        detail = f"scored in the {which} only: the runs do not ask the same thing, so there is no accuracy to compare"
        return [ClauseVerdict(clause="accuracy", verdict="INVALID", limit=-margin, value=None, detail=detail)], []
    moved = abs(noise.difference) if noise is not None else None
    return [noninferiority(paired(base, cand, keys), margin, moved=moved)], []


def _task_gate(
    clauses: Clauses, runs: tuple[Loaded, Loaded, Loaded | None], keys: list[Key], noise: Noise | None, group: str
) -> TaskGate | None:
    """One task's clauses and verdict, with each run's requests that got no answer of the model's; None when no
    clause of the policy applies to it (the task is not gated)."""
    base, cand, again = runs
    base_fig, cand_fig = figures(base, keys), figures(cand, keys)
    again_fig = figures(again, keys) if again is not None else None
    accuracy, notes = _accuracy(clauses, (base, cand), keys, noise)
    tools, tool_notes = tool_clauses(clauses, runs, keys, group, noninferiority)
    others = clauses.model_copy(update=dict.fromkeys(("accuracy", *TOOL_CLAUSES)))
    if not accuracy and not tools and not others.model_dump(exclude_none=True):
        return None
    per_request = open_loop(base.manifest, cand.manifest)
    verdicts = [
        *accuracy,
        *tools,
        *speed_clauses(clauses, cand_fig, base_fig, again_fig, per_request=per_request),
        *validity_clauses(clauses, cand_fig, base_fig),
    ]
    return TaskGate(
        verdict=_worst([v.verdict for v in verdicts]),
        clauses=verdicts,
        unknown_questions=base_fig.unknown_questions + cand_fig.unknown_questions,
        endpoint_errors=(base_fig.endpoint_errors, cand_fig.endpoint_errors),
        unit=cand_fig.unit,
        notes=notes + tool_notes,
    )
