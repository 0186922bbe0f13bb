"""A server's refusal of a request as longer than its context, read from its error message: what the terminal
and the reports say of such endpoint errors, and whether a rerun can help."""

from __future__ import annotations

import re

__all__ = ["context_claimed", "context_refused"]


# a server's refusal of a prompt longer than its context: vLLM and OpenAI ("maximum context length", newer vLLM
# "maximum model length"), SGLang ("the model's context length"), llama.cpp ("exceeds the available context size")
_CONTEXT_REFUSED = re.compile(r"context[ _](length|size|window)|maximum (context|model) length|max_model_len", re.I)


def context_refused(reason: str) -> bool:
    """Whether an endpoint error's reason is the server refusing a prompt longer than its context, and its own
    figures, where it gives them, do not show the request within that context (`context_claimed`)."""
    return _CONTEXT_REFUSED.search(reason) is not None and not context_claimed(reason)


# the figures a refusal gives: vLLM and OpenAI "maximum context length is N tokens. However, you requested M
# tokens", llama.cpp "request (M tokens) exceeds the available context size (N tokens)", SGLang "The input (M
# tokens) is longer than the model's context length (N tokens)"
_LIMIT = re.compile(r"(?:context (?:length|size)|maximum (?:context|model) length)\D{0,12}?(\d+) tokens", re.I)
_ASKED = re.compile(r"(?:requested|request \(|input \()\s*(\d+) tokens", re.I)


def context_claimed(reason: str) -> bool:
    """A refusal as longer than the context whose own figures put the request within it (4126 of 32768 tokens):
    the server's claim, which its figures do not bear out; sent again, such a request may well be answered."""
    if _CONTEXT_REFUSED.search(reason) is None:
        return False
    limit, asked = _LIMIT.search(reason), _ASKED.search(reason)
    return limit is not None and asked is not None and int(asked.group(1)) <= int(limit.group(1))
