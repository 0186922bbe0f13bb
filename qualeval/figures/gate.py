"""`qualeval gate`: a release gate over a baseline run and a candidate of the same items, by a policy file.

Accuracy is a non-inferiority test on the paired items. With n items both runs answered, `down` right in the
baseline and wrong in the candidate and `up` the reverse, the difference is d = (up - down) / n and its discordant
share q = (up + down) / n. The test is of d <= -m against d > -m for a margin m (`max_drop`), with d's variance
taken at the margin, where the discordance cannot be below m: se = sqrt((max(q, m) - m^2) / n) (the paired Wald
variance with q floored at m; unfloored, items that all agree would have no variance and pass any margin). The
one-sided 95% bounds are d -/+ 1.645 se, and:

- NO-GO when d <= -m: the candidate dropped by the margin or more (the detail says whether the upper bound is
  below -m too, a drop shown beyond chance);
- GO when the lower bound is above -m: a drop of m or more is rejected at 5%, one-sided. Where no pair is
  discordant this agrees with the exact binomial bound: 150 agreeing items pass a margin of 2 points, 100 do not;
- INCONCLUSIVE otherwise, with the smallest difference the items can detect (McNemar at alpha 0.05, power 0.8,
  Connor's approximation, figures.noise) and the number of paired items on which this same GO rule would clear
  the margin, the shares of items down and up kept as seen (so the advice never contradicts the verdict).

Speed clauses are ratios of candidate to baseline (TTFT p99 at most, output tok/s at least); with a rerun of the
baseline, a ratio that misses its limit by a factor no larger than the rerun moved on its own (up or down, the
same figure) is INCONCLUSIVE (the machine, not the config, may explain it). Validity clauses (endpoint errors,
truncated share, output tokens per item against the baseline's) are GO or NO-GO; with no endpoint errors clause,
requests it would count make it INCONCLUSIVE (the accuracy left them out, so a GO would pass them unsaid), and
each run's endpoint errors are named whatever the policy. A task's verdict is its worst
clause's, NO-GO before INCONCLUSIVE before GO, and the run's the worst task's.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

from pydantic import ValidationError

from qualeval.errors import InputError, validation_problem, yaml_mapping
from qualeval.figures.noise import minimum_detectable
from qualeval.figures.rundir import check_rerun, refuse_same
from qualeval.figures.runset import Group, Key, Loaded, PairCounts, figures, groups, load_runs, paired
from qualeval.records import Clauses, ClauseVerdict, GateResult, Policy, TaskGate, Verdict

__all__ = ["EXIT_CODES", "gate_runs", "items_needed", "load_policy", "noninferiority"]

EXIT_CODES: dict[Verdict, int] = {"GO": 0, "NO-GO": 1, "INCONCLUSIVE": 4}
Z_ONE_SIDED = NormalDist().inv_cdf(0.95)
_ORDER: tuple[Verdict, ...] = ("NO-GO", "INCONCLUSIVE", "GO")


def load_policy(path: Path) -> Policy:
    """The policy file, every task's clauses checked; a mistake is one line naming the file and the field."""
    try:
        policy = Policy.model_validate(yaml_mapping(path, "policy"))
    except ValidationError as exc:
        # a misspelt key shows as the missing key it stood for too: name the key the file gave
        extra = [e["loc"] for e in exc.errors() if e["type"] == "extra_forbidden"]
        if extra:
            raise InputError(f"{path}: {'.'.join(map(str, extra[0]))}: not a key of a policy") from None
        problem = validation_problem(exc)
        raise InputError(f"{path}: {problem.field}: {problem.message}") from None
    if not any(c.model_fields_set for c in policy.root.values()):
        raise InputError(f"{path}: the policy has no clause (accuracy, ttft_p99, output_tps, endpoint_errors...)")
    return policy


def _clauses(policy: Policy, task: str) -> Clauses:
    """`default:`'s clauses with the task's own on top."""
    default = policy.root.get("default", Clauses())
    own = policy.root.get(task, Clauses())
    return Clauses.model_validate({**default.model_dump(exclude_unset=True), **own.model_dump(exclude_unset=True)})


