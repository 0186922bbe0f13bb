"""A tool-call task's figures in summary.json (TaskReport.tools), compare.json and board.json:
qualeval.figures.toolfigures computes them from records whose `tools` is set.

What every figure pools: the responses the model gave (records), warm-ups included as in accuracy; a request
that got no answer of the model's (an endpoint error, a question a reference server did not know) is in no figure
and counted apart (`unanswered`). A figure whose denominator is empty is None (shown "–"), never 0 or 100%. With
--stream-parity each item is sent twice, streamed and not: both responses count in every figure but parity's own,
which pairs them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from qualeval.records.accuracy import Cell
from qualeval.records.distribution import Distribution
from qualeval.records.toolcalls import ToolStatus

__all__ = [
    "DiscordantItem",
    "Parity",
    "Recovery",
    "ToolFigures",
    "ToolPaired",
    "ToolShare",
    "ToolSides",
    "ToolTiming",
    "TriggerAgreement",
]


class ToolShare(BaseModel):
    """`hits` of `n`; `share` None when n = 0 (nothing to count: no share, rather than 0%)."""

    hits: int
    n: int
    share: float | None


class TriggerAgreement(BaseModel):
    """Whether a call was made where one was expected, per response. Expected: the item's trigger is `call` or
    `any`; not expected: `none` (BFCL's irrelevance). Made: the server returned at least one call in `tool_calls`.
    A response with no call there is on the no-call side whatever its content or reasoning holds: a call left as
    markup in the text (recovered or not) was not made, as a client sees it."""

    called_expected: int
    """A call made where one was expected (true positives)."""
    called_unexpected: int
    """A call made where none was (false positives)."""
    missed: int
    """No call where one was expected (false negatives)."""
    held_back: int
    """No call where none was expected (true negatives)."""
    precision: float | None
    """Of the responses with a call, those where one was expected; None when no response called."""
    recall: float | None
    """Of the responses that should have called, those that did; None when no item expected a call."""
    f1: float | None
    """2 TP / (2 TP + FP + FN); None when no call was expected nor made (nothing on the calling side)."""
    no_call_agreement: float | None
    """Of the responses where no call was expected, those that made none; None when every item expected one."""


class Recovery(BaseModel):
    """The model right, the server wrong: of the responses judged wrong, those whose call was read back from
    markup the server left in the content or reasoning, and whether that call would have been right. Never added
    to the accuracy."""

    wrong: int
    """Responses judged wrong (the model's own mistakes and the server's together)."""
    recovered: int
    """Of them, with a call read back from leaked markup."""
    would_be_right: int
    """Of them, whose read-back calls would have been right: the server lost a right call."""
    model_wrong: int
    """`wrong` - `would_be_right`: wrong whatever the server did (or nothing could be read back)."""
    items: list[str] = Field(default_factory=list)
    """The items (sample ids) that would have been right, in order."""


class ToolTiming(BaseModel):
    """Streamed responses with at least one tool-call delta, warm-ups left out (as every speed figure): a
    non-streamed response has no deltas to time."""

    first_delta: Distribution | None
    """Milliseconds from the request sent to the first tool-call delta."""
    complete: Distribution | None
    """Milliseconds from the request sent to the last argument fragment: the calls whole."""
    fragments: Distribution | None
    """Tool-call deltas per response."""
    reasoning_tokens_before: Distribution | None
    """Reasoning pieces streamed before the first tool-call delta (one piece is about one token)."""


class DiscordantItem(BaseModel):
    """An item whose streamed and non-streamed responses disagree."""

    item: str
    """Its sample id, with `#repeat` and `@ level` where the run had several."""
    calls_agree: bool
    verdicts_agree: bool
    streamed: ToolStatus
    """The wire status of each side."""
    not_streamed: ToolStatus


class Parity(BaseModel):
    """--stream-parity: each item sent streamed and not (same sample id, repeat and level; `request.stream` tells
    them apart). A pair agrees when its calls are the same (names, and arguments equal once parsed as JSON; in any
    order; ids and indexes aside) and so is its verdict."""

    pairs: int
    """Items with both responses answered by the model."""
    agree: int
    share: float | None
    """agree / pairs; None with no pair."""
    discordant: list[DiscordantItem] = Field(default_factory=list)
    unanswered: int = 0
    """Items sent both ways where either side got no answer of the model's: out of `pairs`."""


class ToolFigures(BaseModel):
    """A tool-call task's figures (see the module's docstring for what they pool)."""

    responses: int
    """Responses of the model's to tool-call items: every figure's population but parity's and timing's."""
    items: int
    """Distinct items among them (accuracy's unit)."""
    unanswered: int
    """Tool-call requests with no answer of the model's (endpoint errors, unknown questions): in no figure."""
    accuracy: Cell | None
    """As the task's accuracy is computed (items, each the mean of its responses, Wilson 95%); None where the task's
    levels asked differently (the accuracy is per level then) or nothing was answered."""
    trigger: TriggerAgreement
    schema_valid: ToolShare
    """Of the responses with a call, those whose every call parses and validates against its tool's schema."""
    statuses: dict[ToolStatus, int] = Field(default_factory=dict)
    """Responses by wire status."""
    recovery: Recovery
    timing: ToolTiming
    parity: Parity | None = None
    """None when the run sent no item both ways."""


class ToolPaired(BaseModel):
    """Two runs' per-item tool verdicts paired: the tool-call items both answered (a request with no answer of the
    model's on either side is left out), McNemar's exact test on the discordant ones, read against noise as the
    task's accuracy is (qualeval.figures.noise.read_noise)."""

    pairs: int
    accuracy_a: float | None
    """The share right of the paired items; None with no pair. A: the baseline (board) or run A (compare)."""
    accuracy_b: float | None
    a_right_b_wrong: int
    a_wrong_b_right: int
    p_value: float | None
    """McNemar's exact test; None with no pair."""
    p_adjusted: float | None = None
    """board: Holm-corrected over the configs set beside the baseline; None in compare."""
    within_noise: bool | None = None
    noise_reading: str | None = None


class ToolSides(BaseModel):
    """compare: a tool-call task's figures in run A and run B, each over the paired items both runs answered (the
    pairs `TaskComparison.endpoint_errors` left out are in neither). Parity is each run's own, over all its items
    (its summary.json): compare pairs one response per item and run."""

    a: ToolFigures
    b: ToolFigures
    paired: ToolPaired | None = None
    """B against A on the per-item tool verdicts; None where no tool-call item was answered by both."""
