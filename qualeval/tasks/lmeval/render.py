"""An imported task's prompt is lm-eval's prompt: the templates that render it as lm-eval does, with nothing of
qualeval's added (no answer instruction, no code fence).

lm-eval (`ConfigurableTask.fewshot_context`, `build_qa_turn`) renders a few-shot example as a user turn holding
its `doc_to_text` and an assistant turn holding its target after the few-shot `gen_prefix` (joined by a space
unless either side has whitespace there), and the question as a user turn holding its `doc_to_text`, then the
`gen_prefix` as the start of the model's turn. A chat request here ends with the user turn (qualeval sends no
assistant prefill, which most chat endpoints do not continue), so the question's `gen_prefix` closes the user
turn, joined by the task's `target_delimiter` where lm-eval's plain-text rendering puts it (neither side has
whitespace at the join).
"""

from __future__ import annotations

from typing import Any

from qualeval.errors import InputError
from qualeval.tasks.lmeval.files import FunctionRef

__all__ = ["fewshot_answer_template", "prefix_sources", "user_template"]


def _raw(text: str) -> str:
    """Fixed text inside a template, with no Jinja read into it."""
    return "{% raw %}" + text + "{% endraw %}" if text else ""


def _source(value: Any, key: str) -> str | None:
    """lm-eval's `resolve_field`: a document field where the document has one of that name, else a template."""
    if value is None or value == "":
        return None
    if isinstance(value, FunctionRef):
        raise InputError(f"{value.where}: field '{key}': a gen_prefix computed by code ({value.name}) is not read")
    text = str(value)
    if "{{" in text or "{%" in text:
        return text
    name = repr(text)
    return "{{ doc[" + name + "] if " + name + " in doc else " + name + " }}"


def prefix_sources(cfg: dict[str, Any]) -> tuple[str | None, str | None]:
    """The question's and the few-shot examples' gen_prefix, as templates (the few-shot one inherits)."""
    config = cfg.get("fewshot_config")
    shots: dict[str, Any] = config if isinstance(config, dict) else {}
    question = _source(cfg.get("gen_prefix"), "gen_prefix")
    if "gen_prefix" in shots:
        return question, _source(shots["gen_prefix"], "fewshot_config.gen_prefix")
    return question, question


def user_template(prefix: str | None, delimiter: str, base: str = "{{ text }}") -> str:
    """The user turn: `base` (lm-eval's question text), closed by its gen_prefix on the question's turn only.

    `shots` is defined for the question alone (a few-shot example's scope has `target` instead), so few-shot
    user turns stay the example's text, as lm-eval sends them."""
    if prefix is None:
        return base
    return (
        base + "{% if shots is defined %}{% set gen_prefix %}" + prefix + "{% endset %}"
        "{% if text and gen_prefix and not text[-1].isspace() and not gen_prefix[0].isspace() %}"
        + _raw(delimiter)
        + "{% endif %}{{ gen_prefix }}{% endif %}"
    )


def fewshot_answer_template(prefix: str | None) -> str:
    """A few-shot example's assistant turn: its gen_prefix and its target, as lm-eval's `maybe_delimit` joins them."""
    if prefix is None:
        return "{{ target }}"
    return (
        "{% set gen_prefix %}" + prefix + "{% endset %}{% set answer = target | string %}{{ gen_prefix }}"
        "{% if gen_prefix and answer and not gen_prefix[-1].isspace() and not answer[0].isspace() %} {% endif %}"
        "{{ answer }}"
    )
