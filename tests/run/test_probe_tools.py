"""tool_choice contracts in the probe: each held or broken, per thinking setting and effort; a refusal is a broken
contract, an empty reply no verdict; the CLI's lines; what a run makes of a broken one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from qualeval.cli.views import print_probe
from qualeval.errors import QualevalWarning
from qualeval.reasoning import split_completion
from qualeval.records import ClientConfig, Manifest, ProbeResult, RunConfig, ToolCall, ToolContract
from qualeval.run import driver
from qualeval.run.probetools import PROBE_TOOL, broken_for, check_tools, probe_tools, tool_tasks, working_switch
from qualeval.wire import ChatClient, ChatRequest, ChatResponse, failed_response

CALL = ToolCall(name="get_weather", arguments='{"city": "Paris"}', id="c1")
Reply = Callable[[ChatRequest], ChatResponse]


def answered(
    content: str = "", calls: tuple[ToolCall, ...] = (), finish: str = "stop", thought: str = ""
) -> ChatResponse:
    field = ("reasoning_content", thought) if thought else None
    done = split_completion(content=content, field=field, finish_reason=finish, formats=())
    return ChatResponse(
        completion=done.completion, raw_content=content, tool_calls=calls, finish_reason=finish, http_status=200
    )


def honest(request: ChatRequest) -> ChatResponse:
    """A server that keeps every contract (named calls end `stop`, as OpenAI's API does)."""
    if request.tool_choice == "none":
        return answered("I cannot check the weather.")
    if isinstance(request.tool_choice, dict):
        return answered(calls=(CALL,), finish="stop")
    return answered(calls=(CALL,), finish="tool_calls")


def ignoring(request: ChatRequest) -> ChatResponse:
    """A server that ignores tool_choice: prose whatever is asked, except a call under `none`."""
    if request.tool_choice == "none":
        return answered(calls=(CALL,), finish="tool_calls")
    return answered("It is sunny in Paris.")


class FakeSender:
    """A ChatSender answering each request with `reply`, keeping every request it got."""

    def __init__(self, reply: Reply) -> None:
        self.config = ClientConfig(base_url="http://127.0.0.1:9/v1", api_key=None)
        self.reply = reply
        self.sent: list[ChatRequest] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.sent.append(request)
        return self.reply(request)


def checked(reply: Reply, **options: Any) -> tuple[list[ToolContract], FakeSender]:
    sender = FakeSender(reply)
    options.setdefault("switch", None)
    found = asyncio.run(probe_tools(sender, "m", seconds=30, **options))
    return found, sender


def verdicts(found: list[ToolContract]) -> dict[tuple[str, bool | None, str | None], bool | None]:
    return {(c.contract, c.thinking, c.effort): c.held for c in found}


def test_a_server_that_keeps_every_contract_holds_them_all_and_auto_says_what_it_did() -> None:
    found, sender = checked(honest)
    assert verdicts(found) == {(k, None, None): True for k in ("auto", "required", "none", "named")}
    auto = next(c for c in found if c.contract == "auto")
    assert auto.seen == 'called get_weather({"city": "Paris"}); finish_reason tool_calls'
    # non-streamed, temperature 0, the one probe tool, each tool_choice as the API names it
    assert all(not r.stream and r.temperature == 0 and r.tools == (PROBE_TOOL,) for r in sender.sent)
    choices = [r.tool_choice for r in sender.sent]
    assert choices == ["auto", "required", "none", {"type": "function", "function": {"name": "get_weather"}}]


def test_a_server_that_ignores_tool_choice_breaks_required_none_and_named_but_never_auto() -> None:
    found, _ = checked(ignoring)
    assert verdicts(found) == {
        ("auto", None, None): True,
        ("required", None, None): False,
        ("none", None, None): False,
        ("named", None, None): False,
    }
    required = next(c for c in found if c.contract == "required")
    assert required.seen == "no call, answered 'It is sunny in Paris.'; finish_reason stop"


def test_required_needs_the_tool_calls_finish_reason_and_named_the_named_function() -> None:
    def sloppy(request: ChatRequest) -> ChatResponse:
        if isinstance(request.tool_choice, dict):
            return answered(calls=(ToolCall(name="get_time", arguments="{}"),), finish="tool_calls")
        return answered(calls=(CALL,), finish="stop")  # a call ending `stop`: required broken

    held = verdicts(checked(sloppy)[0])
    assert (held[("required", None, None)], held[("named", None, None)], held[("none", None, None)]) == (False,) * 3


def test_each_contract_is_checked_with_thinking_on_and_off_through_the_working_switch() -> None:
    """The call absorbed into the reasoning with thinking on (vLLM #39056's shape): broken there only."""

    def absorbing(request: ChatRequest) -> ChatResponse:
        on = request.extra_body.get("chat_template_kwargs") == {"enable_thinking": True}
        if on and request.tool_choice != "none":
            return answered(thought="<tool_call>get_weather Paris</tool_call>", finish="stop")
        return honest(request)

    found, sender = checked(absorbing, switch="chat_template_kwargs")
    held = verdicts(found)
    assert held[("required", True, None)] is False and held[("required", False, None)] is True
    assert held[("named", True, None)] is False and held[("named", False, None)] is True
    assert held[("auto", True, None)] is True and held[("none", True, None)] is True
    switches = {str(r.extra_body) for r in sender.sent}
    assert switches == {str({"chat_template_kwargs": {"enable_thinking": v}}) for v in (True, False)}


def test_each_effort_the_run_sweeps_is_checked_with_thinking_on_only() -> None:
    """Calls dropped as the effort rises (the issue's gateway at `high`)."""

    def dropping(request: ChatRequest) -> ChatResponse:
        if request.reasoning_effort == "high" and request.tool_choice != "none":
            return answered("Let me think about the weather in Paris.", finish="stop")
        return honest(request)

    found, _ = checked(dropping, switch="chat_template_kwargs", efforts=["low", "high"])
    held = verdicts(found)
    assert {(t, e) for _, t, e in held} == {(True, "low"), (True, "high"), (False, None)}
    assert held[("required", True, "high")] is False and held[("required", True, "low")] is True
    assert held[("required", False, None)] is True
    assert [c.where() for c in found if c.held is False] == ["thinking on, effort high"] * 2


def test_a_refused_tool_choice_is_a_broken_contract_saying_so() -> None:
    def refusing(request: ChatRequest) -> ChatResponse:
        if request.tool_choice in ("auto", "none"):
            return honest(request)
        return failed_response(request, 1, 400, 'HTTP 400: {"error": "tool_choice not supported"}')

    found, _ = checked(refusing)
    held = verdicts(found)
    assert (held[("required", None, None)], held[("named", None, None)], held[("auto", None, None)]) == (
        False,
        False,
        True,
    )
    assert all("refused: HTTP 400" in c.seen and "tool_choice not supported" in c.seen for c in found if not c.held)


def test_a_server_error_is_no_verdict_not_a_broken_contract() -> None:
    found, _ = checked(lambda r: failed_response(r, 3, 503, "HTTP 503: overloaded"))
    assert {c.held for c in found} == {None}


def test_an_empty_reply_is_asked_again_with_the_next_seed_and_never_decides() -> None:
    def sometimes(request: ChatRequest) -> ChatResponse:
        return answered() if request.seed == 1234 else ignoring(request)

    found, sender = checked(sometimes)
    assert verdicts(found)[("required", None, None)] is False  # decided by the reply that said something
    assert sorted({r.seed for r in sender.sent}) == [1234, 1235]
    silent, _ = checked(lambda r: answered())
    assert {c.held for c in silent} == {None}
    assert all(c.seen == "no verdict: no reply said anything in 4 tries" for c in silent)


def test_a_reply_cut_off_while_thinking_is_no_verdict_but_prose_cut_off_breaks_required() -> None:
    thinking, _ = checked(lambda r: answered(thought="Let me see", finish="length"))
    assert {c.held for c in thinking} == {None}
    prose, _ = checked(lambda r: answered("The weather in Paris is", finish="length"))
    assert verdicts(prose)[("required", None, None)] is False  # Qwen2.5's template on llama.cpp, as the issue saw


def _result(contracts: list[ToolContract] | None) -> ProbeResult:
    return ProbeResult(base_url="http://x/v1", model="m", simulated=False, tool_contracts=contracts)


def test_the_cli_prints_one_line_per_broken_contract(capsys: pytest.CaptureFixture[str]) -> None:
    found, _ = checked(ignoring, switch="chat_template_kwargs")
    print_probe(_result(found))
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("broken: ")]
    assert len(lines) == 6  # required, none, named; thinking on and off
    assert "broken: tool_choice required (thinking off, effort none): no call, answered 'It is sunny in Paris.'; " \
        "finish_reason stop" in lines  # fmt: skip
    assert any(line.startswith("broken: tool_choice function get_weather (thinking on, effort none)") for line in lines)
    print_probe(_result(None))
    out = capsys.readouterr().out
    assert "broken: " not in out and "not checked (--tools)" in out


