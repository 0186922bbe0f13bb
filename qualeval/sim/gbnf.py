"""GBNF grammars (llama.cpp's `grammar` request field): parsed as llama-server parses them, and sampled.

A random-weights model under a grammar writes a random string of the grammar's language; the reference
server does the same, so a grammar shapes its output exactly as it shapes llama-server's. A grammar that
llama.cpp would refuse (syntax error, undefined rule, no `root`) raises GrammarError.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import cast

__all__ = ["Grammar", "GrammarError", "parse_grammar"]

_NAME = re.compile(r"[A-Za-z0-9-]+")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^"}
_DEEP = 24  # past this depth, only the shortest way out of a recursive rule is taken
_OPEN_MAX = 4  # `*`, `+` and `{m,}` add at most this many repeats beyond the minimum


class GrammarError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Item:
    kind: str  # "lit" (text), "class" (ranges, negated), "ref" (rule name), "group" (alternatives)
    value: object
    low: int = 1
    high: int | None = 1  # None: unbounded


Sequence = tuple[Item, ...]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, why: str) -> GrammarError:
        line = self.text.count("\n", 0, self.pos) + 1
        return GrammarError(f"{why} at line {line}")

    def space(self, newlines: bool) -> None:
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "#":
                while self.pos < len(self.text) and self.text[self.pos] != "\n":
                    self.pos += 1
            elif char in " \t" or (newlines and char in "\r\n"):
                self.pos += 1
            else:
                return

    def name(self) -> str:
        found = _NAME.match(self.text, self.pos)
        if not found:
            raise self.fail("expected a rule name")
        self.pos = found.end()
        return found.group()

    def char(self) -> str:
        """One character of a literal or class, escapes decoded."""
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of grammar")
        char = self.text[self.pos]
        self.pos += 1
        if char != "\\":
            return char
        code = self.text[self.pos : self.pos + 1]
        self.pos += 1
        if code in _ESCAPES:
            return _ESCAPES[code]
        digits = {"x": 2, "u": 4, "U": 8}.get(code)
        hexa = self.text[self.pos : self.pos + (digits or 0)]
        if not digits or len(hexa) != digits or not all(c in "0123456789abcdefABCDEF" for c in hexa):
            raise self.fail(f"unknown escape '\\{code}'")
        self.pos += digits
        return chr(int(hexa, 16))

    def alternatives(self, nested: bool) -> tuple[Sequence, ...]:
        options = [self.sequence(nested)]
        while self.text.startswith("|", self.pos):
            self.pos += 1
            self.space(True)
            options.append(self.sequence(nested))
        return tuple(options)

    def sequence(self, nested: bool) -> Sequence:
        items: list[Item] = []
        while self.pos < len(self.text):
            atom = self.atom(nested)
            if atom is None:
                break
            items.append(self.repeat(atom, nested))
        return tuple(items)

    def atom(self, nested: bool) -> Item | None:
        char = self.text[self.pos]
        if char == '"':
            self.pos += 1
            text = []
            while not self.text.startswith('"', self.pos):
                text.append(self.char())
            self.pos += 1
            found = Item("lit", "".join(text))
        elif char == "[":
            found = self.char_class()
        elif char == ".":
            self.pos += 1
            found = Item("class", ((), True))
        elif char in "<!":
            found = self.token()
        elif char == "(":
            self.pos += 1
            self.space(True)
            found = Item("group", self.alternatives(True))
            if not self.text.startswith(")", self.pos):
                raise self.fail("expected ')'")
            self.pos += 1
        elif _NAME.match(char):
            start = self.pos
            name = self.name()
            self.space(nested)
            if self.text.startswith("::=", self.pos):  # the next rule begins: this sequence is over
                self.pos = start
                return None
            self.pos = start + len(name)
            found = Item("ref", name)
        else:
            return None
        self.space(nested)
        return found

    def token(self) -> Item:
        """`<think>`: that one (special) token; `!<think>`: any other token. Written out as their text."""
        found = re.compile(r"(!?)(<[^<>\s]+>)").match(self.text, self.pos)
        if not found:
            raise self.fail("malformed token reference")
        self.pos = found.end()
        return Item("class", ((), True)) if found.group(1) else Item("lit", found.group(2))

    def char_class(self) -> Item:
        self.pos += 1
        negated = self.text.startswith("^", self.pos)
        self.pos += negated
        ranges = []
        while not self.text.startswith("]", self.pos):
            low = self.char()
            high = low
            if self.text.startswith("-", self.pos) and not self.text.startswith("-]", self.pos):
                self.pos += 1
                high = self.char()
            ranges.append((low, high))
        self.pos += 1
        return Item("class", (tuple(ranges), negated))

    def repeat(self, atom: Item, nested: bool) -> Item:
        char = self.text[self.pos : self.pos + 1]
        bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}.get(char)
        if bounds:
            self.pos += 1
        elif char == "{":
            found = re.compile(r"\{\s*(\d+)\s*(,\s*(\d*)\s*)?\}").match(self.text, self.pos)
            if not found:
                raise self.fail("malformed repetition")
            self.pos = found.end()
            low = int(found.group(1))
            high = low if found.group(2) is None else (int(found.group(3)) if found.group(3) else None)
            if high is not None and high < low:
                raise self.fail("repetition range is empty")
            bounds = (low, high)
        else:
            return atom
        self.space(nested)
        return Item(atom.kind, atom.value, *bounds)


class Grammar:
    """A parsed grammar: rule name -> alternatives."""

    def __init__(self, rules: dict[str, tuple[Sequence, ...]]) -> None:
        self.rules = rules
        self._depth = _escape_depths(rules)

    def sample(self, rng: random.Random) -> str:
        """A random string of the grammar's language, as a model with random weights would write it."""
        out: list[str] = []
        self._alternatives(self.rules["root"], rng, out, 0)
        return "".join(out)

    def _alternatives(self, options: tuple[Sequence, ...], rng: random.Random, out: list[str], depth: int) -> None:
        if depth > _DEEP:
            options = (min(options, key=lambda seq: _seq_depth(seq, self._depth)),)
        for item in rng.choice(options):
            high = item.high if item.high is not None else item.low + _OPEN_MAX
            if depth > _DEEP:
                high = item.low
            for _ in range(rng.randint(item.low, high)):
                self._item(item, rng, out, depth + 1)

    def _item(self, item: Item, rng: random.Random, out: list[str], depth: int) -> None:
        if item.kind == "lit":
            out.append(str(item.value))
        elif item.kind == "class":
            ranges, negated = cast(tuple[tuple[tuple[str, str], ...], bool], item.value)
            out.append(_class_char(ranges, negated, rng))
        elif item.kind == "ref":
            self._alternatives(self.rules[str(item.value)], rng, out, depth)
        else:
            self._alternatives(cast(tuple[Sequence, ...], item.value), rng, out, depth)


