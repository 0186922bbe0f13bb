"""llama-server's prompt cache as qualeval records it: a repeated prompt comes back with `timings.cache_n`, and
the response's usage says how many prompt tokens were cached."""

from __future__ import annotations

import pytest

from tests.real_server.conftest import ANSWER, LlamaServer
from tests.real_server.test_wire import ask

pytestmark = pytest.mark.real_server


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_a_repeated_prompt_is_recorded_as_served_from_the_cache(llama_server: LlamaServer, stream: bool) -> None:
    ask(llama_server, ANSWER, stream=stream)
    again = ask(llama_server, ANSWER, stream=stream)  # the same messages: the slot still holds their tokens
    timings = again.server_timings
    assert timings is not None and again.error is None
    assert again.usage.cached_tokens == timings["cache_n"]
    assert again.usage.prompt_tokens is not None and 0 < timings["cache_n"] < again.usage.prompt_tokens
