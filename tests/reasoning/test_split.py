"""The reasoning splitter: field priority, inline formats, thinking off, stops and statuses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qualeval.reasoning.formats import resolve_formats
from qualeval.reasoning.split import apply_stops, completion_status, pick_reasoning, split_completion, split_inline

ALL = resolve_formats(None)
THINK = resolve_formats("think")


# The table of wire-formats.md §1.5: output text -> (reasoning, content) under current vLLM semantics.
@pytest.mark.parametrize(
    ("text", "opened", "reasoning", "content", "source", "closed"),
    [
        ("<think>\nA</think>\n\nB", False, "\nA", "\n\nB", "inline:paired", True),
        ("A</think>\n\nB", False, "A", "\n\nB", "inline:close-only", True),
        ("<think>\nA", False, "\nA", "", "inline:unclosed", False),
        ("A", True, "A", "", "inline:unclosed", False),
        ("A", False, "", "A", "none", False),
        ("B", False, "", "B", "none", False),
        ("", True, "", "", "none", False),
        ("[THINK]plan[/THINK]42", False, "plan", "42", "inline:paired", True),
        ("plan[/THINK]42", False, "plan", "42", "inline:close-only", True),
        (
            "<|START_THINKING|>hm<|END_THINKING|><|START_RESPONSE|>Paris<|END_RESPONSE|>",
            False,
            "hm",
            "Paris",
            "inline:paired",
            True,
        ),
    ],
)
def test_inline_semantics(text: str, opened: bool, reasoning: str, content: str, source: str, closed: bool) -> None:
    got = split_inline(text, ALL, opened=opened)
    assert (got.reasoning, got.content, got.source, got.closed) == (reasoning, content, source, closed)


def test_harmony_channels_split_and_markers_dropped() -> None:
    text = (
        "<|channel|>analysis<|message|>User asks 2+2. 3 is wrong.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>4<|return|>"
    )
    got = split_inline(text, ALL)
    assert (got.reasoning, got.content, got.source, got.closed) == (
        "User asks 2+2. 3 is wrong.",
        "4",
        "channel:harmony",
        True,
    )
    assert text[got.content_at] == "4"


def test_harmony_final_channel_only() -> None:
    got = split_inline("<|channel|>final<|message|>Paris<|return|>", ALL)
    assert (got.reasoning, got.content) == ("", "Paris")


def test_harmony_unclosed_analysis_is_truncated_reasoning() -> None:
    got = split_inline("<|channel|>analysis<|message|>Let me think about 7 and", ALL)
    assert (got.reasoning, got.content, got.closed) == ("Let me think about 7 and", "", False)


def test_text_before_an_opening_tag_is_kept_as_content() -> None:
    got = split_inline("Sure. <think>r</think>answer", THINK)
    assert (got.reasoning, got.content) == ("r", "Sure. answer")


def test_only_the_first_closing_tag_splits() -> None:
    # matches vLLM's str.partition: a second tag stays in the answer, visible to the user
    got = split_inline("a</think>b</think>c", THINK)
    assert (got.reasoning, got.content) == ("a", "b</think>c")


def test_opened_template_with_reemitted_opening_tag() -> None:
    got = split_inline("<think>x</think>y", THINK, opened=True)
    assert (got.reasoning, got.content, got.source) == ("x", "y", "inline:paired")


def test_positions_point_at_first_characters() -> None:
    text = "<think>\nA</think>\n\nB"
    got = split_inline(text, THINK)
    assert text[got.reasoning_at :].startswith(got.reasoning)
    assert text[got.content_at :].startswith(got.content)


def test_field_priority_never_concatenates() -> None:
    both = {"reasoning": "same", "reasoning_content": "same", "reasoning_details": [{"text": "same"}]}
    assert pick_reasoning(both) == ("reasoning", "same")
    assert pick_reasoning({"reasoning": "", "reasoning_content": "old"}) == ("reasoning_content", "old")
    assert pick_reasoning({"reasoning": None, "reasoning_content": None}) is None
    details = {"reasoning_details": [{"type": "reasoning.text", "text": "a"}, {"summary": "b"}, {"x": 1}]}
    assert pick_reasoning(details) == ("reasoning_details", "ab")
    assert pick_reasoning({"reasoning_details": [{"type": "reasoning.encrypted", "data": "zz"}]}) is None


def test_leaked_tag_in_content_beside_a_field() -> None:
    # llama.cpp #28182: leftover reasoning and a literal </think> in content while the field has the rest
    got = split_completion(
        content="tail of thought</think>\n\n42",
        field=("reasoning_content", "head "),
        finish_reason="stop",
        formats=THINK,
    ).completion
    assert (got.reasoning, got.content.strip(), got.reasoning_source) == (
        "head tail of thought",
        "42",
        "field:reasoning_content",
    )


def test_opened_template_does_not_swallow_answer_when_a_field_had_reasoning() -> None:
    got = split_completion(
        content="Paris", field=("reasoning", "thinking"), finish_reason="stop", formats=THINK, opened=True
    ).completion
    assert (got.reasoning, got.content, got.status) == ("thinking", "Paris", "ok")


def test_thinking_off_makes_everything_content() -> None:
    got = split_completion(
        content="<think>x</think>y", field=None, finish_reason="stop", formats=THINK, thinking=False
    ).completion
    assert (got.reasoning, got.content) == ("", "<think>x</think>y")


@pytest.mark.parametrize(
    ("text", "reasoning", "content"),
    [
        ('<|channel|>final<|message|>{"answer":23}<|return|>', "", '{"answer":23}'),
        ("<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>B", "hm", "B"),
    ],
)
def test_thinking_off_still_reads_harmony_channels(text: str, reasoning: str, content: str) -> None:
    """gpt-oss frames every answer in channels, thinking or not: a follow-up (sent thinking off) that replied
    `<|channel|>final<|message|>{"answer":23}` answered `{"answer":23}`, which a constraint holds."""
    got = split_completion(content=text, field=None, finish_reason="stop", formats=ALL, thinking=False).completion
    assert (got.reasoning, got.content, got.status) == (reasoning, content, "ok")


def test_thinking_off_answer_in_reasoning_field_is_moved_to_content() -> None:
    # vLLM deepseek_r1 <= 0.16 with enable_thinking false: content null, the answer in `reasoning`
    got = split_completion(
        content=None, field=("reasoning", "Paris."), finish_reason="stop", formats=THINK, thinking=False
    ).completion
    assert (got.reasoning, got.content, got.status) == ("", "Paris.", "ok")


def test_stops_apply_after_the_split() -> None:
    # a stop string inside the thinking must not cut anything
    got = split_completion(
        content="<think>Q: 1\nQ: 2</think>A: 7\nQ: next",
        field=None,
        finish_reason="stop",
        formats=THINK,
        stops=("\nQ:",),
    ).completion
    assert (got.reasoning, got.content) == ("Q: 1\nQ: 2", "A: 7")
    assert apply_stops("abc", ("",)) == "abc"


@pytest.mark.parametrize(
    ("content", "finish", "error", "status"),
    [
        ("42", "stop", None, "ok"),
        ("", "length", None, "reasoning_truncated"),
        ("  \n", "length", None, "reasoning_truncated"),
        ("The answer", "length", None, "answer_truncated"),
        ("", "stop", None, "empty_content"),
        ("\n\n", "stop", None, "empty_content"),
        ("", "content_filter", None, "content_filter"),
        ("42", "stop", "HTTP 500: boom", "transport_error"),
    ],
)
def test_status(content: str, finish: str, error: str | None, status: str) -> None:
    assert completion_status(content, finish, error) == status


def test_null_and_empty_content_are_the_same() -> None:
    a = split_completion(content=None, field=("reasoning", "r"), finish_reason="length", formats=THINK)
    b = split_completion(content="", field=("reasoning", "r"), finish_reason="length", formats=THINK)
    assert a.completion == b.completion
    assert a.completion.status == "reasoning_truncated"
    assert a.completion.reasoning_closed is False


_PIECES = [
    "<think>",
    "</think>",
    "[THINK]",
    "[/THINK]",
    "<|channel|>analysis<|message|>",
    "<|end|>",
    "<|start|>assistant",
    "<|channel|>final<|message|>",
    "<|return|>",
    "<tool_call>",
    "<function=",
    "<",
    "/",
    "think",
    ">",
    "|",
    "a",
    " ",
    "\n",
    "42",
    "é",
    "日本",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=30), st.booleans())
def test_split_reassembles_the_text(pieces: list[str], opened: bool) -> None:
    """Nothing is invented: reasoning and content are made of the input's characters, in order."""
    text = "".join(pieces)
    got = split_inline(text, ALL, opened=opened)
    assert len(got.reasoning) + len(got.content) <= len(text)
    if got.reasoning_at is not None:
        assert text[got.reasoning_at] == got.reasoning[0]
    if got.content_at is not None and got.content:
        assert text[got.content_at] == got.content[0]


