"""The authors' extraction, reimplemented, on made-up outputs of the shapes the real ones have (no shared data
needed; test_corpora checks that each reproduces its authors' published figures)."""

from __future__ import annotations

import pytest

from tests.real_outputs.references import bbh_answer, mmlu_pro_letter, zeroeval_answer, zeroeval_verdict


@pytest.mark.parametrize(
    ("output", "answer"),
    [
        ('```json\n{"reasoning": "r", "answer": "18"}\n```', "18"),
        ('{"reasoning": "a \\(t\\) here", "answer": "69"}', "69"),  # strict JSON refuses \( : the regex reads it
        ('{"answer": "40 * $10 = $400 + 60 = 460"} and later {"answer": "460"}', "40 * $10 = $400 + 60 = 460"),
        ('{"reasoning": "no answer key"} then "answer": 7, more', "7"),
        ("The final answer: 12, I think", "12"),  # a key without quotes
        ("Answer: 5", None),  # the key is looked for in lower case only
    ],
)
def test_zeroeval_reads_the_first_objects_answer_else_a_regex(output: str, answer: str | None) -> None:
    assert zeroeval_answer(output, "some-model") == answer


def test_zeroeval_compares_first_numbers_after_its_clean_up() -> None:
    assert zeroeval_verdict('{"answer": "$1,000"}', "# 1000", "m") == (True, True)
    assert zeroeval_verdict('{"answer": "32/3"}', "# 32", "m") == (False, True)  # a fraction is evaluated first
    assert zeroeval_verdict('{"answer": "4i"}', "4", "m") == (True, True)  # the first number alone
    assert zeroeval_verdict('{"answer": "(1/4)(16)"}', "4", "m") == (False, True)  # eval fails: its first number, 1
    assert zeroeval_verdict("no JSON at all", "1", "m") == (False, False)


def test_only_llama_3_1_gets_its_boxed_answer_read() -> None:
    assert zeroeval_answer("so $\\boxed{36}$", "Meta-Llama-3.1-8B-Instruct") == "36"
    assert zeroeval_answer("so $\\boxed{36}$", "Qwen2.5-7B-Instruct") is None


def test_mmlu_pro_rules_in_order() -> None:
    assert mmlu_pro_letter("so the answer is (C).") == ("C", 1)
    assert mmlu_pro_letter("Answer: D") == ("D", 2)
    assert mmlu_pro_letter("I pick B over A here") == ("A", 3)
    assert mmlu_pro_letter("no letter") == (None, 0)


def test_bbh_takes_what_follows_the_last_closing_sentence() -> None:
    assert bbh_answer("Step one. So the answer is Yes.") == "Yes"
    assert bbh_answer("So the answer is (A). Then again. So the answer is (B).") == "(B)"
    assert bbh_answer("no closing sentence") == "no closing sentence"
