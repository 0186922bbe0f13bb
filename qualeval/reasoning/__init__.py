"""The split: the model's thinking apart from its final answer, whatever field or inline format it came in.

split       split_completion: reasoning fields, inline tags, a close-only block, channels; the status
completion  Completion, what the split gives: the thinking, the answer, where the thinking came from, the status
formats     the inline formats, as data (`parsers/*.yaml`), and a user's own
toolmarkup  find_markup: tool calls a model wrote as markup that the server left in content or reasoning
"""

from qualeval.reasoning.completion import Completion
from qualeval.reasoning.formats import ReasoningFormat, builtin_formats, resolve_formats
from qualeval.reasoning.split import (
    FINISH_REASONS,
    REASONING_FIELDS,
    known_finish,
    pick_reasoning,
    split_completion,
    split_inline,
)
from qualeval.reasoning.toolmarkup import Markup, find_markup
from qualeval.reasoning.toolmarkup_formats import MarkupFormat, markup_formats

__all__ = [
    "FINISH_REASONS",
    "REASONING_FIELDS",
    "Completion",
    "Markup",
    "MarkupFormat",
    "ReasoningFormat",
    "builtin_formats",
    "find_markup",
    "known_finish",
    "markup_formats",
    "pick_reasoning",
    "resolve_formats",
    "split_completion",
    "split_inline",
]