def test_a_run_names_each_tool_task_whose_contract_broke() -> None:
    found, _ = checked(ignoring, switch="chat_template_kwargs")
    named = {"type": "function", "function": {"name": "get_weather"}}
    lines = broken_for({"weather": ["required"], "chat": ["auto", None], "pick": [named, named]}, _result(found))
    assert [line.split(" (", 1)[0] for line in lines] == [
        "weather: tool_choice required is broken on this server",
        "pick: tool_choice named is broken on this server",
    ]
    assert "thinking on, effort none: no call" in lines[0] and "thinking off" in lines[0]
    assert broken_for({"weather": ["required"]}, _result(None)) == []  # not checked is never broken
    assert broken_for({"weather": ["required"]}, None) == []


def test_the_run_uses_the_first_switch_the_probe_saw_work() -> None:
    found = _result(None)
    found.thinking_switch = {"chat_template_kwargs": "ignored (still reasons)", "reasoning_effort": "works"}
    assert working_switch(found) == "reasoning_effort"
    assert working_switch(_result(None)) is None and working_switch(None) is None


def test_tool_tasks_are_those_whose_items_offer_tools() -> None:
    from qualeval.tasks import build_samples, load_task

    task = load_task("knowledge_qa")
    plain = build_samples(task, limit=2)
    tooled = [s.model_copy(update={"tools": (PROBE_TOOL,), "tool_choice": "required"}) for s in plain]
    assert tool_tasks([(task, plain)]) == {}
    assert tool_tasks([(task, [*plain, *tooled])]) == {"knowledge_qa": ["required", "required"]}


