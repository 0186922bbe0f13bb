"""The reference server's multi-turn episodes: keyed with BFCL-style ground truth, it serves each turn's calls one a
step, in order, from the history alone, then text; and it rehearses what goes wrong between turns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from qualeval.errors import InputError
from qualeval.sim import Behaviour
from qualeval.sim.answerkey import KeyedCall
from qualeval.sim.episodekey import EpisodeKey, episode_entries, position
from qualeval.sim.groundtruth import read_call
from tests.conftest import fast_sim, sim_url
from tests.sim.episode_client import walk


def _tool(name: str, *params: str) -> dict[str, Any]:
    props = {p: {"type": "string"} for p in params}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


CD, MKDIR, MV, SORT = (
    _tool("cd", "folder"),
    _tool("mkdir", "dir_name"),
    _tool("mv", "source", "destination"),
    _tool("sort", "file_name"),
)
PROMPTS = (
    "Go into the 'notes' folder, make a folder 'old' there and move 'a.txt' into it.",
    "Now sort 'b.txt' for me.",
    "What did you do?",
)
EXPECTED = (
    ("cd(folder='notes')", "mkdir(dir_name='old')", "mv(source='a.txt', destination='old')"),
    ("sort('b.txt')",),  # positional, as BFCL writes some calls
    (),
)
HELD_BACK = "I have updated some more functions you can choose from. What about now?"


@dataclass(frozen=True)
class Spec:
    """The fields of records.EpisodeSpec the server reads."""

    turns: tuple[tuple[dict[str, str], ...], ...]
    tools: tuple[dict[str, Any], ...]
    expected: tuple[tuple[str, ...], ...]
    added: dict[int, tuple[dict[str, Any], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Item:
    episode: Spec


def _turns(*prompts: str) -> tuple[tuple[dict[str, str], ...], ...]:
    return tuple(({"role": "user", "content": p},) for p in prompts)


BASE = Item(Spec(_turns(*PROMPTS), (CD, MKDIR, MV, SORT), EXPECTED))
# miss_func: `sort` held back until turn 2, whose prompt is the loop's; turn 1 cannot be done without it
MISS_FUNC = Item(
    Spec(
        _turns(PROMPTS[0], PROMPTS[1], HELD_BACK),
        (CD, MKDIR, MV),
        (EXPECTED[0], (), ("sort('b.txt')",)),
        {2: (SORT,)},
    )
)
WANTED = [
    [("cd", {"folder": "notes"}), ("mkdir", {"dir_name": "old"}), ("mv", {"source": "a.txt", "destination": "old"})],
    [("sort", {"file_name": "b.txt"})],
    [],
]


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    key = EpisodeKey(episode_entries([BASE, MISS_FUNC]))
    monkeypatch.setattr("qualeval.sim.state.answer_keys", lambda config: (None, key))


def _server(**kw: Any) -> Any:
    return sim_url(fast_sim(kw.pop("flavour", "vllm"), behaviour=Behaviour(accuracy=1.0, reasoning_tokens=12), **kw))


def _base_tools(turn: int) -> list[dict[str, Any]]:
    return list(BASE.episode.tools)


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize(
    ("flavour", "stream"), [("vllm", False), ("vllm", True), ("llamacpp", False), ("llamacpp", True)]
)
def test_a_client_replaying_the_served_calls_walks_the_whole_episode_in_order(flavour: str, stream: bool) -> None:
    with _server(flavour=flavour) as url:
        got = walk(url, PROMPTS, _base_tools, stream=stream)
    assert got.calls == [[[call] for call in turn] for turn in WANTED]  # one call a step, in order
    assert len(got.texts) == 3 and got.texts[0].strip().startswith("Done: cd, mkdir, mv")
    assert len(set(got.ids)) == len(got.ids) == 4 and all(got.ids)
    assert got.finishes.count("tool_calls") == 4 and got.finishes.count("stop") == 3


@pytest.mark.usefixtures("keyed")
def test_calls_at_once_serves_a_turns_calls_in_its_first_step() -> None:
    with _server(calls_at_once=True) as url:
        got = walk(url, PROMPTS, _base_tools)
    assert got.calls == [[WANTED[0]], [WANTED[1]], []]
    assert got.flat() == WANTED


@pytest.mark.usefixtures("keyed")
def test_a_held_back_function_is_called_at_the_turn_it_is_added() -> None:
    def tools(turn: int) -> list[dict[str, Any]]:
        return [CD, MKDIR, MV, *([SORT] if turn >= 2 else [])]

    with _server() as url:
        got = walk(url, [PROMPTS[0], PROMPTS[1], HELD_BACK], tools)
    assert got.flat() == [WANTED[0], [], WANTED[1]]
    assert "cannot" in got.texts[1]


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize("stream", [False, True])
def test_needs_reasoning_makes_turns_after_the_first_wrong_only_when_the_reasoning_is_not_handed_back(
    stream: bool,
) -> None:
    with _server(faults={"needs_reasoning": 1.0}) as url:
        kept = walk(url, PROMPTS, _base_tools, stream=stream, passback="reasoning")
        dropped = walk(url, PROMPTS, _base_tools, stream=stream, passback=None)
    assert kept.flat() == WANTED
    assert dropped.flat()[0] == WANTED[0]  # turn 0 has no earlier reasoning to miss
    assert dropped.flat()[1] != WANTED[1] and [c[0] for c in dropped.flat()[1]] == ["sort"]  # a wrong argument
    with _server() as url:  # without the fault, the reasoning handed back changes nothing
        assert walk(url, PROMPTS, _base_tools, stream=stream, passback=None).flat() == WANTED


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize(
    ("flavour", "field", "harmed"),
    [
        ("vllm", "reasoning", False),
        ("vllm", "reasoning_content", True),  # vLLM >= 0.16 drops it without a word (vLLM #38488)
        ("sglang", "reasoning_content", False),
        ("sglang", "reasoning", True),
        ("llamacpp", "reasoning_content", False),
        ("openai", "reasoning", True),  # its reasoning is never shown, so nothing can go back
        ("inline-think", None, False),  # the reasoning is in the content, which goes back as it came
        ("harmony", None, False),
    ],
)
def test_reasoning_counts_as_handed_back_only_under_the_field_the_flavours_server_reads(
    flavour: str, field: str | None, harmed: bool
) -> None:
    with _server(flavour=flavour, faults={"needs_reasoning": 1.0}) as url:
        got = walk(url, PROMPTS, _base_tools, passback=field)
    assert (got.flat()[1] != WANTED[1]) is harmed and got.flat()[0] == WANTED[0]


@pytest.mark.usefixtures("keyed")
def test_needs_reasoning_by_header_and_reasoning_not_its_own_is_not_its_reasoning() -> None:
    header = {"x-qualeval-sim": "fault=needs_reasoning"}
    with _server() as url:
        assert walk(url, PROMPTS, _base_tools, passback=None, headers=header).flat()[1] != WANTED[1]
        assert walk(url, PROMPTS, _base_tools, headers=header).flat() == WANTED
        # reasoning handed back inline, as `<think>` in the content, is read too
        inline = walk(url, PROMPTS, _base_tools, passback=None, headers=header, inline=True)
    assert inline.flat() == WANTED


@pytest.mark.usefixtures("keyed")
def test_a_server_that_ignores_tool_results_has_the_model_repeat_its_call_to_the_step_limit() -> None:
    with _server(faults={"tool_result_ignored": 1.0}) as url:
        got = walk(url, PROMPTS[:1], _base_tools, max_steps=5)
    assert got.calls == [[[WANTED[0][0]]] * 5] and got.texts == []  # cd five times: the loop's limit ends it
    with _server() as url:
        assert walk(url, PROMPTS[:1], _base_tools, max_steps=5).flat() == [WANTED[0]]


@pytest.mark.usefixtures("keyed")
def test_accuracy_makes_a_turn_wrong_in_one_call_the_same_at_every_step() -> None:
    with sim_url(fast_sim(behaviour=Behaviour(accuracy=0.0, reasoning_tokens=12))) as url:
        got = walk(url, PROMPTS, _base_tools)
    first = got.flat()[0]
    assert [c[0] for c in first] == ["cd", "mkdir", "mv"] and first != WANTED[0]
    assert sum(a != b for a, b in zip(first, WANTED[0], strict=True)) == 1


def test_ground_truth_is_read_as_literals_and_positional_arguments_by_the_schemas_order() -> None:
    order = {"mv": ("source", "destination")}
    assert read_call("mv('a', destination='b')", order) == KeyedCall("mv", {"source": "a", "destination": "b"})
    assert read_call("f(x=[1, 2], y={'k': None})", {}) == KeyedCall("f", {"x": [1, 2], "y": {"k": None}})
    for bad in ("__import__('os').system('true')", "f(x=open('p'))", "f(**k)", "not a call", "f(x=1"):
        with pytest.raises(InputError, match="ground truth"):
            read_call(bad, order)


def test_the_position_is_read_from_the_history() -> None:
    history = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "tool", "content": "r"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": ""},
    ]
    where = position(history)
    assert where is not None and (where.turn, where.step, where.prompts) == (1, 1, ("a", "b"))
    assert [(t, s) for t, s, _ in where.earlier] == [(0, 0), (0, 1), (1, 0)]


@pytest.mark.usefixtures("keyed")
def test_a_tool_fault_breaks_an_episodes_calls_as_it_breaks_a_single_turns() -> None:
    with _server() as url:
        broken = walk(url, PROMPTS, _base_tools, headers={"x-qualeval-sim": "fault=stop_with_calls"})
        clean = walk(url, PROMPTS, _base_tools)
    assert broken.flat() == clean.flat() == WANTED
    assert set(broken.finishes) == {"stop"} and "tool_calls" in clean.finishes


@pytest.mark.usefixtures("keyed")
def test_ignored_tool_results_with_calls_at_once_repeat_the_whole_turn() -> None:
    with _server(calls_at_once=True, faults={"tool_result_ignored": 1.0}) as url:
        got = walk(url, PROMPTS[:1], _base_tools, max_steps=3)
    assert got.calls == [[WANTED[0]] * 3]