@pytest.mark.parametrize(
    ("content", "opened", "finish", "status", "closed"),
    [
        # no finish reason (an offline line without one): an open block with no answer was cut off
        ("<think>Let me count: 16 - 3", False, None, "reasoning_truncated", False),
        ("Let me count: 16 - 3", True, None, "reasoning_truncated", False),
        ("\n<think>\n", False, None, "reasoning_truncated", False),
        ("<think>", False, None, "reasoning_truncated", False),
        # ... but a closed block, or an answer after the open block, is not truncation evidence
        ("<think>Let me count</think>", False, None, "empty_content", True),
        ("<think>Let me count</think>13", False, None, "ok", True),
        ("Sure. <think>Let me count", False, None, "ok", False),
        ("", False, None, "empty_content", False),
        # a finish reason says how it ended, whatever the text shows
        ("<think>Let me count", False, "stop", "empty_content", False),
        ("<think>Let me count", False, "length", "reasoning_truncated", False),
    ],
)
def test_status_of_an_open_block_without_finish_reason(
    content: str, opened: bool, finish: str | None, status: str, closed: bool
) -> None:
    got = split_completion(content=content, field=None, finish_reason=finish, formats=THINK, opened=opened).completion
    assert (got.status, got.reasoning_closed) == (status, closed)