def _fake_endpoint(monkeypatch: pytest.MonkeyPatch, sent: list[ChatRequest]) -> None:
    """A server that reasons, obeys chat_template_kwargs, and ignores tool_choice."""

    async def chat(self: ChatClient, request: ChatRequest) -> ChatResponse:
        sent.append(request)
        if request.tools:
            return ignoring(request)
        off = request.extra_body.get("chat_template_kwargs") == {"enable_thinking": False}
        return answered("Paris", thought="" if off else "The capital is Paris.")

    async def listing(self: ChatClient) -> dict[str, Any]:
        return {"data": [{"id": "m"}]}

    monkeypatch.setattr(ChatClient, "chat", chat)
    monkeypatch.setattr(ChatClient, "models", listing)


def _probed(config: RunConfig, tools: bool) -> ProbeResult:
    async def go() -> ProbeResult:
        async with ChatClient(ClientConfig(base_url=config.base_url, api_key=None, concurrency=32)) as client:
            return (await driver._probed(client, config, tools))[0]

    return asyncio.run(go())


def test_a_run_with_a_tool_task_probes_the_contracts_per_effort_and_a_plain_one_sends_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sent: list[ChatRequest] = []
    _fake_endpoint(monkeypatch, sent)
    url = "http://127.0.0.1:9/v1"
    config = RunConfig(base_url=url, model="m", tasks=["knowledge_qa"], out=tmp_path, reasoning_effort=["low", "high"])
    plain = _probed(config, tools=False)
    assert plain.tool_contracts is None and not [r for r in sent if r.tools]  # as fast as before: none sent
    found = _probed(config, tools=True)
    assert found.tool_contracts is not None
    assert {(c.thinking, c.effort) for c in found.tool_contracts} == {(True, "low"), (True, "high"), (False, None)}
    assert {c.contract for c in found.broken()} == {"required", "none", "named"}
    # kept in the manifest's probe, as JSON, and read back the same
    assert ProbeResult.model_validate_json(found.model_dump_json()).tool_contracts == found.tool_contracts


