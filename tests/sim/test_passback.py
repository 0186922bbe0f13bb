"""What each reference-server flavour takes in from an earlier assistant turn: the reasoning under the one field its
real server reads (vLLM >= 0.16: `reasoning`; llama.cpp, SGLang, DeepSeek: `reasoning_content`), inline `<think>`
as content always; usage.prompt_tokens counts what it took in and nothing it dropped."""

from __future__ import annotations

import pytest

from qualeval.sim import FLAVOURS, consumed_reasoning
from qualeval.sim.flavours.llamacpp import render
from qualeval.wire import Message
from tests.conftest import ask, chat, fast_sim, sim_url

THOUGHT = "first I check the city, then I call the tool and read the sky"


def _assistant(**fields: object) -> dict[str, object]:
    return {"role": "assistant", "content": "It is cloudy.", **fields}


@pytest.mark.parametrize(
    ("flavour", "reads"),
    [("vllm", "reasoning"), ("vllm-0.10", None), ("llamacpp", "reasoning_content"), ("sglang", "reasoning_content")],
)
def test_each_flavour_consumes_only_the_field_its_server_reads(flavour: str, reads: str | None) -> None:
    both = _assistant(reasoning="R", reasoning_content="RC")
    assert consumed_reasoning(both, FLAVOURS[flavour]) == {"reasoning": "R", "reasoning_content": "RC", None: ""}[reads]
    assert consumed_reasoning({"role": "user", "reasoning_content": "x"}, FLAVOURS[flavour]) == ""


def _prompt_tokens(flavour: str, assistant: Message) -> int | None:
    messages = (Message(role="user", content="Weather in Paris?"), assistant, Message(role="user", content="Coat?"))
    with sim_url(fast_sim(flavour)) as url:
        resp = chat(url, ask("x", max_tokens=4, stream=False).model_copy(update={"messages": messages}))
    assert resp.error is None, resp.error
    return resp.usage.prompt_tokens


@pytest.mark.parametrize(("flavour", "read", "dropped"), [("vllm", "reasoning", "reasoning_content")])
def test_prompt_tokens_count_the_field_read_and_not_the_one_dropped(flavour: str, read: str, dropped: str) -> None:
    bare = _prompt_tokens(flavour, Message(role="assistant", content="Cloudy."))
    taken = _prompt_tokens(flavour, Message(role="assistant", content="Cloudy.", **{read: THOUGHT}))
    left = _prompt_tokens(flavour, Message(role="assistant", content="Cloudy.", **{dropped: THOUGHT}))
    inline = _prompt_tokens(flavour, Message(role="assistant", content=f"<think>{THOUGHT}</think>Cloudy."))
    assert bare is not None and taken is not None and inline is not None
    assert left == bare < taken
    assert inline > bare  # inline <think> is content


def test_llamacpp_writes_reasoning_content_back_into_its_prompt_and_not_reasoning() -> None:
    prompt = render([{"role": "user", "content": "Q"}, _assistant(reasoning_content=THOUGHT), {"role": "user"}])
    assert f"<think>\n{THOUGHT}\n</think>\n\nIt is cloudy." in prompt
    assert THOUGHT not in render([{"role": "user", "content": "Q"}, _assistant(reasoning=THOUGHT)])
    with sim_url(fast_sim("llamacpp")) as url:
        counts = [
            chat(url, ask("x", max_tokens=4, stream=False).model_copy(update={"messages": m})).usage.prompt_tokens
            for m in (
                (Message(role="user", content="Q"), Message(role="assistant", content="A", reasoning=THOUGHT)),
                (Message(role="user", content="Q"), Message(role="assistant", content="A", reasoning_content=THOUGHT)),
            )
        ]
    assert counts[0] is not None and counts[1] is not None and counts[1] > counts[0]


def test_the_template_props_shows_writes_the_reasoning_and_calls_back_as_the_server_does() -> None:
    jinja2 = pytest.importorskip("jinja2")
    import json

    from qualeval.sim.flavours.llamacpp_props import TEMPLATE

    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    messages = [
        {"role": "user", "content": "Weather?"},
        _assistant(reasoning_content=THOUGHT, tool_calls=[call]),
        {"role": "tool", "content": "cloudy"},
        {"role": "user", "content": "Coat?"},
    ]
    env = jinja2.Environment()
    env.filters["tojson"] = json.dumps
    shown = env.from_string(TEMPLATE).render(messages=messages, add_generation_prompt=True)
    assert shown == render(messages) and THOUGHT in shown and "get_weather" in shown
