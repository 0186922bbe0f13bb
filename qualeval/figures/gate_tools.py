"""The gate's tool-call clauses, read on a task's tool-call items alone (records whose `tools` is set):

- `tool_accuracy: {max_drop: m}`: the accuracy clause's paired non-inferiority test (figures.gate.noninferiority)
  on the per-item tool verdicts both runs answered, read against a rerun of the baseline on the same items;
- `parity: {min: s}`: the candidate's stream parity (--stream-parity: the share of items whose streamed and
  non-streamed calls and verdict agree) at least s; INVALID where the candidate did not send its items both ways;
- `schema_valid: {min: s}`: of the candidate's responses with a call, the share whose every call fits its tool's
  schema, at least s;
- `leaked_markup: {max_share: s}`: of the candidate's tool-call responses, the share whose call was left as markup
  in the reasoning or the content (call_in_reasoning, markup_in_content), at most s.

A figure with nothing to count (no pair, no call, no response) is INVALID, never a pass. A task with no tool-call
item is not gated on them: under `default:` a note says so; named under the task, the policy is refused
(qualeval.figures.policy.check_tasks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from qualeval.figures.runset import Key, Loaded, paired
from qualeval.figures.toolfigures import Parities, group_parity, tool_figures, tool_view
from qualeval.records import TOOL_CLAUSES, Clauses, ClauseVerdict, ToolStatus, Verdict

__all__ = ["tool_clauses"]

LEAKED: tuple[ToolStatus, ...] = ("call_in_reasoning", "markup_in_content")

Test = Callable[..., ClauseVerdict]


def _invalid(clause: str, limit: float, detail: str) -> ClauseVerdict:
    return ClauseVerdict(clause=clause, verdict="INVALID", limit=limit, value=None, detail=detail)


def _share(clause: str, value: float, limit: float, most: bool, shown: str) -> ClauseVerdict:
    passes = value <= limit if most else value >= limit
    bound = "at most" if most else "at least"
    verdict: Verdict = "GO" if passes else "NO-GO"
    detail = f"{shown}, {bound} {100 * limit:.1f}% allowed"
    return ClauseVerdict(clause=clause, verdict=verdict, limit=limit, value=value, detail=detail)


def _parity(limit: float, parities: Parities, group: str, sent_both: bool) -> ClauseVerdict:
    found = group_parity(parities, group)
    if found is None:
        why = (
            "the candidate sent no item both ways (it was not run with --stream-parity), so it has no stream parity"
            if not sent_both
            else "no tool-call item of this group was sent both ways"
        )
        return _invalid("parity", limit, f"{why} to hold against the limit")
    if not found.pairs or found.share is None:
        detail = (
            f"none of the {found.unanswered} pairs sent both ways got the model's answer on both sides, so there "
            "is no parity to hold against the limit"
        )
        return _invalid("parity", limit, detail)
    named = f" (discordant: {', '.join(d.item for d in found.discordant[:5])})" if found.discordant else ""
    shown = f"streamed and non-streamed agree on {found.agree} of {found.pairs} pairs ({100 * found.share:.1f}%){named}"
    return _share("parity", found.share, limit, False, shown)


def _cand_shares(clauses: Clauses, cand: Loaded, keys: Sequence[Key]) -> list[ClauseVerdict]:
    """schema_valid and leaked_markup on the candidate's tool-call responses of the group."""
    views = [v for k in keys if (v := tool_view(cand.records[k])) is not None]
    figures = tool_figures(views)
    out = []
    if clauses.schema_valid is not None:
        limit, s = clauses.schema_valid.min, figures.schema_valid
        if s.share is None:
            said = "no response of the candidate's made a call, so there is no schema to check"
            out.append(_invalid("schema_valid", limit, said))
        else:
            shown = f"{s.hits} of the candidate's {s.n} responses with a call fit their tools' schemas"
            shown += f" ({100 * s.share:.1f}%)"
            out.append(_share("schema_valid", s.share, limit, False, shown))
    if clauses.leaked_markup is not None:
        limit, n = clauses.leaked_markup.max_share, figures.responses
        if not n:
            said = "the candidate answered no tool-call item, so there is nothing to count"
            out.append(_invalid("leaked_markup", limit, said))
        else:
            leaked = sum(figures.statuses.get(status, 0) for status in LEAKED)
            shown = (
                f"{leaked} of the candidate's {n} tool-call responses left the call as markup in the reasoning or "
                f"the content ({100 * leaked / n:.1f}%)"
            )
            out.append(_share("leaked_markup", leaked / n, limit, True, shown))
    return out


def tool_clauses(
    clauses: Clauses,
    runs: tuple[Loaded, Loaded, Loaded | None],
    keys: Sequence[Key],
    group: str,
    noninferiority: Test,
) -> tuple[list[ClauseVerdict], list[str]]:
    """The tool clauses the policy sets for the group, or a note where the group has no tool-call item."""
    asked = [name for name in TOOL_CLAUSES if getattr(clauses, name) is not None]
    if not asked:
        return [], []
    base, cand, again = runs
    tooled = [k for k in keys if base.records[k].tools is not None or cand.records[k].tools is not None]
    if not tooled:
        return [], [f"{', '.join(asked)}: not applied, the task has no tool-call items"]
    out = []
    if clauses.tool_accuracy is not None:
        moved = abs(paired(base, again, tooled).difference) if again is not None else None
        found = noninferiority(paired(base, cand, tooled), clauses.tool_accuracy.max_drop, moved=moved)
        out.append(found.model_copy(update={"clause": "tool_accuracy", "detail": "tool-call items: " + found.detail}))
    if clauses.parity is not None:
        sent_both = bool(cand.manifest.config and cand.manifest.config.stream_parity) or bool(cand.parity)
        out.append(_parity(clauses.parity.min, cand.parity, group, sent_both))
    return out + _cand_shares(clauses, cand, tooled), []
