"""qualeval: reasoning-aware quality and speed evaluation for OpenAI-compatible chat endpoints."""

from qualeval.models import ChatRequest, ChatResponse, Completion, Message, Timing, Usage

__all__ = ["ChatRequest", "ChatResponse", "Completion", "Message", "Timing", "Usage", "__version__"]
__version__ = "0.1.0"
