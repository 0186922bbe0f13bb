"""qualeval: reasoning-aware quality and speed evaluation for OpenAI-compatible chat endpoints."""

__version__ = "0.1.0"

from qualeval.models import ChatRequest, ChatResponse, Completion, Message, Sample, Timing, Usage


def evaluate(**kwargs):  # type: ignore[no-untyped-def]
    """Run tasks against an endpoint; see `qualeval.api.evaluate` for the arguments."""
    from qualeval.api import evaluate as _evaluate

    return _evaluate(**kwargs)


__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Completion",
    "Message",
    "Sample",
    "Timing",
    "Usage",
    "__version__",
    "evaluate",
]
