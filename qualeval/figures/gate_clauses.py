"""The gate's speed and validity clauses (qualeval.figures.gate has the accuracy clause and the verdict).

Speed clauses are ratios of candidate to baseline (TTFT p99 at most, output tok/s at least); with a rerun of the
baseline, a ratio that misses its limit by a factor no larger than the rerun moved on its own (up or down, the
same figure) is INCONCLUSIVE (the machine, not the config, may explain it). Two cases decide nothing and are
INVALID: a figure one run lacks, and a TTFT p99 whose prompts one side took from a prefix cache the other did not
(compare's test, qualeval.figures.repeats.cached_side). On an open-loop run (a set arrival rate, --request-rate)
the aggregate output tok/s is the arrival rate's whatever the config, so `output_tps` is judged on the mean
output tok/s per request there, and says so.

TTFT p99 is the p99 of each run's measured requests (numpy's linear interpolation). With fewer than 100 requests a
side it lies between the two slowest, so one request decides it: the detail says so, and a miss is INCONCLUSIVE
rather than NO-GO.

Validity clauses (endpoint errors, truncated share, output tokens per item against the baseline's) are GO or
NO-GO; with no endpoint errors clause, requests it would count make the task INVALID (the accuracy left them out,
so a GO would pass them unsaid), and so do the baseline's failed requests past the clause's limit (its failed
items are no wrong answers, but the candidate's answers to them were held against nothing).
"""

from __future__ import annotations

from qualeval.figures.noise import spread_factor
from qualeval.figures.repeats import cached_side
from qualeval.figures.runset import Group
from qualeval.records import Clauses, ClauseVerdict, Manifest, Verdict

__all__ = ["open_loop", "speed_clauses", "validity_clauses"]


def open_loop(*manifests: Manifest) -> bool:
    """Whether any of the runs sent its requests at a set arrival rate (--request-rate) rather than a number in
    flight: its aggregate tok/s is then the arrival rate's, not the server's."""
    return any(m.config is not None and m.config.request_rate for m in manifests)


def _ratio(
    name: str,
    cand: float | None,
    base: float | None,
    again: float | None,
    limit: float,
    most: bool,
    what: str = "",
    why: str = "",
) -> ClauseVerdict:
    """A speed clause: candidate / baseline at most (`most`) or at least `limit`, against a rerun's spread; `why`
    says why a figure is missing where that is known."""
    if cand is None or not base:
        return ClauseVerdict(
            clause=name,
            verdict="INVALID",
            limit=limit,
            value=None,
            detail=f"{what}not measured in both runs{why}, so there is nothing to hold against the limit",
        )
    ratio = cand / base
    passes = ratio <= limit if most else ratio >= limit
    bound = "at most" if most else "at least"
    shown = f"{what}× {ratio:.3f} the baseline's ({cand:,.1f} against {base:,.1f}), {bound} × {limit:g} allowed"
    if passes:
        return ClauseVerdict(clause=name, verdict="GO", limit=limit, value=ratio, detail=shown)
    # the miss and the rerun's move both as factors (up or down alike): a rerun that moved × 1.79 with nothing
    # changed cannot tell a config that misses its limit by × 1.35 from the machine
    miss = ratio / limit if most else limit / ratio
    moved = spread_factor(again, base)  # the one spread compare and board hold a ratio against too
    if moved is not None:
        detail = f"{shown}, missed by × {miss:.3f}"
        if miss <= moved:
            detail += f", within the × {moved:.3f} the baseline's rerun moved on its own"
            return ClauseVerdict(clause=name, verdict="INCONCLUSIVE", limit=limit, value=ratio, detail=detail)
        detail += f", beyond the × {moved:.3f} the baseline's rerun moved on its own"
        return ClauseVerdict(clause=name, verdict="NO-GO", limit=limit, value=ratio, detail=detail)
    return ClauseVerdict(
        clause=name, verdict="NO-GO", limit=limit, value=ratio, detail=f"{shown}, missed by × {miss:.3f}"
    )