def _class_char(ranges: tuple[tuple[str, str], ...], negated: bool, rng: random.Random) -> str:
    if not negated:
        low, high = rng.choice(ranges)
        return chr(rng.randint(ord(low), ord(high)))
    allowed = [c for c in "abcdefghijklmnopqrstuvwxyz0123456789 " if not any(lo <= c <= hi for lo, hi in ranges)]
    return rng.choice(allowed) if allowed else "~"


def _item_depth(item: Item, depth: dict[str, float]) -> float:
    if item.low == 0:
        return 0
    if item.kind == "ref":
        return depth[str(item.value)]
    if item.kind == "group":
        return 1 + min(_seq_depth(seq, depth) for seq in item.value)  # type: ignore[attr-defined]
    return 0


def _seq_depth(seq: Sequence, depth: dict[str, float]) -> float:
    return max((_item_depth(i, depth) for i in seq), default=0)


def _escape_depths(rules: dict[str, tuple[Sequence, ...]]) -> dict[str, float]:
    """For each rule, how deep the shortest way to finish it goes (infinite: it can never finish)."""
    depth = dict.fromkeys(rules, float("inf"))
    for _ in range(len(rules) + 1):
        for name, options in rules.items():
            depth[name] = min(depth[name], 1 + min(_seq_depth(seq, depth) for seq in options))
    return depth


def parse_grammar(text: str) -> Grammar:
    """Parse GBNF. Raises GrammarError for what llama.cpp refuses to load."""
    parser = _Parser(text)
    rules: dict[str, tuple[Sequence, ...]] = {}
    parser.space(True)
    while parser.pos < len(text):
        name = parser.name()
        parser.space(False)
        if not text.startswith("::=", parser.pos):
            raise parser.fail(f"expected '::=' after '{name}'")
        parser.pos += 3
        parser.space(True)
        rules[name] = parser.alternatives(False)
        if parser.pos < len(text) and text[parser.pos] not in "\r\n":
            raise parser.fail(f"unexpected '{text[parser.pos]}'")
        parser.space(True)
    if "root" not in rules:
        raise GrammarError("grammar does not contain a 'root' rule")
    for options in rules.values():
        for name in _refs(options):
            if name not in rules:
                raise GrammarError(f"undefined rule identifier '{name}'")
    grammar = Grammar(rules)
    if grammar._depth["root"] == float("inf"):
        raise GrammarError("the root rule can never finish")
    return grammar


def _refs(options: tuple[Sequence, ...]) -> list[str]:
    found = []
    for seq in options:
        for item in seq:
            if item.kind == "ref":
                found.append(str(item.value))
            elif item.kind == "group":
                found += _refs(item.value)  # type: ignore[arg-type]
    return found
