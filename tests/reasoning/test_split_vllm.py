"""The splitter against vLLM's reasoning-parser tests (tests/reasoning in vllm-project/vllm).

Every case of test_deepseekr1_reasoning_parser.py and test_qwen3_reasoning_parser.py, with vLLM's expected
reasoning and content to the character. vLLM's None is qualeval's "" (a Completion always holds strings).
Both vLLM parsers assume the chat template opened the block (no tag at all means unfinished reasoning), which
is qualeval's `opened`; thinking disabled is `thinking=False`.

Streaming cases go through the live streaming path (SSE content deltas -> StreamState -> build_response ->
split_completion) and compare the final reasoning and content. qualeval splits the whole text once, so a
text has one answer however it was chunked; vLLM's stream and non-stream answers differ for one text, see
`test_new_line_follows_vllms_whole_answer_in_both_modes`.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from qualeval.errors import InputError
from qualeval.reasoning.completion import Completion
from qualeval.reasoning.formats import load_format, resolve_formats
from qualeval.reasoning.split import split_completion
from qualeval.wire.response import build_response
from qualeval.wire.stream import StreamState
from tests.conftest import ask

ALL = resolve_formats(None)

TOOL_CALL = "<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n</function>\n</tool_call>"
R = "This is a reasoning section"
REST = "This is the rest"
LINES, REST2 = "This\nThat", "This is the rest\nThat"
QLINES = "This is a reasoning\nsection"
FILE = "I need to read the file.\n\n"

# (vLLM test id, streaming, model output, expected reasoning, expected content)
DEEPSEEK_R1 = [
    ("simple_reasoning", False, f"{R}</think>{REST}", R, REST),
    ("simple_reasoning_streaming", True, f"{R}</think>{REST}", R, REST),
    ("complete_reasoning", False, f"{R}</think>", R, ""),
    ("complete_reasoning_streaming", True, f"{R}</think>", R, ""),
    ("no_content_token", False, "This is content", "This is content", ""),
    ("no_reasoning_token_streaming", True, R, R, ""),
    ("multiple_lines", False, f"{LINES}</think>{REST2}", LINES, REST2),
    ("multiple_lines_streaming", True, f"{LINES}</think>{REST2}", LINES, REST2),
    ("shortest", True, f"</think>{REST}", "", REST),
    ("shortest_streaming", False, f"</think>{REST}", "", REST),
    ("reasoning_with_think", False, f"<think>{R}</think>{REST}", R, REST),
    ("reasoning_with_think_streaming", True, f"<think>{R}</think>{REST}", R, REST),
    ("complete_reasoning_with_think", False, f"<think>{R}</think>", R, ""),
    ("complete_reasoning_with_think_streaming", True, f"<think>{R}</think>", R, ""),
    ("multiple_lines_with_think", False, f"<think>{LINES}</think>{REST2}", LINES, REST2),
    ("multiple_lines_with_think_streaming", True, f"<think>{LINES}</think>{REST2}", LINES, REST2),
    ("shortest_with_think", False, f"</think>{REST}", "", REST),
    ("shortest_with_think_streaming", True, f"</think>{REST}", "", REST),
    ("think_no_end", False, f"<think>{R}", R, ""),
    ("think_no_end_streaming", True, f"<think>{R}", R, ""),
    ("empty", False, "", "", ""),
    ("empty_streaming", True, "", "", ""),
    ("new_line", False, f"\n<think>{R}</think>\n{REST}", R, f"\n{REST}"),
    # vLLM's stream expects reasoning "\n" + R here: see the test at the end of this file
    ("new_line_streaming", True, f"\n<think>{R}</think>\n{REST}", R, f"\n{REST}"),
]

QWEN3 = [
    ("without_start_token", False, f"{R}</think>{REST}", R, REST),
    ("without_start_token_stream", True, f"{R}</think>{REST}", R, REST),
    ("without_start_token_complete_reasoning", False, f"{R}</think>", R, ""),
    ("without_start_token_complete_reasoning_stream", True, f"{R}</think>", R, ""),
    ("with_think", False, f"<think>{R}</think>{REST}", R, REST),
    ("with_think_stream", True, f"<think>{R}</think>{REST}", R, REST),
    ("without_think", False, REST, REST, ""),
    ("without_think_stream", True, REST, REST, ""),
    ("complete_reasoning", False, f"<think>{R}</think>", R, ""),
    ("complete_reasoning_stream", True, f"<think>{R}</think>", R, ""),
    ("multiline_reasoning", False, f"<think>{QLINES}</think>{REST2}", QLINES, REST2),
    ("multiline_reasoning_stream", True, f"<think>{QLINES}</think>{REST2}", QLINES, REST2),
    ("only_open_tag", False, f"<think>{R}", R, ""),
    ("only_open_tag_stream", True, f"<think>{R}", R, ""),
    ("truncated_no_start_token", False, R, R, ""),
    ("truncated_no_start_token_stream", True, R, R, ""),
    ("tool_call_no_think_end", False, FILE + TOOL_CALL, FILE, TOOL_CALL),
    ("tool_call_no_think_end_stream", True, FILE + TOOL_CALL, FILE, TOOL_CALL),
    ("tool_call_with_think_no_end", False, "<think>" + FILE + TOOL_CALL, FILE, TOOL_CALL),
    ("tool_call_with_think_no_end_stream", True, "<think>" + FILE + TOOL_CALL, FILE, TOOL_CALL),
]

# test_reasoning_streaming_multi_token_deltas: the deltas exactly as vLLM sends them
QWEN3_DELTAS = [
    ("start_token_grouped_with_text", [f"<think>{R}", "</think>", REST], R, REST),
    ("end_token_grouped_with_content", ["reasoning section", f"</think>{REST}"], "reasoning section", REST),
    ("start_and_end_in_one_delta_no_content", ["<think>reasoning</think>"], "reasoning", ""),
    ("no_start_end_grouped_with_content", ["reasoning section", "</think>content"], "reasoning section", "content"),
    (
        "tool_call_implicit_reasoning_end",
        [FILE, "<tool_call>\n<function=bash>"],
        FILE,
        "<tool_call>\n<function=bash>",
    ),
]

# test_reasoning_thinking_disabled (enable_thinking=False): everything is content
QWEN3_THINKING_OFF = [
    ("thinking_disabled_plain_content", "This is plain content"),
    ("thinking_disabled_no_think_tokens", "Some output without think tokens"),
    ("thinking_disabled_with_tool_call", FILE + TOOL_CALL),
]

TABLE = [
    pytest.param(streaming, output, reasoning, content, id=f"{parser}/{name}")
    for parser, cases in (("deepseek_r1", DEEPSEEK_R1), ("qwen3", QWEN3))
    for name, streaming, output, reasoning, content in cases
]


def whole(output: str, *, thinking: bool | None = None, opened: bool = True) -> Completion:
    return split_completion(
        content=output or None, field=None, finish_reason="stop", formats=ALL, thinking=thinking, opened=opened
    ).completion


def _sse(deltas: list[str]) -> bytes:
    events = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    events += [{"choices": [{"index": 0, "delta": {"content": d}}]} for d in deltas]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events) + b"data: [DONE]\n\n"


def streamed(deltas: list[str], *, thinking: bool | None = None, read: int | None = None) -> Completion:
    """The live streaming path: one SSE event per delta, read in pieces of `read` bytes (None: per event)."""
    data = _sse(deltas)
    reads = [data] if read is None else [data[i : i + read] for i in range(0, len(data), read)]
    state = StreamState()
    for i, piece in enumerate(reads):
        state.feed(piece, float(i))
    got = state.finish_attempt(0.0, 0.0, float(len(reads)))
    request = ask("q", thinking=thinking, stream=True)
    return build_response(request, got, ALL, opened=True, attempts=1, queued=None).completion


def tokens(text: str) -> list[str]:
    """Deltas shaped like a tokenizer's: tags whole, words, runs of whitespace, single punctuation."""
    return re.findall(r"</?think>|</?tool_call>|\s+|\w+|.", text)


