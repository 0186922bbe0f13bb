"""A number the budget may have cut: the digits a response cut off by `max_tokens` ends on.

A response stopped by its budget (finish_reason `length`) that ends on digits ("... the total is 12") may have
been cut inside the number: the next token could have been "5", or ".5" after a final "12.". That number is no
answer; the rungs read the text before it. A number the response closed (a space, a line break or a word after it,
a closing bracket) is whole.
"""

from __future__ import annotations

import re

__all__ = ["unfinished_dropped"]

_TRAILING = re.compile(r"(?<![\w.,])[-−]?\d(?:[\d,.]|(?<=\d)[ \u00a0\u202f](?=\d))*\Z")
"""Digits at the very end, with the separators a number may still grow through (`12`, `1,2`, `3.`, `9 5`); a
number that ends a word (`x2`) is the word's."""


def unfinished_dropped(content: str) -> str:
    """The content of a response the budget cut off, less the number it ends on, which may be cut short."""
    return _TRAILING.sub("", content)