def test_a_contract_left_without_a_verdict_is_named_among_the_probes_inconclusive_checks() -> None:
    found = _result(None)
    found.thinking_switch = {"chat_template_kwargs": "works"}
    asyncio.run(check_tools(FakeSender(lambda r: answered()), "m", found, seconds=30))
    assert found.tool_contracts is not None and {c.held for c in found.tool_contracts} == {None}
    # the eight (four contracts, thinking on and off) share one reason: one entry that names each and says why
    [entry] = found.inconclusive
    assert entry.startswith("tool_choice ") and entry.count("(thinking") == 8
    assert "required (thinking off, effort none)" in entry and entry.endswith(found.tool_contracts[0].seen[12:])


def test_a_run_whose_tool_task_asks_for_a_broken_contract_warns_once_and_its_report_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sent: list[ChatRequest] = []
    _fake_endpoint(monkeypatch, sent)
    plain = driver.load_run_tasks

    def tooled(config: RunConfig) -> list[tuple[Any, list[Any]]]:
        offered = {"tools": (PROBE_TOOL,), "tool_choice": "required"}
        return [(task, [s.model_copy(update=offered) for s in samples]) for task, samples in plain(config)]

    monkeypatch.setattr(driver, "load_run_tasks", tooled)
    out = tmp_path / "run"
    config = RunConfig(base_url="http://127.0.0.1:9/v1", model="m", tasks=["knowledge_qa"], out=out, limit=2)
    with pytest.warns(QualevalWarning) as caught:
        summary = asyncio.run(driver.execute(config))
    told = [str(w.message) for w in caught if "tool_choice" in str(w.message)]
    assert len(told) == 1 and told[0].startswith("knowledge_qa: tool_choice required is broken on this server (")
    assert told == [n for n in summary.notes if "tool_choice" in n]  # the reports' header says it first
    kept = Manifest.model_validate_json((out / "manifest.json").read_text())
    assert kept.server is not None and kept.server.probe is not None
    assert {c.contract for c in kept.server.probe.broken()} == {"required", "none", "named"}


def test_required_ending_tool_calls_with_an_empty_list_is_broken() -> None:
    """Gemma 4 with `tool_choice: "required"` on vLLM (#53363): `finish_reason: "tool_calls"`, `"tool_calls": []`."""
    found, _ = checked(lambda r: answered("get_weather Paris", finish="tool_calls"))
    required = next(c for c in found if c.contract == "required")
    assert required.held is False and required.seen.endswith("finish_reason tool_calls")


def test_a_reference_servers_refusal_of_an_unknown_question_decides_no_contract() -> None:
    """serve-sim keyed with a task answers the probe's question with its own refusal (marked UNKNOWN_QUESTION):
    prose with finish `stop`, which would read as `required` and the named function broken."""

    def refusing(request: ChatRequest) -> ChatResponse:
        return answered("I do not have this question in my answer key.").model_copy(update={"unknown_question": True})

    found, _ = checked(refusing)
    assert {c.held for c in found} == {None}
    assert all("answer key" in c.seen for c in found)
