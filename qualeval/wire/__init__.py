"""The wire: one chat request to an endpoint and its response, timed on one clock (request -> response).

client      ChatClient (a ChatSender), build_body, check_config (a ClientConfig, which lives in qualeval.records):
            the one door the other stages go through to an endpoint
transport   an asyncio Protocol per connection, stamping each network read where it arrives
stream      SSE chunks parsed as they arrive (sse: the event decoder)
response    a response's timing, usage and status, built once it has ended
proxied     httpx where a proxy is in the way
models      ChatRequest, ChatResponse, Message: the values a request and its response carry (a task's Sample is
            qualeval.tasks', the split Completion qualeval.reasoning's)
histogram   inter-token gaps as a sparse histogram, and quantiles
"""
