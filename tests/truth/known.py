"""Responses whose correctness is known by construction, and the task files they answer.

Each task is written inline (no dataset), so the gold is ours. For every item there is a right answer and a wrong
one; `RIGHT` says which items get the right one. The thinking beside each answer is a trap: it states the *other*
answer (the gold where the answer is wrong, a wrong value where it is right), so an extractor that reads the
reasoning, or a split that lets reasoning into the answer, moves the accuracy off its known value.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

N = 10
RIGHT = frozenset({0, 1, 2, 4, 5, 7, 9})
"""The items answered right: 7 of 10, so the known accuracy is 0.7 wherever nothing is cut off."""
CUT = frozenset({1, 6})
"""Items whose thinking is cut off by the budget in the `cut` forms: never an answer, so never right."""


@dataclass(frozen=True)
class Kind:
    """One scorer kind: its task file, and each item's gold, right and wrong answers."""

    name: str
    spec: dict[str, Any]
    docs: list[dict[str, Any]]
    right: Callable[[int], str]
    wrong: Callable[[int], str]
    options: tuple[str, ...] = ()
    """Flags `qualeval score` needs for this kind."""


def _numeric() -> Kind:
    docs = [{"question": f"Item {i}: how many stones are in pile {i}?", "answer": 40 + 3 * i} for i in range(N)]
    return Kind(
        "numeric",
        {"answer": {"type": "number"}, "scorer": {"kind": "numeric"}, "instruction": 'End with "Answer: <number>".'},
        docs,
        right=lambda i: f"Counting the piles gives the total.\nAnswer: {40 + 3 * i}",
        wrong=lambda i: f"Counting the piles gives the total.\nAnswer: {41 + 3 * i}",
    )


_OPTIONS = ["red", "green", "blue", "amber"]


def _choice() -> Kind:
    docs = [
        {"question": f"Item {i}: which colour is lamp {i}?", "choices": _OPTIONS, "answer": i % 4} for i in range(N)
    ]
    letter = "ABCD"
    return Kind(
        "choice",
        {
            "answer": {"type": "choice"},
            "scorer": {"kind": "choice"},
            "doc_to_choice": "choices",
            "instruction": 'End with "Answer: <letter>".',
        },
        docs,
        right=lambda i: f"The lamp's colour is in the list.\nAnswer: {letter[i % 4]}",
        wrong=lambda i: f"The lamp's colour is in the list.\nAnswer: {letter[(i + 1) % 4]}",
    )


NAMES = ["Orvel", "Tamsk", "Quenby", "Larrow", "Pimsey", "Dravok", "Ulmet", "Sarnow", "Fenwick", "Brolla"]


def _alias() -> Kind:
    docs = [
        {"question": f"Item {i}: who keeps lighthouse {i}?", "answer": NAMES[i], "aliases": [f"Keeper {NAMES[i]}"]}
        for i in range(N)
    ]
    return Kind(
        "alias_match",
        {
            "answer": {"type": "text"},
            "scorer": {"kind": "alias_match"},
            "doc_to_aliases": "aliases",
            "instruction": 'End with "Answer: <name>".',
        },
        docs,
        right=lambda i: f"The records name the keeper.\nAnswer: {NAMES[i]}",
        wrong=lambda i: f"The records name the keeper.\nAnswer: {NAMES[(i + 1) % N]}",
    )


def _boolean() -> Kind:
    docs = [{"question": f"Item {i}: is gate {i} open?", "answer": "yes" if i % 2 else "no"} for i in range(N)]
    flip = {"yes": "no", "no": "yes"}
    return Kind(
        "exact",
        {"answer": {"type": "boolean"}, "scorer": {"kind": "exact"}, "instruction": 'End with "Answer: yes" or no.'},
        docs,
        right=lambda i: f"Checking the gate log.\nAnswer: {docs[i]['answer']}",
        wrong=lambda i: f"Checking the gate log.\nAnswer: {flip[str(docs[i]['answer'])]}",
    )


