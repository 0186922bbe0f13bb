"""A task's item: one question rendered as chat messages, with everything needed to score it (tasks.samples builds
it from a document; workloads and `score` build their own)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from qualeval.records import EpisodeSpec, Shape, ToolAnswer
from qualeval.wire import Message

__all__ = ["Sample"]


class Sample(BaseModel):
    """One question of a task, ready to send: the rendered messages and everything needed to score it."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable across runs and endpoints: `task[/subset]/split/index-or-dataset-id`."""
    task: str
    messages: tuple[Message, ...]
    question: str = ""
    """The question as the document gives it (doc_to_text), without the task's instruction or few-shot examples:
    what a follow-up shows the model beside its response."""
    gold: str
    """The correct answer; for choice answers the label (A, B, ...) or the choice text, as the task asks."""
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    """Other accepted answers (alias match)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """The task's doc_to_meta values, by the names its YAML gives them: breakdowns group by them (subject,
    category...) and its scorer reads its own (the code scorer's `test`, IFEval's `kwargs`). Written into the
    record's `meta` as they are; `scored` and `shape` go into the record's fields of those names."""
    scored: bool = True
    """False for a workload's synthetic prompt: there is no right answer, so nothing to constrain or score."""
    max_tokens: int | None = None
    """A workload item's own token budget (its output length), over the task's."""
    extra_body: dict[str, bool | int] = Field(default_factory=dict)
    """The keys that force a workload item's output to that length (ignore_eos, min_tokens), merged into the body."""
    shape: Shape | None = None
    """What serving made of the prompt (None: the task's own item, as rendered)."""
    tools: tuple[dict[str, Any], ...] = ()
    """The OpenAI function tools the item offers (`{"type": "function", "function": {...}}`)."""
    tool_choice: str | dict[str, Any] | None = None
    """Sent as `tool_choice` when set (`auto`, `required`, `none`, or a named function)."""
    tool_answer: ToolAnswer | None = None
    """A tool-call item's expected calls (its `gold` is their summary); None for any other item."""
    episode: EpisodeSpec | None = None
    """A multi-turn item's episode (its turns, tools, API classes and ground truth); None for a single request.
    Its `messages` are turn 0's, its `tools` the initial ones."""
