"""The wire: one chat request to an endpoint and its response, timed on one clock (request -> response).

client      ChatClient (a ChatSender), ClientConfig, build_body: the only place that opens connections to an endpoint
transport   an asyncio Protocol per connection, stamping each network read where it arrives
stream      SSE chunks parsed as they arrive (sse: the event decoder)
response    a response's timing, usage and status, built once it has ended
proxied     httpx where a proxy is in the way
models      ChatRequest, ChatResponse, Completion, Message, Sample: the values that cross the flow
histogram   inter-token gaps as a sparse histogram, and quantiles
"""