def _half_width(counts: PairCounts, margin: float) -> float:
    """How far the one-sided 95% bounds lie from the difference, the variance taken at the margin (the module's)."""
    discordant = counts.down + counts.up
    return Z_ONE_SIDED * math.sqrt((max(discordant / counts.pairs, margin) - margin * margin) / counts.pairs)


def items_needed(counts: PairCounts, margin: float) -> int | None:
    """The fewest paired items on which the GO rule itself would clear the margin, the shares of items down and up
    kept as seen (rounded to whole items at each size). None when the difference seen is at or below -margin or
    when more than ten million items would be needed."""
    d = counts.difference
    if margin <= 0 or counts.pairs == 0 or d <= -margin:
        return None
    share = max((counts.down + counts.up) / counts.pairs, margin)
    # the bound's closed form, then a walk over whole items: rounding the counts moves the answer by a few
    n = max(1, math.ceil(Z_ONE_SIDED**2 * (share - margin * margin) / (d + margin) ** 2))
    if n > 10_000_000:
        return None

    def go(size: int) -> bool:
        scaled = PairCounts(
            pairs=size,
            down=round(counts.down / counts.pairs * size),
            up=round(counts.up / counts.pairs * size),
        )
        return scaled.difference - _half_width(scaled, margin) > -margin

    while n > 1 and go(n - 1):
        n -= 1
    while not go(n):
        n += 1
    return n


def noninferiority(counts: PairCounts, margin: float) -> ClauseVerdict:
    """The accuracy clause on paired counts (the rule is the module's docstring)."""
    n, limit = counts.pairs, -margin
    if n == 0:
        return ClauseVerdict(
            clause="accuracy",
            verdict="INCONCLUSIVE",
            limit=limit,
            value=None,
            pairs=0,
            detail="no item answered by both",
        )
    d, discordant = counts.difference, counts.down + counts.up
    width = _half_width(counts, margin)
    low, high = d - width, d + width
    detectable = minimum_detectable(n, discordant)
    needed = items_needed(counts, margin)
    figures_ = {"low": low, "high": high, "pairs": n, "detectable": detectable, "items_needed": needed}
    shown = f"{100 * d:+.1f} points on {n} paired items (one-sided 95%: {100 * low:+.1f} to {100 * high:+.1f})"
    if d <= limit:
        beyond = "; the drop is beyond chance" if high < limit else "; not beyond chance, but no better than the margin"
        return ClauseVerdict(
            clause="accuracy",
            verdict="NO-GO",
            limit=limit,
            value=d,
            detail=f"{shown}, margin -{100 * margin:.1f}{beyond}",
            **figures_,
        )
    if low > limit:
        return ClauseVerdict(
            clause="accuracy",
            verdict="GO",
            limit=limit,
            value=d,
            detail=f"{shown}, above -{100 * margin:.1f}",
            **figures_,
        )
    smallest = "none" if detectable is None else f"{100 * detectable:.1f} points"
    if detectable is not None and detectable <= margin:
        why = f"too close to the margin of {100 * margin:.1f} for these items (they detect {smallest} or more)"
    else:
        would = f"about {needed} paired items would" if needed else "no practical number of items would"
        why = f"these items detect differences of {smallest} or more, not the margin of {100 * margin:.1f}; {would}"
    return ClauseVerdict(
        clause="accuracy",
        verdict="INCONCLUSIVE",
        limit=limit,
        value=d,
        detail=f"{shown}: {why}",
        **figures_,
    )