def _math() -> Kind:
    docs = [
        {"question": f"Item {i}: simplify {i + 1}/{2 * (i + 1)} + {i}.", "answer": f"\\frac{{{2 * i + 1}}}{{2}}"}
        for i in range(N)
    ]
    return Kind(
        "math",
        {"answer": {"type": "text"}, "scorer": {"kind": "math"}, "instruction": "Put the result in \\boxed{}."},
        docs,
        right=lambda i: f"Adding the terms.\nThe result is $\\boxed{{\\frac{{{2 * i + 1}}}{{2}}}}$.",
        wrong=lambda i: f"Adding the terms.\nThe result is $\\boxed{{\\frac{{{2 * i + 3}}}{{2}}}}$.",
    )


def _code() -> Kind:
    docs = [
        {
            "prompt": f'def add_{i}(x):\n    """Return x plus {i}."""\n',
            "test": f"def check(f):\n    assert f(1) == {1 + i}\n    assert f(-{i}) == 0\n",
            "entry_point": f"add_{i}",
        }
        for i in range(N)
    ]
    return Kind(
        "code",
        {
            "answer": {"type": "text"},
            "scorer": {"kind": "code"},
            "doc_to_text": "Complete this function:\n{{ prompt }}",
            "doc_to_target": "test",
            "doc_to_meta": {"test": "test", "entry_point": "entry_point", "prompt": "prompt"},
            "instruction": "Answer with the whole function in a ```python block.",
        },
        docs,
        right=lambda i: f"```python\ndef add_{i}(x):\n    return x + {i}\n```",
        wrong=lambda i: f"```python\ndef add_{i}(x):\n    return x - {i} + 1\n```",
        options=("--allow-code-execution",),
    )


def _regex() -> Kind:
    """The docs' regex scorer (docs/scoring.md): a tagged line, searched for in the answer text."""
    docs = [{"question": f"Item {i}: what is {i} plus 30?", "answer": str(30 + i)} for i in range(N)]
    return Kind(
        "regex",
        {
            "answer": {"type": "number"},
            "scorer": {"kind": "regex", "pattern": "Answer:\\s*{gold}\\b"},
            "instruction": "Work it out, then end with a line 'Answer: <number>'.",
        },
        docs,
        right=lambda i: f"Adding up.\nAnswer: {30 + i}",
        wrong=lambda i: f"Adding up.\nAnswer: {31 + i}",
    )


KINDS: dict[str, Callable[[], Kind]] = {
    "numeric": _numeric,
    "choice": _choice,
    "alias_match": _alias,
    "exact": _boolean,
    "math": _math,
    "code": _code,
    "regex": _regex,
}


def write_task(kind: Kind, folder: Path) -> Path:
    """The kind's task file, as a user writes one: inline samples, a prompt, an answer type and a scorer."""
    spec = dict(kind.spec)
    instruction = spec.pop("instruction")
    body: dict[str, Any] = {
        "name": f"truth_{kind.name}",
        "samples": kind.docs,
        "doc_to_text": spec.pop("doc_to_text", "{{ question }}"),
        "doc_to_target": spec.pop("doc_to_target", "answer"),
        "prompt": {"instruction": instruction},
        "generation": {"temperature": 0.0},
        **spec,
    }
    path = folder / f"truth_{kind.name}.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def sample_id(kind: Kind, i: int) -> str:
    return f"truth_{kind.name}/test/{i}"


# -- how the thinking travels -------------------------------------------------------------------------------------

THINKING = ("none", "field", "inline", "opened", "cut_inline", "cut_opened", "cut_field")
"""none: content only; field: a `reasoning` field; inline: `<think>…</think>` in the content; opened: the template
opened the block, so the content holds only `…</think>` (scored with --thinking-opened); cut_*: the budget ran out
inside the thinking for the items of CUT (finish_reason `length`, no answer)."""


@dataclass(frozen=True)
class Reply:
    content: str | None
    reasoning: str | None
    finish_reason: str


