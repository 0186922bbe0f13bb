"""What became of a request, as closed sets: its status, where its answer came from (the rung) and how a
follow-up's answer stood to the content's. The record (record.py) and its views (views.py) both name them."""

from __future__ import annotations

from typing import Literal

__all__ = [
    "ANSWERED",
    "DISAGREEING",
    "ENDPOINT_FAILED",
    "NOT_THE_MODELS",
    "TRUNCATED",
    "UNKNOWN_QUESTION",
    "Agreement",
    "Rung",
    "Status",
]

Status = Literal[
    "ok",
    "reasoning_truncated",
    "answer_truncated",
    "empty_content",
    "content_filter",
    "transport_error",
    "unknown_question",
    "echoed",
]
"""`echoed`: the content is mostly its prompt repeated (the instruction, the options, the examples), cut off by
the budget or with no answer of the model's own beside it. The model's failure: not correct, no answer read
from it, no follow-up asked or used; not among the answered (ANSWERED) nor the cut-off (TRUNCATED), since a larger
budget does not end a repetition."""
TRUNCATED: tuple[Status, ...] = ("reasoning_truncated", "answer_truncated")
"""The budget ran out: in the thinking (no answer) or in the answer."""
ANSWERED: tuple[Status, ...] = ("ok", "answer_truncated")
"""An answer came back, whole or cut: the statuses `accuracy_answered` counts."""
ENDPOINT_FAILED: tuple[Status, ...] = ("transport_error",)
"""The endpoint failed (connection, timeout, 429, 5xx, a 4xx such as context exceeded): the model never answered,
so accuracy leaves these out and counts them apart."""
NOT_THE_MODELS: tuple[Status, ...] = (*ENDPOINT_FAILED, "unknown_question")
"""No answer of the model's: the endpoint failed, or a reference server (qualeval.sim) answered a question that
is not in its answer key with a refusal of its own. Accuracy leaves both out and counts them apart; an unknown
question is no endpoint error (sending it again gets the same refusal), so it is counted on its own."""
UNKNOWN_QUESTION = ("x-qualeval-sim", "unknown-question")
"""The response header (name, value) the reference server marks such a refusal with; no real server sends it."""

Agreement = Literal["agrees", "disagrees", "filled", "unsupported", "silent"]
"""How a follow-up's answer stands to the content's: the same answer; another one (the content's is scored); the
content states none the ladder found, and the follow-up's, which the content holds, fills it in; the follow-up's
is not in the content (nothing is scored); the follow-up gave no answer (the content alone decides)."""
DISAGREEING: tuple[Agreement, ...] = ("disagrees", "unsupported")
"""Follow-ups whose answer the content does not support: never scored."""


Rung = Literal[
    "constraint", "json", "anchor", "math", "last", "followup", "rescue", "judge", "code", "content", "calls", "none"
]
"""Where an answer came from: a held constraint; a JSON answer field; an answer marker; math-verify over the
whole content; the last line; the follow-up's reply when its constraint broke; the reasoning (rescue, never
counted); a model judge that overruled the rules; the code block (code scorer) or the whole content (IFEval) of
scorers that judge the whole answer; the tool calls returned (a tool-call task); nothing."""
