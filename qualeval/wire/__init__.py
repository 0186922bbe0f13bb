"""The wire: one chat request to an endpoint and its response, timed on one clock (request -> response).

client      ChatClient (a ChatSender), build_body, check_config (a ClientConfig, which lives in qualeval.records):
            the one door the other stages go through to an endpoint
transport   an asyncio Protocol per connection, stamping each network read where it arrives
stream      SSE chunks parsed as they arrive (sse: the event decoder; calls: tool-call deltas merged by index,
            a whole message's calls)
response    a response's timing, usage and status, built once it has ended
proxied     httpx where a proxy is in the way
models      ChatRequest, ChatResponse, Message: the values a request and its response carry (a task's Sample is
            qualeval.tasks', the split Completion qualeval.reasoning's)
histogram   inter-token gaps as a sparse histogram, and quantiles
"""

from qualeval.wire.client import (
    THINKING_BUDGET_FIELD,
    THINKING_SWITCHES,
    ChatClient,
    ChatSender,
    build_body,
    check_config,
    switch_params,
)
from qualeval.wire.histogram import interpolated, merge, percentile
from qualeval.wire.models import ChatRequest, ChatResponse, Message
from qualeval.wire.response import failed_response
from qualeval.wire.transport import run_async

__all__ = [
    "THINKING_BUDGET_FIELD",
    "THINKING_SWITCHES",
    "ChatClient",
    "ChatRequest",
    "ChatResponse",
    "ChatSender",
    "Message",
    "build_body",
    "check_config",
    "failed_response",
    "interpolated",
    "merge",
    "percentile",
    "run_async",
    "switch_params",
]
