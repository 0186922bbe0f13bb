"""What the simulated model says: reasoning with traps, an answer from a key, truncation, constraints.

Everything is a function of the configured seed and the request, so a rerun gets the same words.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from qualeval.sim.answerkey import AnswerKey, KeyEntry
from qualeval.sim.examples import as_number, json_example, regex_example
from qualeval.sim.grading import grade_reply
from qualeval.sim.harms import corruption
from qualeval.sim.protocol import asks_working, copied_placeholder, restated, restates

__all__ = ["AskedConstraint", "Behaviour", "Effort", "PlannedReply", "cut_reply", "generate", "seeded", "tokenize"]

_TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def tokenize(text: str) -> list[str]:
    """Split text into tokens that concatenate back to it exactly (leading space kept, as in BPE)."""
    return _TOKEN.findall(text)


@dataclass(frozen=True, slots=True)
class AskedConstraint:
    """The structured-output constraint a request asked the simulated server for, as its flavour read it."""

    kind: str  # "choice" | "regex" | "json"
    value: Any = None  # list of choices, a pattern, a JSON schema (None: any JSON object)


@dataclass(frozen=True, slots=True)
class Behaviour:
    accuracy: float = 0.8
    reasoning_tokens: int = 120
    """Median reasoning length; lengths are log-normal around it."""
    empty_rate: float = 0.0
    trap_rate: float = 0.3
    """Share of answers followed by a sentence with a distractor number."""
    seed: int = 0
    working_harm: float = 0.0
    """Accuracy lost when a constraint binds from the first token on a prompt that asks for working."""
    placeholder_copy: float = 0.0
    """Share of follow-ups answered with the template text of a placeholder in the exchange ("Answer: <answer>")."""
    effort_gain: float = 0.0
    """How much a right answer needs its thinking: with less thinking than the question needs (a low
    `reasoning_effort`, a server's thinking budget), accuracy falls by (written / needed) ** effort_gain."""
    no_thinking_harm: float = 0.0
    """A request that switches thinking off is right with probability accuracy * (1 - no_thinking_harm)."""
    load_harm: float = 0.0
    """Accuracy is multiplied by (1 - load_harm) for each doubling of the requests decoded together (the server
    applies it)."""
    spec_corrupt: float = 0.0
    """Share of answers speculative decoding corrupts, each replaced by a wrong one (the server sets it to 0 while
    speculative decoding is off)."""
    kv_quant_harm: float = 0.0
    """A quantized KV cache's error: an answer after n output tokens is corrupted with chance
    1 - exp(-kv_quant_harm * n / 1000)."""


@dataclass(slots=True)
class PlannedReply:
    """What the simulated model will send for one request, before a flavour puts it on the wire."""

    reasoning: list[str] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    closed: bool = True
    """Reasoning ended with its closing marker (False when the budget ran out inside it)."""
    finish: str = "stop"
    thinking: bool = True
    unknown: bool = False
    """The question is not in the answer key: the reply is the server's, no model's (UNKNOWN_QUESTION)."""


def seeded(*parts: object) -> random.Random:
    """A generator that is a function of `parts` alone: the same request draws the same numbers on every run."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _wrong(entry: KeyEntry, rng: random.Random, key: AnswerKey | None) -> str:
    if entry.verbatim == "code":
        return "    raise NotImplementedError\n"
    if entry.verbatim:
        return "I would rather not follow those instructions."
    gold = entry.answer
    if gold.lower() in ("yes", "no"):
        return "no" if gold.lower() == "yes" else "yes"
    if re.fullmatch(r"[A-J]", gold):
        letters = "ABCDEFGHIJ"[: len(entry.choices) or 4]
        return rng.choice([c for c in letters if c != gold] or ["A"])
    if entry.choices:
        others = [c for c in entry.choices if c != gold]
        return rng.choice(others) if others else gold
    num = as_number(gold)
    if num is not None:
        wrong = num + rng.choice([-10, -2, -1, 1, 2, 5, 10]) if rng.random() < 0.7 else num * 2
        return _fmt_number(wrong)
    if key and len(key.entries) > 1:
        # another question's answer of the same kind: a wrong capital for a capital, not a stray "yes"
        for _ in range(8):
            other = rng.choice(key.entries).answer
            plain = other.lower() not in ("yes", "no") and as_number(other) is None and len(other) > 1
            # "Isaac Newton" for "newton" would be scored right: a wrong answer must not contain the right one
            if plain and gold.lower() not in other.lower():
                return other
    return "unknown"


def _fmt_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


def _reasoning_text(prompt: str, answer: str, length: int, rng: random.Random) -> str:
    """Thinking that mentions the question's numbers, invented intermediate numbers and other options,
    and ends on a distractor: the trap for extractors that read numbers off the trace."""
    numbers = [n.replace(",", "") for n in _NUMBER.findall(prompt)][:6] or [str(rng.randint(2, 40))]
    parts = ["Okay, let me work through this carefully."]
    words = 8
    while words < length:
        a = int(float(rng.choice(numbers)))
        b = rng.randint(2, 60)
        step = rng.choice(
            [
                f" First, {a} + {b} = {a + b}.",
                f" Then {a} × {b} would be {a * b}, but that is not what is asked.",
                f" Maybe it is {a - b}? No, let me recheck.",
                f" Option B looks tempting, and so does {b}.",
                f" If I take {b} away from {a + b} I get {a} again.",
                f" Hmm, {answer} seems plausible, but I should double-check with {b}.",
            ]
        )
        parts.append(step)
        words += len(tokenize(step))
    parts.append(f" So it is not {rng.randint(61, 999)}.")
    return "".join(parts)


def _verbatim(prompt: str, answer: str, kind: str) -> str:
    """A whole response as the prompt asks for it: code in a fence when the prompt shows one."""
    if kind == "code" and "```" in prompt and "```" not in answer:
        return f"Here is the function.\n\n```python\n{answer.rstrip()}\n```"
    return answer


def _answer_text(prompt: str, answer: str, rng: random.Random, trap_rate: float) -> str:
    if "the answer is (x)" in prompt.lower():  # MMLU-Pro's closing line
        return f"The answer is ({answer})."
    if "####" in prompt:
        text = f"#### {answer}"
    elif "\\boxed" in prompt:
        text = f"The final answer is \\boxed{{{answer}}}."
    elif "Answer:" in prompt:
        text = f"Answer: {answer}"
    else:
        text = f"The answer is {answer}."
    if rng.random() < trap_rate:
        text += f" (I checked this {rng.randint(2, 9)} times.)"
    return text


def constrained(constraint: AskedConstraint, answer: str, rng: random.Random) -> str:
    """The answer forced into the constraint, as a constrained decoder would produce it."""
    if constraint.kind == "choice":
        options = [str(c) for c in constraint.value or []]
        if answer in options:
            return answer
        matching = [o for o in options if o.strip().lower() == answer.strip().lower()]
        return matching[0] if matching else (rng.choice(options) if options else answer)
    if constraint.kind == "regex":
        try:
            if re.fullmatch(constraint.value, answer):
                return answer
            return regex_example(constraint.value, rng)
        except re.error:
            return answer
    return orjson.dumps(json_example(constraint.value, answer)).decode()


def _chosen(
    prompt: str, entry: KeyEntry | None, key: AnswerKey | None, rng: random.Random, accuracy: float, outcome: str | None
) -> tuple[str, str]:
    """(the answer, what the reasoning hints at) for a question, right with probability `accuracy`."""
    if entry is None:
        return "I do not have this question in my answer key.", "unknown"
    correct = outcome == "correct" or (outcome != "wrong" and rng.random() < accuracy)
    answer = entry.answer if correct else _wrong(entry, rng, key)
    return answer, answer


def _followup(prompt: str, conversation: str, behaviour: Behaviour, variant: object) -> str | None:
    """The answer to a follow-up that is not a question: a copied placeholder at the configured rate, else what
    the response it shows states; None for anything else (a question, or a follow-up asked in the conversation)."""
    if not restates(prompt):
        return None
    exchange = f"{conversation}\n{prompt}"
    placeholder = copied_placeholder(exchange) if behaviour.placeholder_copy else None
    if placeholder and seeded(behaviour.seed, "copy", exchange, variant).random() < behaviour.placeholder_copy:
        return placeholder
    if "\nResponse:\n" not in prompt:
        return None
    return restated(prompt) or "The response gives no answer."


def _wanted(behaviour: Behaviour, directives: dict[str, str], rng: random.Random) -> int:
    """The thinking a question needs, in tokens: log-normal around the median, or as a directive says."""
    wanted = int(directives.get("reasoning", 0)) or round(behaviour.reasoning_tokens * math.exp(rng.gauss(0, 0.6)))
    if "reasoning" not in directives:
        wanted = max(8, min(wanted, 8 * max(behaviour.reasoning_tokens, 8)))
    return wanted


def _reasoning(prompt: str, hint: str, wanted: int, rng: random.Random) -> list[str]:
    return _fit(tokenize("\n" + _reasoning_text(prompt, hint, wanted, rng) + "\n"), wanted)


@dataclass(frozen=True, slots=True)
class Effort:
    """How much the request lets the model think: `reasoning_effort` as a share of what a question needs
    (low 0.35, medium 1, high 2), and a server's own per-request thinking budget in tokens (the block is closed
    there and the model answers, as vLLM's `thinking_token_budget` does)."""

    scale: float = 1.0
    budget: int | None = None


def _effortful(
    behaviour: Behaviour, effort: Effort, directives: dict[str, str], accuracy: float, key: object
) -> tuple[int, float]:
    """(tokens written, accuracy) when the request sets an effort or a budget: drawn on a generator of their own,
    so that requests that set neither think exactly as they always did."""
    needed = _wanted(behaviour, directives, seeded(behaviour.seed, "needed", key))
    written = max(1, round(needed * effort.scale))
    if effort.budget is not None:
        written = max(1, min(written, effort.budget))
    share = min(1.0, written / needed) if needed else 1.0
    return written, accuracy * share**behaviour.effort_gain


def generate(
    prompt: str,
    *,
    behaviour: Behaviour,
    key: AnswerKey | None,
    max_tokens: int | None,
    thinking: bool,
    constraint: AskedConstraint | None,
    constraint_skips_thinking: bool,
    directives: dict[str, str],
    variant: object = 0,
    conversation: str = "",
    effort: Effort | None = None,
    tools: Any = None,
) -> PlannedReply:
    """The model's output for one request, already cut to `max_tokens`.

    `prompt` is the last user message; `conversation` the whole exchange, searched when the last message
    is a followup ("now give only your final answer") rather than the question. `effort`: what the request
    allows the thinking (reasoning_effort, a thinking budget), when it says. `tools`: the request's OpenAI tools
    ([] for none; None: not known), which tell apart items that ask one question with other tools.
    """
    if (grade := grade_reply(prompt)) is not None:  # asked to act as a model judge
        return PlannedReply(thinking=False, answer=tokenize(grade))
    switched_off = not thinking  # by the request, not by a constraint that takes the thinking (working_harm's case)
    if constraint is not None and constraint_skips_thinking:
        thinking = False
    entry = key.find(prompt, tools) if key else None
    if entry is None and key and conversation:
        entry = key.find(conversation, tools)
    # seeded on the question, so a followup about the same question gives the same answer
    rng = seeded(behaviour.seed, (entry.draws or entry.question) if entry else prompt, variant)
    said = _followup(prompt, conversation, behaviour, variant)
    harmed = constraint is not None and not thinking and asks_working(prompt)  # the constraint took the working
    accuracy = max(0.0, behaviour.accuracy - behaviour.working_harm) if harmed else behaviour.accuracy
    if switched_off:
        accuracy *= 1.0 - behaviour.no_thinking_harm
    written = None
    if thinking and effort is not None and said is None:
        written, accuracy = _effortful(
            behaviour, effort, directives, accuracy, ((entry.draws or entry.question) if entry else prompt, variant)
        )
    answer, hint = (
        (said, said) if said is not None else _chosen(prompt, entry, key, rng, accuracy, directives.get("outcome"))
    )
    gen = PlannedReply(thinking=thinking, unknown=said is None and entry is None)
    if thinking:
        gen.reasoning = _reasoning(prompt, hint, written or _wanted(behaviour, directives, rng), rng)
    if entry is not None and said is None and "outcome" not in directives:
        answer = _corrupted(answer, entry, key, behaviour, len(gen.reasoning), variant)
    _answer_into(gen, prompt, answer, entry, said, constraint, behaviour, directives, rng)
    if max_tokens is not None:
        cut_reply(gen, max_tokens)
    return gen


def _corrupted(
    answer: str, entry: KeyEntry, key: AnswerKey | None, behaviour: Behaviour, reasoning: int, variant: object
) -> str:
    """The answer as the server delivers it: replaced by a wrong one at the chance its speculative decoding and its
    KV cache corrupt one this long, on draws of its own so that an unharmed server writes what it always did."""
    chance = corruption(behaviour.spec_corrupt, behaviour.kv_quant_harm, reasoning + len(tokenize(answer)))
    if chance and seeded(behaviour.seed, "corrupt", entry.draws or entry.question, variant).random() < chance:
        return _wrong(entry, seeded(behaviour.seed, "corrupted", entry.draws or entry.question, variant), key)
    return answer


def _answer_into(
    gen: PlannedReply,
    prompt: str,
    answer: str,
    entry: KeyEntry | None,
    said: str | None,
    constraint: AskedConstraint | None,
    behaviour: Behaviour,
    directives: dict[str, str],
    rng: random.Random,
) -> None:
    outcome = directives.get("outcome")
    if outcome == "empty" or (outcome is None and rng.random() < behaviour.empty_rate):
        return
    if constraint is not None:
        text = constrained(constraint, answer, rng)
    elif entry is None or said is not None:
        text = answer
    elif entry.verbatim:
        text = _verbatim(prompt, answer, entry.verbatim)
    else:
        text = _answer_text(prompt, answer, rng, behaviour.trap_rate)
    # like Qwen3 after </think>: vLLM keeps these newlines, SGLang and llama.cpp trim them
    gen.answer = tokenize("\n\n" + text if gen.reasoning else text)


def _fit(tokens: list[str], wanted: int) -> list[str]:
    """Exactly `wanted` tokens, keeping the closing distractor sentence that ends the thinking."""
    if len(tokens) <= wanted:
        return tokens
    ending = tokens[-8:]
    return tokens[: max(wanted - len(ending), 0)] + ending[-wanted:]


def cut_reply(gen: PlannedReply, budget: int) -> None:
    """The reply cut to `budget` tokens: inside the thinking (finish `length`, no answer), or inside the answer."""
    # the closing marker costs one token between reasoning and answer
    if len(gen.reasoning) >= budget:
        gen.reasoning = gen.reasoning[:budget]
        gen.answer = []
        gen.closed = False
        gen.finish = "length"
        return
    left = budget - len(gen.reasoning) - (1 if gen.reasoning else 0)
    if len(gen.answer) > left:
        gen.answer = gen.answer[: max(left, 0)]
        gen.finish = "length"
