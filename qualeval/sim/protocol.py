"""How the simulated model reacts to the protocol around a question, as real models were seen to: a follow-up
that shows it its response is answered from that response; a request to restate an answer copies a template's
placeholder back at a set rate (SmolLM2-135M-Instruct: `{"answer": "Answer: <answer>"}`); a constraint that binds
from the first token on a prompt that asks for working costs accuracy (format restrictions degrade reasoning:
Tam et al. 2024, arXiv 2408.02442). Without these, the server's answers would not depend on what it is asked, and
no fast test could show a protocol doing harm.
"""

from __future__ import annotations

import re

__all__ = ["asks_working", "copied_placeholder", "restated", "restates"]

_RESPONSE = re.compile(r"\nResponse:\n(?P<text>.*)\Z", re.DOTALL)
_OLD_STYLE = re.compile(r"\b(?:give|state|repeat)\s+only\s+your\s+final\s+answer\b", re.IGNORECASE)
# the answer lines the simulated model writes (qualeval.sim.behaviour._answer_text), last one first
_STATED = [
    re.compile(r"####\s*(?P<v>[^\n(]+?)\s*(?:\(I checked|$)", re.MULTILINE),
    re.compile(r"\\boxed\{(?P<v>[^{}]*)\}"),
    re.compile(r"[Tt]he answer is \((?P<v>[A-Z])\)"),
    re.compile(r"Answer:\s*(?P<v>[^\n(]+?)\s*(?:\(I checked|$)", re.MULTILINE),
    re.compile(r"[Tt]he answer is (?P<v>[^\n(]+?)\.\s*(?:\(I checked|$)", re.MULTILINE),
]
_PLACEHOLDER = re.compile(r"(?:\b[A-Za-z]+:\s*)?(?:<[a-z_ ]{1,20}>|\{[a-z_]{1,20}\}|\$[A-Z]{3,10}\b)")
_WORKING = re.compile(r"step by step|reason it through|show your (?:work|working)|think\b|explain", re.IGNORECASE)


def restates(prompt: str) -> bool:
    """Whether the last user message asks for an answer again rather than asking a question: a follow-up."""
    return bool(_RESPONSE.search(prompt) or _OLD_STYLE.search(prompt))


def restated(prompt: str) -> str | None:
    """The answer the response shown in a follow-up states, read as a capable model reads it; None when the
    follow-up shows no response (the older kind, asked inside the conversation) or the response states none."""
    shown = _RESPONSE.search(prompt)
    if shown is None:
        return None
    text = shown.group("text")
    found = [(m.start(), m.group("v").strip()) for pattern in _STATED for m in pattern.finditer(text)]
    return max(found)[1] if found else None


def copied_placeholder(conversation: str) -> str | None:
    """The template text a model copies back in place of an answer ("Answer: <answer>"), if the exchange has one."""
    found = _PLACEHOLDER.search(conversation)
    return found.group(0) if found else None


def asks_working(prompt: str) -> bool:
    """Whether the prompt asks the model to work the question out before answering."""
    return bool(_WORKING.search(prompt))