def test_reasoning_field_without_finish_reason_is_not_called_truncated() -> None:
    # a server that separated the reasoning leaves no trace of whether the block closed: nothing to go on
    got = split_completion(content=None, field=("reasoning", "r"), finish_reason=None, formats=THINK).completion
    assert (got.status, got.reasoning_closed) == ("empty_content", True)


@pytest.mark.parametrize(
    ("text", "reasoning", "content", "closed"),
    [
        ("<think>a</think> text <think>b</think> final", "a\nb", " text  final", True),
        ("<think>a</think>Answer: 3<think>but 5?</think>", "a\nbut 5?", "Answer: 3", True),
        ("x</think> mid <think>b</think>Answer: 7", "x\nb", " mid Answer: 7", True),
        ("<think>a</think>mid<think>b, cut off", "a\nb, cut off", "mid", False),
        ("[THINK]p[/THINK]42[THINK]q[/THINK]", "p\nq", "42", True),
    ],
)
def test_a_reasoning_block_opened_again_is_reasoning(text: str, reasoning: str, content: str, closed: bool) -> None:
    """A model that thinks again after its first block closes: the answer is what stands outside every block."""
    got = split_inline(text, ALL)
    assert (got.reasoning, got.content, got.closed) == (reasoning, content, closed)


def test_content_after_a_second_block_is_where_the_answer_starts() -> None:
    text = "<think>a</think><think>b</think>Z"
    got = split_inline(text, ALL)
    assert got.content == "Z" and got.content_at == text.index("Z")