def _ratio(
    name: str, cand: float | None, base: float | None, again: float | None, limit: float, most: bool
) -> ClauseVerdict:
    """A speed clause: candidate / baseline at most (`most`) or at least `limit`, against a rerun's spread."""
    if cand is None or not base:
        return ClauseVerdict(
            clause=name, verdict="INCONCLUSIVE", limit=limit, value=None, detail="not measured in both runs"
        )
    ratio = cand / base
    passes = ratio <= limit if most else ratio >= limit
    bound = "at most" if most else "at least"
    shown = f"× {ratio:.3f} the baseline's ({cand:,.1f} against {base:,.1f}), {bound} × {limit:g} allowed"
    if passes:
        return ClauseVerdict(clause=name, verdict="GO", limit=limit, value=ratio, detail=shown)
    # the miss and the rerun's move both as factors (up or down alike): a rerun that moved × 1.79 with nothing
    # changed cannot tell a config that misses its limit by × 1.35 from the machine
    miss = ratio / limit if most else limit / ratio
    if again:
        moved = max(again / base, base / again)
        detail = f"{shown}, missed by × {miss:.3f}"
        if miss <= moved:
            detail += f", within the × {moved:.3f} the baseline's rerun moved on its own"
            return ClauseVerdict(clause=name, verdict="INCONCLUSIVE", limit=limit, value=ratio, detail=detail)
        detail += f", beyond the × {moved:.3f} the baseline's rerun moved on its own"
        return ClauseVerdict(clause=name, verdict="NO-GO", limit=limit, value=ratio, detail=detail)
    return ClauseVerdict(clause=name, verdict="NO-GO", limit=limit, value=ratio, detail=shown)


def _speed(clauses: Clauses, cand: Group, base: Group, again: Group | None) -> list[ClauseVerdict]:
    out = []
    if clauses.ttft_p99 is not None:

        def p99(g: Group | None) -> float | None:
            return g.speed.ttft.p99 if g is not None and g.speed.ttft else None

        out.append(_ratio("ttft_p99", p99(cand), p99(base), p99(again), clauses.ttft_p99.max_ratio, True))
    if clauses.output_tps is not None:
        rate = again.speed.output_throughput if again is not None else None
        out.append(
            _ratio(
                "output_tps",
                cand.speed.output_throughput,
                base.speed.output_throughput,
                rate,
                clauses.output_tps.min_ratio,
                False,
            )
        )
    return out


def _endpoint_errors(clauses: Clauses, cand: Group, base: Group) -> ClauseVerdict | None:
    """Requests with no answer of the model's against the policy's limit. With no `endpoint_errors` clause, any
    such request makes the clause INCONCLUSIVE: the accuracy left them out, so a GO would pass them unsaid."""
    # a question the reference server did not know is no answer of the model's either, in either run: an item
    # left out of the accuracy must not pass as if it had been answered
    unknown = cand.unknown_questions + base.unknown_questions
    missing = cand.endpoint_errors + unknown
    detail = f"{cand.endpoint_errors} requests failed at the endpoint"
    if unknown:
        detail += (
            f" and {unknown} unknown questions were left out (candidate {cand.unknown_questions}, "
            f"baseline {base.unknown_questions})"
        )
    if clauses.endpoint_errors is None:
        if not missing:
            return None
        return ClauseVerdict(
            clause="endpoint_errors",
            verdict="INCONCLUSIVE",
            limit=None,
            value=missing,
            detail=f"{detail}, and the policy sets no limit on them (an endpoint_errors clause would)",
        )
    most = clauses.endpoint_errors.max
    return ClauseVerdict(
        clause="endpoint_errors",
        verdict="GO" if missing <= most else "NO-GO",
        limit=most,
        value=missing,
        detail=f"{detail}, at most {most} allowed",
    )


