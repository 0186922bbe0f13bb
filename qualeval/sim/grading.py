"""The reference server as a model judge: it answers qualeval's grader prompt the way a careful grader would
on easy cases, so the judge path can be tested end to end without a real model.

Its rule: CORRECT when the predicted answer, normalised and with number words as digits, shares most of its
tokens with the gold target or an accepted answer; NOT_ATTEMPTED for a refusal; INCORRECT otherwise.
"""

from __future__ import annotations

import re

from qualeval.scoring.extract import normalize, token_f1, words_to_digits
from qualeval.scoring.modeljudge import GRADER_MARK

__all__ = ["grade_reply"]

_FIELD = re.compile(r"^(Gold target|Also accepted|Predicted answer): (.*)$", re.MULTILINE)
_REFUSAL = re.compile(r"\b(i do not know|i don't know|cannot answer|not sure|no idea)\b", re.IGNORECASE)


def _form(text: str) -> str:
    return words_to_digits(normalize(text))


def grade_reply(prompt: str) -> str | None:
    """The one-word grade for a grader prompt; None when the prompt is not one."""
    if not prompt.startswith(GRADER_MARK):
        return None
    fields = {name: value.strip() for name, value in _FIELD.findall(prompt)}
    answer = fields.get("Predicted answer", "")
    if not answer or _REFUSAL.search(answer):
        return "NOT_ATTEMPTED"
    accepted = [fields.get("Gold target", "")]
    if fields.get("Also accepted", "(none)") != "(none)":
        accepted += fields["Also accepted"].split("; ")
    best = max(token_f1(_form(answer), _form(gold)) for gold in accepted)
    return "CORRECT" if best >= 0.6 else "INCORRECT"
