"""The reference server's GBNF grammars: what it samples is in the grammar's language; what llama.cpp refuses,
it refuses."""

from __future__ import annotations

import json
import random
import re

import pytest

from qualeval.sim.gbnf import GrammarError, parse_grammar

THINK = r"""
root ::= "<think>\n" words "\n</think>\n\n" "Answer: " [0-9]{1,3}
words ::= word (" " word){2,7}
word ::= [a-z]{2,7}
"""
JSON = r"""
# a JSON value, as in llama.cpp's grammars/json.gbnf
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws     ::= | " " | "\n" [ \t]{0,20}
"""


@pytest.mark.parametrize("seed", range(20))
def test_samples_are_in_the_language(seed: int) -> None:
    rng = random.Random(seed)
    text = parse_grammar(THINK).sample(rng)
    assert re.fullmatch(r"<think>\n[a-z]{2,7}( [a-z]{2,7}){2,7}\n</think>\n\nAnswer: [0-9]{1,3}", text), text
    assert isinstance(json.loads(parse_grammar(JSON).sample(rng)), dict)  # recursion ends, and it is JSON


def test_tokens_alternatives_and_comments() -> None:
    grammar = parse_grammar('root ::= <think> ("yes" | "no") </think> [^a-z]?  # a comment\n')
    seen = {grammar.sample(random.Random(i)) for i in range(40)}
    assert all(re.fullmatch(r"<think>(yes|no)</think>[^a-z]?", s) for s in seen)
    assert any("yes" in s for s in seen) and any("no</think>" in s for s in seen)  # both alternatives are taken


@pytest.mark.parametrize(
    "text",
    [
        'root ::= "a" undefined',  # a rule nobody defined
        'answer ::= "a"',  # no root
        'root ::= "a',  # an unterminated literal
        "root ::= [a-",  # an unterminated class
        'root ::= "a"{3,1}',  # an empty repetition range
        'root ::= x\nx ::= x "a"',  # a rule that can never finish
        'root ::= ("a"',  # an unclosed group
        'root ::= "\\q"',  # an unknown escape
    ],
)
def test_what_llama_cpp_refuses_is_refused(text: str) -> None:
    with pytest.raises(GrammarError):
        parse_grammar(text)