def _validity(clauses: Clauses, cand: Group, base: Group) -> list[ClauseVerdict]:
    errors = _endpoint_errors(clauses, cand, base)
    out = [errors] if errors is not None else []
    if clauses.truncated is not None:
        most_share = clauses.truncated.max_share
        verdict: Verdict = "GO" if cand.truncated <= most_share else "NO-GO"
        detail = (
            f"{100 * cand.truncated:.1f}% of answers cut off by the budget, at most {100 * most_share:.1f}% allowed"
        )
        out.append(
            ClauseVerdict(clause="truncated", verdict=verdict, limit=most_share, value=cand.truncated, detail=detail)
        )
    if clauses.output_tokens is not None:
        within = clauses.output_tokens.within
        if cand.output_tokens is None or not base.output_tokens:
            out.append(
                ClauseVerdict(
                    clause="output_tokens",
                    verdict="INCONCLUSIVE",
                    limit=within,
                    value=None,
                    detail="no token counts in both runs",
                )
            )
        else:
            change = cand.output_tokens / base.output_tokens - 1
            verdict = "GO" if abs(change) <= within else "NO-GO"
            detail = (
                f"{cand.output_tokens:,.0f} output tokens per item against the baseline's {base.output_tokens:,.0f} "
                f"({100 * change:+.1f}%), within ±{100 * within:.0f}% allowed"
            )
            out.append(
                ClauseVerdict(clause="output_tokens", verdict=verdict, limit=within, value=change, detail=detail)
            )
    return out


def _worst(verdicts: list[Verdict]) -> Verdict:
    return next((v for v in _ORDER if v in verdicts), "GO")


def gate_runs(
    baseline: Path | str, candidate: Path | str, policy_path: Path | str, *, rerun: Path | str | None = None
) -> GateResult:
    """The candidate against the baseline by the policy; `rerun` a second run of the baseline's configuration."""
    baseline, candidate, policy_path = Path(baseline), Path(candidate), Path(policy_path)
    rerun = Path(rerun) if rerun is not None else None
    policy = load_policy(policy_path)
    runs = load_runs([baseline, candidate, *([rerun] if rerun is not None else [])])
    base, cand = runs[0], runs[1]
    again = runs[2] if rerun is not None else None
    refuse_same(baseline, base, candidate, cand, "the candidate")
    if again is not None and rerun is not None:
        refuse_same(baseline, base, rerun, again, "the rerun of the baseline")
        refuse_same(candidate, cand, rerun, again, "the rerun of the baseline")
        check_rerun(base, again, rerun, of=f"the baseline {baseline}")
    by_group = groups(base)
    known = {name.partition(" @ ")[0] for name in by_group}
    for name in policy.root:
        if name != "default" and name not in known:
            raise InputError(f"{policy_path}: task '{name}' is not in the runs (they hold {', '.join(sorted(known))})")
    tasks = {}
    for name, keys in by_group.items():
        clauses = _clauses(policy, name.partition(" @ ")[0])
        task = _task_gate(clauses, base, cand, again, keys)
        if task is not None:
            tasks[name] = task
    verdict = _worst([t.verdict for t in tasks.values()])
    return GateResult(
        baseline=str(baseline),
        rerun=str(rerun) if rerun is not None else None,
        candidate=str(candidate),
        policy=str(policy_path),
        verdict=verdict,
        exit_code=EXIT_CODES[verdict],
        tasks=tasks,
    )


def _task_gate(clauses: Clauses, base: Loaded, cand: Loaded, again: Loaded | None, keys: list[Key]) -> TaskGate | None:
    """One task's clauses and verdict, with each run's requests that got no answer of the model's; None when the
    policy has no clause for it and nothing went unanswered."""
    base_fig, cand_fig = figures(base, keys), figures(cand, keys)
    again_fig = figures(again, keys) if again is not None else None
    out = []
    if clauses.accuracy is not None:
        if cand_fig.scored and base_fig.scored:
            out.append(noninferiority(paired(base, cand, keys), clauses.accuracy.max_drop))
        else:
            limit = -clauses.accuracy.max_drop
            out.append(
                ClauseVerdict(
                    clause="accuracy",
                    verdict="INCONCLUSIVE",
                    limit=limit,
                    value=None,
                    detail="not scored: no accuracy to test",
                )
            )
    verdicts = [*out, *_speed(clauses, cand_fig, base_fig, again_fig), *_validity(clauses, cand_fig, base_fig)]
    if not verdicts:
        return None
    return TaskGate(
        verdict=_worst([v.verdict for v in verdicts]),
        clauses=verdicts,
        unknown_questions=base_fig.unknown_questions + cand_fig.unknown_questions,
        endpoint_errors=(base_fig.endpoint_errors, cand_fig.endpoint_errors),
    )