def reply(kind: Kind, i: int, thinking: str) -> Reply:
    """Item i's response in one thinking form; the reasoning argues for the other answer."""
    is_right = i in RIGHT
    answer = kind.right(i) if is_right else kind.wrong(i)
    decoy = kind.wrong(i) if is_right else kind.right(i)
    thought = f"Let me think about item {i}. A first guess:\n{decoy}\nI should check that again."
    cut = thinking.startswith("cut_") and i in CUT
    form = thinking.removeprefix("cut_")
    if form == "none":
        return Reply(answer, None, "stop")
    if form == "field":
        return Reply(None if cut else answer, thought, "length" if cut else "stop")
    if form == "inline":
        return Reply(
            f"<think>{thought}" if cut else f"<think>{thought}</think>\n{answer}", None, "length" if cut else "stop"
        )
    assert form == "opened"
    return Reply(thought if cut else f"{thought}</think>\n{answer}", None, "length" if cut else "stop")


def known_accuracy(thinking: str) -> float:
    right = RIGHT - CUT if thinking.startswith("cut_") else RIGHT
    return len(right) / N


def split_flags(thinking: str) -> tuple[str, ...]:
    return ("--thinking-opened",) if thinking.removeprefix("cut_") == "opened" else ()


# -- the files answers arrive in ----------------------------------------------------------------------------------


def qualeval_lines(kind: Kind, thinking: str, id_of: Callable[[int], Any] | None = None) -> list[dict[str, Any]]:
    """qualeval's own JSONL: id, content, reasoning, finish_reason."""
    rows = []
    for i in range(N):
        r = reply(kind, i, thinking)
        row: dict[str, Any] = {"id": id_of(i) if id_of else sample_id(kind, i), "content": r.content}
        if r.reasoning is not None:
            row["reasoning"] = r.reasoning
        row["finish_reason"] = r.finish_reason
        rows.append(row)
    return rows


def named_lines(kind: Kind, id_field: str, text_field: str, thinking: str = "inline") -> list[dict[str, Any]]:
    """Another tool's JSONL: the text and the id under one of the common names, the thinking inline."""
    return [{id_field: sample_id(kind, i), text_field: reply(kind, i, thinking).content} for i in range(N)]


def lm_eval_lines(kind: Kind, filters: Iterable[str] = ("strict-match", "flexible-extract")) -> list[dict[str, Any]]:
    """lm-eval's samples_*.jsonl: each doc once per filter, the raw response in `resps`, the filter's reading in
    `filtered_resps` (deliberately wrong here: qualeval reads the raw response and does its own extraction)."""
    rows = []
    for name in filters:
        for i in range(N):
            rows.append(
                {
                    "doc_id": i,
                    "doc": kind.docs[i],
                    "target": str(kind.docs[i].get("answer", "")),
                    "arguments": {"gen_args_0": {"arg_0": kind.docs[i].get("question", ""), "arg_1": {}}},
                    "resps": [[reply(kind, i, "inline").content]],
                    "filtered_resps": ["[invalid]"],
                    "filter": name,
                    "metrics": ["exact_match"],
                    "doc_hash": f"{i:064x}",
                }
            )
    return rows


def batch_lines(kind: Kind, thinking: str = "field", custom_id: Callable[[int], str] | None = None) -> list[dict]:
    """OpenAI Batch API output: one object per request, the answer at response.body.choices[0].message."""
    rows = []
    for i in range(N):
        r = reply(kind, i, thinking)
        message: dict[str, Any] = {"role": "assistant", "content": r.content}
        if r.reasoning is not None:
            message["reasoning_content"] = r.reasoning
        rows.append(
            {
                "id": f"batch_req_{i:024x}",
                "custom_id": custom_id(i) if custom_id else sample_id(kind, i),
                "response": {
                    "status_code": 200,
                    "request_id": f"req_{i:032x}",
                    "body": {
                        "id": f"chatcmpl-{i}",
                        "object": "chat.completion",
                        "model": "m",
                        "choices": [{"index": 0, "message": message, "finish_reason": r.finish_reason}],
                        "usage": {"prompt_tokens": 20, "completion_tokens": 30, "total_tokens": 50},
                    },
                },
                "error": None,
            }
        )
    return rows


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def write_csv(path: Path, kind: Kind, thinking: str = "inline") -> Path:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "response"])
    for i in range(N):
        writer.writerow([sample_id(kind, i), reply(kind, i, thinking).content])
    path.write_text(out.getvalue())
    return path