@pytest.mark.parametrize(("streaming", "output", "reasoning", "content"), TABLE)
def test_vllm_case(streaming: bool, output: str, reasoning: str, content: str) -> None:
    if not streaming:
        got = whole(output)
        assert (got.reasoning, got.content) == (reasoning, content)
        return
    for deltas, read in ((tokens(output), None), (list(output), None), (tokens(output), 7)):
        got = streamed(deltas, read=read)
        assert (got.reasoning, got.content) == (reasoning, content), (deltas, read)


@pytest.mark.parametrize(("streaming", "output", "reasoning", "content"), [p for p in TABLE if "think>" in p.values[1]])
def test_tagged_cases_do_not_depend_on_the_opened_flag(
    streaming: bool, output: str, reasoning: str, content: str
) -> None:
    """Once a tag is in the text, the template flag changes nothing: whitespace included."""
    got = whole(output, opened=False)
    assert (got.reasoning, got.content) == (reasoning, content)


@pytest.mark.parametrize(
    ("deltas", "reasoning", "content"), [pytest.param(*rest, id=name) for name, *rest in QWEN3_DELTAS]
)
def test_vllm_multi_token_deltas(deltas: list[str], reasoning: str, content: str) -> None:
    got = streamed(deltas)
    assert (got.reasoning, got.content) == (reasoning, content)
    assert (got.reasoning, got.content) == (whole("".join(deltas)).reasoning, whole("".join(deltas)).content)