def _ttft(clauses: Clauses, cand: Group, base: Group, again: Group | None) -> ClauseVerdict | None:
    if clauses.ttft_p99 is None:
        return None
    limit = clauses.ttft_p99.max_ratio
    shares = [g.speed.prompt_cache.share if g.speed.prompt_cache else None for g in (base, cand)]
    side = cached_side(*shares)
    if side is not None:
        mine, theirs = shares[side] or 0.0, shares[1 - side]
        who, other = ("baseline", "candidate")[side], ("baseline", "candidate")[1 - side]
        told = "not reported" if theirs is None else f"{theirs:.0%}"
        detail = (
            f"not comparable: the {who}'s prompts were {mine:.0%} served from the server's prefix cache, the "
            f"{other}'s {told}, so its TTFT measured cache hits, not prompt processing; run both with the cache "
            "cleared, or on prompts neither server has seen"
        )
        return ClauseVerdict(clause="ttft_p99", verdict="INVALID", limit=limit, value=None, detail=detail)

    def p99(g: Group | None) -> float | None:
        return g.speed.ttft.p99 if g is not None and g.speed.ttft else None

    counts = [g.speed.ttft.n if g.speed.ttft else 0 for g in (base, cand)]
    what = f"TTFT p99 (of {counts[0]} baseline and {counts[1]} candidate requests): "
    verdict = _ratio("ttft_p99", p99(cand), p99(base), p99(again), limit, True, what)
    few = min(counts)
    if verdict.value is None or few >= FEW_FOR_P99:
        return verdict
    return _few(verdict, few)


FEW_FOR_P99 = 100
"""Below this many requests a side, a p99 lies between the two slowest requests: one request decides it."""


def _few(verdict: ClauseVerdict, few: int) -> ClauseVerdict:
    """A p99 of too few requests said for what it is; a miss on it is INCONCLUSIVE, never NO-GO: a release is not
    failed on one request (a pass stays GO: even the slowest requests kept within the limit)."""
    top = 0.99 * (few - 1) % 1 if few > 1 else 1.0
    said = (
        f"; a p99 of {few} requests is {top:.0%} of the way from the second-slowest request to the slowest, so one "
        f"request decides it ({FEW_FOR_P99} or more a side give a p99 that is not the slowest's)"
    )
    if verdict.verdict != "NO-GO":
        return verdict.model_copy(update={"detail": verdict.detail + said})
    detail = verdict.detail + said + ": INCONCLUSIVE, not NO-GO, on one request"
    return verdict.model_copy(update={"verdict": "INCONCLUSIVE", "detail": detail})


def _output_tps(clauses: Clauses, cand: Group, base: Group, again: Group | None, per_request: bool) -> ClauseVerdict:
    assert clauses.output_tps is not None
    limit = clauses.output_tps.min_ratio
    if not per_request:
        rate = again.speed.output_throughput if again is not None else None
        whys = [f"the {who}: {g.untimed}" for who, g in (("baseline", base), ("candidate", cand)) if g.untimed]
        why = f" ({'; '.join(whys)})" if whys else ""
        what = "aggregate output tok/s (tokens over the time from the first request sent to the last finished): "
        cand_rate, base_rate = cand.speed.output_throughput, base.speed.output_throughput
        return _ratio("output_tps", cand_rate, base_rate, rate, limit, False, what, why)

    def mean(g: Group | None) -> float | None:
        return g.speed.output_rate.mean if g is not None and g.speed.output_rate else None

    verdict = _ratio("output_tps", mean(cand), mean(base), mean(again), limit, False, "per request: ")
    aggregate = cand.speed.output_throughput, base.speed.output_throughput
    moved = f" (here × {aggregate[0] / aggregate[1]:.3f})" if aggregate[0] and aggregate[1] else ""
    why = (
        ". Judged on the mean output tok/s of each request: at a set arrival rate (--request-rate) the aggregate "
        f"tok/s is the arrival rate's whatever the config{moved}"
    )
    return verdict.model_copy(update={"detail": verdict.detail + why})


