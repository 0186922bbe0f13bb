"""find_markup's rules: what is markup and what is not, cut-off and malformed calls, the earliest format, values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qualeval.errors import InputError
from qualeval.reasoning import Markup, find_markup, markup_formats
from qualeval.reasoning.toolmarkup_formats import load_markup_format
from qualeval.records import ToolCall
from tests.reasoning.test_toolmarkup_templates import rendered_cases


def call(name: str, **args: object) -> ToolCall:
    return ToolCall(name=name, arguments=json.dumps(args))


HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
QWEN3 = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "The capital of France is Paris.",
        "I should wrap the call in the <tool_call> tag and close it with </tool_call>.",
        "Remember: <tool_call> then the name, then </tool_call>.",
        'Qwen writes <tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>',
        "GLM's format is <tool_call>{function-name}<arg_key>{arg-key-1}</arg_key></tool_call>.",
        "Use <function=NAME> to call.",
        "The [TOOL_CALLS] token starts a call in Mistral models.",
        "gpt-oss addresses a tool with to=functions.get_weather in its header.",
        # JSON objects that are not calls, or not the whole rest of the text
        '{"name": "Ada", "age": 36}',
        'The answer is {"name": "get_weather", "parameters": {"city": "Paris"}} as you asked.',
        '{"name": "get_weather", "parameters": {"city": "Paris"}}\nThat is the call I would make.',
        '{"name": "get_weather", "parameters": "Paris"}',
        '```json\n{"title": "x", "name": "y"}\n```',
    ],
)
def test_prose_and_json_that_is_not_a_call_are_not_markup(text: str) -> None:
    assert find_markup(text) is None


def test_a_call_after_reasoning_prose_is_read() -> None:
    text = "I need the weather, so I call the tool.\n\n" + HERMES
    assert find_markup(text) == Markup("hermes", (call("get_weather", city="Paris"),), True)


def test_prose_about_the_tag_before_a_real_call_does_not_hide_it() -> None:
    text = "I must use the <tool_call> tag.\n" + HERMES
    assert find_markup(text) == Markup("hermes", (call("get_weather", city="Paris"),), True)


def test_the_earliest_format_wins() -> None:
    kimi = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>"
        '{"q": "x"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    assert find_markup(kimi + "\n" + HERMES) == Markup("kimi_k2", (call("search", q="x"),), True)
    assert find_markup(HERMES + "\n" + kimi) == Markup("hermes", (call("get_weather", city="Paris"),), True)


def test_several_calls_of_one_format_are_read_in_order_even_with_text_between() -> None:
    second = HERMES.replace("get_weather", "get_time").replace("Paris", "Rome")
    found = find_markup(HERMES + "\nand also\n" + second)
    assert found == Markup("hermes", (call("get_weather", city="Paris"), call("get_time", city="Rome")), True)


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa', ()),
        (HERMES + '\n<tool_call>\n{"name": "get_time", ', ("get_weather",)),
        (HERMES + "\n<tool_call>", ("get_weather",)),
        (QWEN3 + "\n<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC", ("get_weather",)),
        ("<tool_call>\n<function=get_wea", ()),
        ('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[AR', ("get_weather",)),
        ('{"name": "get_weather", "parameters": {"city": "Par', ()),
        ("<|tool_calls_section_begin|><|tool_call_begin|>functions.get_wea", ()),
        ("<|channel|>commentary to=functions.get_weather <|constrain|>json", ()),
    ],
)
def test_a_cut_off_call_leaves_the_whole_ones_and_whole_false(text: str, calls: tuple[str, ...]) -> None:
    found = find_markup(text)
    assert found is not None and not found.whole
    assert tuple(c.name for c in found.calls) == calls


def test_a_malformed_call_between_whole_ones_is_skipped_and_marked() -> None:
    bad = '<tool_call>\n{"name": "get_time", "arguments": {"zone": UTC}}\n</tool_call>\n'
    found = find_markup(bad + HERMES)
    assert found == Markup("hermes", (call("get_weather", city="Paris"),), False)


def test_arguments_written_as_a_json_string_are_read_as_the_object() -> None:
    text = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>'
    assert find_markup(text) == Markup("hermes", (call("f", a=1),), True)


def test_a_closing_tag_inside_a_json_string_does_not_end_the_call() -> None:
    text = '<tool_call>{"name": "echo", "arguments": {"text": "a </tool_call> b"}}</tool_call>'
    assert find_markup(text) == Markup("hermes", (call("echo", text="a </tool_call> b"),), True)


def test_qwen3_values_are_typed_where_they_read_as_json_and_text_otherwise() -> None:
    text = (
        "<function=f>\n<parameter=n>\n3\n</parameter>\n<parameter=flag>\ntrue\n</parameter>\n"
        '<parameter=obj>\n[1, {"b": null}]\n</parameter>\n<parameter=s>\n  two words \n</parameter>\n'
        "<parameter=mixed>\n3 apples\n</parameter>\n</function>"
    )
    expected = call("f", n=3, flag=True, obj=[1, {"b": None}], s="  two words ", mixed="3 apples")
    assert find_markup(text) == Markup("qwen3_xml", (expected,), True)


def test_qwen3_without_the_outer_tag_as_a_split_reasoning_leaves_it() -> None:
    reasoning = "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    content = "</function>\n</tool_call>"
    assert find_markup(reasoning) == Markup("qwen3_xml", (), False)
    assert find_markup(reasoning + content) == Markup("qwen3_xml", (call("get_weather", city="Paris"),), True)
    assert find_markup("<function=get_weather>\n</function>") == Markup("qwen3_xml", (call("get_weather"),), True)


def test_dsml_string_false_must_be_json() -> None:
    head = '<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="n" string="false">'
    tail = "</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    assert find_markup(head + "3" + tail) == Markup("dsml", (call("f", n=3),), True)
    assert find_markup(head + "three" + tail) == Markup("dsml", (), False)
    as_text = head.replace('"false"', '"true"') + "3" + tail
    assert find_markup(as_text) == Markup("dsml", (call("f", n="3"),), True)


@pytest.mark.parametrize(
    "text",
    [
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
        '<|start|>assistant<|channel|>commentary to=functions.get_weather json<|message|>{"city": "Paris"}<|call|>',
        '<|channel|>commentary to=functions.get_weather<|message|>{"city": "Paris"}',
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
    ],
)
def test_harmony_variants(text: str) -> None:
    assert find_markup(text) == Markup("harmony", (call("get_weather", city="Paris"),), True)


def test_harmony_two_calls() -> None:
    one = '<|start|>assistant to=functions.{}<|channel|>commentary json<|message|>{{"city": "Paris"}}<|call|>'
    found = find_markup(one.format("get_weather") + one.format("get_time"))
    assert found == Markup("harmony", (call("get_weather", city="Paris"), call("get_time", city="Paris")), True)


def test_llama3_json_forms() -> None:
    one = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    two = '{"name": "get_time", "arguments": {"zone": "UTC"}}'
    assert find_markup("<|python_tag|>" + one) == Markup("llama3_json", (call("get_weather", city="Paris"),), True)
    assert find_markup("Calling now:\n" + one + "\n") == Markup(
        "llama3_json", (call("get_weather", city="Paris"),), True
    )
    both = (call("get_weather", city="Paris"), call("get_time", zone="UTC"))
    assert find_markup(one + "; " + two) == Markup("llama3_json", both, True)


def test_deepseek_v31_and_kimi_without_their_section_tokens() -> None:
    deepseek = '<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜>'
    kimi = '<|tool_call_begin|>f:0<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|>'
    assert find_markup(deepseek) == Markup("deepseek_v31", (call("f", a=1),), True)
    assert find_markup(kimi) == Markup("kimi_k2", (call("f", a=1),), True)


def test_arguments_that_are_not_json_are_not_read_as_a_call() -> None:
    text = "[TOOL_CALLS]f[ARGS]{'a': 1}"
    assert find_markup(text) == Markup("mistral", (), False)
    assert find_markup('[TOOL_CALLS]f[ARGS]{"a": NaN}') == Markup("mistral", (), False)


def test_every_format_file_loads_and_names_are_unique() -> None:
    names = [fmt.name for fmt in markup_formats()]
    assert len(names) == len(set(names)) == 12


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("name: x\nreader: params\ntriggers: [a]\nanchor: 'a'\nclose: 'b'\n", "param"),
        ("name: x\nreader: json_object\ntriggers: [a]\nanchor: '('\nclose: 'b'\n", "anchor"),
        ("name: x\nreader: nope\ntriggers: [a]\nanchor: 'a'\nclose: 'b'\n", "reader"),
        ("name: x\nreader: json_object\ntriggers: []\nanchor: 'a'\nclose: 'b'\n", "triggers"),
    ],
)
def test_a_bad_format_file_is_one_input_error_naming_the_field(tmp_path: Path, body: str, field: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(InputError, match=f"x.yaml: field '{field}'"):
        load_markup_format(path)


_MARKER_BITS = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "<function=f>",
        "<parameter=a>",
        "</parameter>",
        "</function>",
        "{",
        "}",
        '"name"',
        ": ",
        '"f"',
        ",",
        '"arguments"',
        "[TOOL_CALLS]",
        "[ARGS]",
        "<|tool_call_begin|>",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
        "to=functions.f",
        "<|message|>",
        "<|call|>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
        '<minimax:tool_call><invoke name="f">',
        "</invoke>",
        "\n",
        " x ",
        "1",
        "[",
        "]",
        ";",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_MARKER_BITS, max_size=30).map("".join))
def test_any_mix_of_markers_reads_without_error_and_every_call_holds_a_json_object(text: str) -> None:
    found = find_markup(text)
    for read in found.calls if found is not None else ():
        assert read.name and isinstance(json.loads(read.arguments), dict)


_PROSE = st.text(alphabet=st.sampled_from(list("abcdefghij ABC.,:;!?()'-0123456789\n")), max_size=200)


@settings(max_examples=60, deadline=None)
@given(prose=_PROSE, case=st.sampled_from(rendered_cases()))
def test_prose_before_the_markup_changes_nothing(prose: str, case: dict[str, object]) -> None:
    alone = find_markup(str(case["text"]))
    assert find_markup(prose + "\n" + str(case["text"])) == alone


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>f<arg_key>a</arg_key><arg_value>" * 3000,
        "<|tool_call_begin|>x " * 3000 + "<|tool_call_argument_begin|>",
        "<｜tool▁call▁begin｜>x " * 3000 + "<｜tool▁sep｜>",
        '<｜DSML｜invoke x="' * 3000 + '">',
        "<minimax:tool_call> x " * 3000 + '<invoke name="f">',
        "<|channel|>commentary to=functions.f " * 3000 + "<|message|>",
        '{"name": "x", "parameters": {}} and\n' * 3000,
    ],
    ids=["glm", "kimi", "deepseek", "dsml", "minimax", "harmony", "llama"],
)
def test_a_model_repeating_an_opening_in_a_loop_reads_no_call(text: str) -> None:
    """An opening repeated without ever closing is no call read whole (its cost: benchmarks/markup_speed.py)."""
    found = find_markup(text)
    assert found is None or (found.calls == () and not found.whole)


def test_no_markup_in_any_real_model_answer() -> None:
    """The real-output corpora (21,173 published answers to GSM8K, MATH, MMLU-Pro and BBH, none offered a tool):
    not one is read as a tool call."""
    from tests.real_outputs.corpora import CORPORA, rows

    found = {}
    for key, corpus in CORPORA.items():
        for index, row in enumerate(rows(corpus)):  # skips when ../shared does not hold them
            text = row[corpus.family.text]
            if isinstance(text, str) and (markup := find_markup(text)) is not None:
                found[f"{key}#{index}"] = markup
    assert found == {}