@pytest.mark.parametrize("output", [pytest.param(o, id=name) for name, o in QWEN3_THINKING_OFF])
def test_vllm_thinking_disabled(output: str) -> None:
    for got in (whole(output, thinking=False), streamed(tokens(output), thinking=False)):
        assert (got.reasoning, got.content, got.reasoning_source) == ("", output, "none")


def test_new_line_follows_vllms_whole_answer_in_both_modes() -> None:
    """vLLM: non-stream drops the "\\n" before <think>; its stream makes it reasoning, because "we cannot know
    if the text before <think> is reasoning content or not" until <think> arrives. qualeval sees the whole text,
    so both modes give the non-stream answer: the one case where the stream differs from vLLM's."""
    output = f"\n<think>{R}</think>\n{REST}"
    vllm_whole, vllm_stream = (R, f"\n{REST}"), (f"\n{R}", f"\n{REST}")
    for got in (whole(output), whole(output, opened=False), streamed(tokens(output))):
        assert (got.reasoning, got.content) == vllm_whole != vllm_stream


def test_tool_call_needs_a_function_after_it() -> None:
    # vLLM's lookahead: a <tool_call> mentioned in the thinking, not followed by <function, ends nothing
    got = whole("I could use <tool_call> here, but no.")
    assert (got.reasoning, got.content, got.reasoning_source) == (
        "I could use <tool_call> here, but no.",
        "",
        "inline:unclosed",
    )
    got = whole("<think>plan\n<tool_call> <function name='x'>")
    assert (got.reasoning, got.content, got.reasoning_closed) == ("plan\n", "<tool_call> <function name='x'>", True)


def test_a_closing_tag_wins_over_a_tool_call() -> None:
    # vLLM partitions on </think> first whenever it is present
    got = whole(f"plan <tool_call>\n<function=f></tool_call></think>{REST}")
    assert (got.reasoning, got.content) == ("plan <tool_call>\n<function=f></tool_call>", REST)


def test_tool_call_outside_an_open_block_is_plain_content() -> None:
    got = whole("Calling.\n" + TOOL_CALL, opened=False)
    assert (got.reasoning, got.content) == ("", "Calling.\n" + TOOL_CALL)


@pytest.mark.parametrize(
    ("pattern", "words"), [("'<a>('", "not a valid regular expression"), ("'x*'", "must not match empty text")]
)
def test_bad_implicit_end_names_the_field(tmp_path: Path, pattern: str, words: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: x\nstart: '<a>'\nend: '</a>'\nimplicit_end: {pattern}\n")
    with pytest.raises(InputError, match=f"field 'implicit_end': .*{words}"):
        load_format(path)