def speed_clauses(
    clauses: Clauses, cand: Group, base: Group, again: Group | None, *, per_request: bool
) -> list[ClauseVerdict]:
    """TTFT p99 and output tok/s; `per_request` for open-loop runs (`open_loop`)."""
    out = [c for c in [_ttft(clauses, cand, base, again)] if c is not None]
    if clauses.output_tps is not None:
        out.append(_output_tps(clauses, cand, base, again, per_request))
    return out


def _endpoint_errors(clauses: Clauses, cand: Group, base: Group) -> ClauseVerdict | None:
    """Requests with no answer of the model's against the policy's limit. The candidate's failures are its own
    (NO-GO past the limit); the baseline's are items the candidate was held against nothing on, so past the limit
    the runs cannot be gated as they are (INVALID), whatever the candidate did. With no `endpoint_errors`
    clause, any such request in either run makes the clause INVALID: the accuracy left them out, so a GO would
    pass them unsaid."""
    # a question the reference server did not know is no answer of the model's either, in either run: an item
    # left out of the accuracy must not pass as if it had been answered
    unknown = cand.unknown_questions + base.unknown_questions
    missing = cand.endpoint_errors + unknown
    detail = f"{cand.endpoint_errors} {cand.unit} failed at the endpoint in the candidate"
    if cand.endpoint_errors and cand.unit == "episodes":  # one failed request stops an agent's whole episode
        detail += " (each ended there: left out, not counted wrong)"
    if unknown:
        detail += (
            f" and {unknown} unknown questions were left out (candidate {cand.unknown_questions}, "
            f"baseline {base.unknown_questions})"
        )
    lost = base.endpoint_errors
    if lost:
        detail += (
            f"; {lost} failed in the baseline, so the candidate's answers to those items were held against nothing"
        )
    if clauses.endpoint_errors is None:
        if not missing and not lost:
            return None
        return ClauseVerdict(
            clause="endpoint_errors",
            verdict="INVALID",
            limit=None,
            value=missing + lost,
            detail=(
                f"{detail}, and the policy sets no limit on them: every figure was measured without them, so the "
                "runs cannot be gated as they are (an endpoint_errors clause sets how many may fail)"
            ),
        )
    most = clauses.endpoint_errors.max
    if lost > most:
        return ClauseVerdict(
            clause="endpoint_errors",
            verdict="INVALID",
            limit=most,
            value=missing + lost,
            detail=(
                f"{detail}: more of the baseline's than the {most} allowed, so the runs cannot be gated as they "
                "are (rerun the baseline with the same --out to send them again)"
            ),
        )
    return ClauseVerdict(
        clause="endpoint_errors",
        verdict="GO" if missing <= most else "NO-GO",
        limit=most,
        value=missing,
        detail=f"{detail}, at most {most} allowed",
    )


def _output_tokens(within: float, cand: Group, base: Group) -> ClauseVerdict:
    if cand.output_tokens is None or not base.output_tokens:
        detail = "no token counts in both runs, so there is nothing to hold against the limit"
        return ClauseVerdict(clause="output_tokens", verdict="INVALID", limit=within, value=None, detail=detail)
    change = cand.output_tokens / base.output_tokens - 1
    verdict: Verdict = "GO" if abs(change) <= within else "NO-GO"
    detail = (
        f"{cand.output_tokens:,.0f} output tokens per item against the baseline's {base.output_tokens:,.0f} "
        f"({100 * change:+.1f}%), a change of at most ±{100 * within:.0f}% allowed"
    )
    return ClauseVerdict(clause="output_tokens", verdict=verdict, limit=within, value=change, detail=detail)


def validity_clauses(clauses: Clauses, cand: Group, base: Group) -> list[ClauseVerdict]:
    """Endpoint errors (said even with no clause for them), the truncated share and output tokens per item."""
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
        out.append(_output_tokens(clauses.output_tokens.within, cand, base))
    return out
