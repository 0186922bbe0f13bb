"""qualeval: reasoning-aware quality and speed evaluation for OpenAI-compatible chat endpoints.

The public API is what `__all__` lists (a test pins it). The run entry points load on first use, so that
`import qualeval` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qualeval._version import __version__
from qualeval.reasoning import Completion
from qualeval.records import Timing, Usage
from qualeval.tasks import Sample
from qualeval.wire import ChatRequest, ChatResponse, Message

if TYPE_CHECKING:
    from qualeval.api import RunResult, evaluate, evaluate_async, open_run
    from qualeval.records import ClientConfig, Record, RunConfig
    from qualeval.run import score_file
    from qualeval.tasks import load_task
    from qualeval.wire import ChatClient

_LAZY = {
    "RunResult": "qualeval.api",
    "evaluate": "qualeval.api",
    "evaluate_async": "qualeval.api",
    "open_run": "qualeval.api",
    "ChatClient": "qualeval.wire",
    "ClientConfig": "qualeval.records",
    "RunConfig": "qualeval.records",
    "score_file": "qualeval.run",
    "Record": "qualeval.records",
    "load_task": "qualeval.tasks",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'qualeval' has no attribute '{name}'")


__all__ = [
    "ChatClient",
    "ChatRequest",
    "ChatResponse",
    "ClientConfig",
    "Completion",
    "Message",
    "Record",
    "RunConfig",
    "RunResult",
    "Sample",
    "Timing",
    "Usage",
    "__version__",
    "evaluate",
    "evaluate_async",
    "load_task",
    "open_run",
    "score_file",
]
