"""Prompts of a given length in tokens: who counts them, the filler text they are cut from, and where an item sits.

Tokens are counted, in order of preference, by the server itself (`POST /tokenize`, as vLLM, SGLang and
llama.cpp answer it), by `tokenizers` with a local tokenizer file (`--tokenizer`), or, where neither exists,
from characters at a rate calibrated on the server's own `usage.prompt_tokens`. Every prompt records which
(`prompt_count`: `server`, `tokenizer`, `calibrated`), since only the first two are exact.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import orjson

from qualeval.errors import EndpointError, InputError

__all__ = ["Counter", "Filler", "Overhead", "counter_for", "fit", "place", "root_of", "template_overhead"]

_WORD_END = re.compile(r"\s+")
Count = Callable[[str], Awaitable[int]]


@dataclass(slots=True)
class Counter:
    """Counts the tokens of a text; `source` says how (server, tokenizer, calibrated)."""

    source: str
    count: Count
    chars_per_token: float = 4.0
    with_specials: Count | None = None
    """The same count with the special tokens the tokenizer adds to a text (a BOS), where that can be asked."""

    async def added(self) -> int:
        """Tokens the tokenizer adds to any text of its own (vllm bench serve's `num_special_tokens_to_add`):
        0 where that cannot be asked (a calibrated count)."""
        if self.with_specials is None:
            return 0
        text = "one two three four five"
        return max(0, await self.with_specials(text) - await self.count(text))


def root_of(base_url: str) -> str:
    """The server root of an OpenAI-style base URL: `/tokenize` and `/metrics` live beside `/v1`, not in it."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class Filler:
    """A text to cut prompts from: the shipped public-domain default, or the user's own file (`--filler`)."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            text = (resources.files("qualeval.serving") / "texts" / "filler.txt").read_text(encoding="utf-8")
            text = text.split("\n", 2)[-1]  # the title and dedication line are not prose to repeat
        else:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(f"{path}: cannot read the filler text ({exc})") from None
        words = _WORD_END.split(text.strip())
        if len(words) < 20:
            raise InputError(f"{path or 'filler.txt'}: the filler text needs at least 20 words, has {len(words)}")
        self.words = words

    def take(self, chars: int, offset: int) -> str:
        """About `chars` characters of whole words, starting at word `offset` and wrapping around the text."""
        out: list[str] = []
        size = 0
        i = offset % len(self.words)
        while size < chars:
            word = self.words[i % len(self.words)]
            out.append(word)
            size += len(word) + 1
            i += 1
        return " ".join(out)

    def offset(self, seed: object) -> int:
        """A start word drawn from the seed: prompts begin in different places, so they share no prefix."""
        return random.Random(str(seed)).randrange(len(self.words))


async def fit(counter: Counter, filler: Filler, tokens: int, offset: int, exact: bool = False) -> tuple[str, int]:
    """Filler text of `tokens` tokens (as `counter` counts them) from word `offset`, and its count.

    Each count rescales the length by the ratio missed; within half a percent (or one token) is close enough,
    unless `exact`: then the text is cut to the character where it holds exactly `tokens`, where there is one (as
    a tool that slices a tokenized book does; never for a calibrated count, which has no exact length)."""
    if tokens <= 0:
        return "", 0
    chars = max(int(tokens * counter.chars_per_token), 1)
    best: tuple[str, int] | None = None
    for _ in range(8):
        text = filler.take(chars, offset)
        counted = await counter.count(text)
        if best is None or abs(counted - tokens) < abs(best[1] - tokens):
            best = (text, counted)
        if abs(counted - tokens) <= max(1, tokens // 200) or counted == 0:
            break
        chars = max(1, int(len(text) * tokens / counted))
    assert best is not None
    if exact and best[1] != tokens and counter.source != "calibrated":
        return await _cut(counter, filler.take(int(len(best[0]) * 1.05) + 16, offset), tokens, best)
    return best


async def _cut(counter: Counter, text: str, tokens: int, best: tuple[str, int]) -> tuple[str, int]:
    """The longest prefix of `text` that counts at most `tokens` (a binary search over its characters; never
    ending in a space, which would join what follows it), if it comes closer than `best`."""
    if await counter.count(text) <= tokens:
        return best
    low, low_count, high = 0, 0, len(text)
    while high - low > 1:
        mid = (low + high) // 2
        counted = await counter.count(text[:mid].rstrip())
        if counted <= tokens:
            low, low_count = mid, counted
        else:
            high = mid
    cut = text[:low].rstrip()
    return (cut, low_count) if abs(low_count - tokens) < abs(best[1] - tokens) else best


async def place(
    counter: Counter, filler: Filler, item: str, tokens: int, depth: float, offset: int
) -> tuple[str, int, int]:
    """The item inside filler so that the whole is `tokens` tokens: after the filler (depth 1) or at `depth`
    of the way into it. Returns the text, its counted length and the filler's own tokens."""
    own = await counter.count(item)
    text, got = await fit(counter, filler, max(tokens - own, 0), offset)
    if not text:
        return item, own, 0
    words = text.split(" ")
    cut = round(len(words) * min(max(depth, 0.0), 1.0))
    before, after = " ".join(words[:cut]), " ".join(words[cut:])
    whole = "\n\n".join(part for part in (before, item, after) if part)
    return whole, await counter.count(whole), got


# --- the chat template's own tokens ---------------------------------------------------------------------

WARMUP = "Warmup " * 10
"""llama-benchy's warm-up text (its client.py), with which it measures the chat template's overhead."""
CONTEXT_PROBE = "."
"""llama-benchy's user turn after a context (system) message in that measurement (CONTEXT_LOAD_USER_MESSAGE)."""
PromptTokensOf = Callable[[list[dict[str, str]]], Awaitable[int | None]]


@dataclass(frozen=True, slots=True)
class Overhead:
    """What the chat template adds to a conversation of these roles: the server's usage.prompt_tokens for
    llama-benchy's warm-up conversation of that shape, less its messages' own tokens."""

    roles: tuple[str, ...]
    server: int | None
    """usage.prompt_tokens of the warm-up request; None: the server reported none (nothing is taken off)."""
    text: int

    @property
    def tokens(self) -> int:
        return 0 if self.server is None else self.server - self.text


def probe_conversation(roles: tuple[str, ...]) -> list[dict[str, str]]:
    """llama-benchy's warm-up conversation for this shape: its warm-up text in every message, except that after a
    system message (its context probe) the last user turn is '.'."""
    out = [{"role": role, "content": WARMUP} for role in roles]
    if len(roles) > 1 and roles[0] == "system" and roles[-1] == "user":
        out[-1]["content"] = CONTEXT_PROBE
    return out


async def template_overhead(counter: Counter, prompt_tokens_of: PromptTokensOf, roles: tuple[str, ...]) -> Overhead:
    """The template's tokens for a conversation of these roles, measured as llama-benchy measures them in its
    warm-up: one request (max_tokens 1), its usage.prompt_tokens less what the counter counts in its messages."""
    messages = probe_conversation(roles)
    served = await prompt_tokens_of(messages)
    own = 0
    for message in messages:
        own += await counter.count(message["content"])
    return Overhead(roles, served, own)


# --- the counters -------------------------------------------------------------------------------------


def tokenizer_counter(path: Path) -> Counter:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise InputError(f"--tokenizer {path}: needs the tokenizers package: pip install tokenizers") from None
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:  # the library raises a plain Exception for a missing or malformed file
        raise InputError(f"--tokenizer {path}: not a tokenizer.json that tokenizers can load ({exc})") from None

    async def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    async def with_specials(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=True).ids)

    return Counter(f"tokenizer:{path.name}", count, with_specials=with_specials)


def server_counter(http: httpx.AsyncClient, root: str, model: str) -> Counter:
    """`POST {root}/tokenize`: vLLM and SGLang read `prompt` and `add_special_tokens`, llama.cpp `content` and
    `add_special`; vLLM answers `count`, the others a `tokens` list."""

    async def tokens(text: str, special: bool) -> int:
        body = {"model": model, "prompt": text, "content": text, "add_special_tokens": special, "add_special": special}
        try:
            reply = await http.post(f"{root}/tokenize", content=orjson.dumps(body))
        except httpx.HTTPError as exc:
            raise EndpointError(f"{root}/tokenize: {type(exc).__name__} while counting a prompt") from None
        if reply.status_code != 200:
            raise InputError(f"{root}/tokenize answered HTTP {reply.status_code} while counting a prompt")
        data = reply.json()
        return int(data["count"]) if "count" in data else len(data["tokens"])

    async def count(text: str) -> int:
        return await tokens(text, False)

    async def with_specials(text: str) -> int:
        return await tokens(text, True)

    return Counter("server", count, with_specials=with_specials)


async def _works(counter: Counter) -> bool:
    try:
        return await counter.count("one two three four five") > 0
    except (EndpointError, InputError, ValueError, KeyError, TypeError):
        return False


async def counter_for(
    base_url: str,
    model: str,
    headers: dict[str, str],
    tokenizer: Path | None,
    usage_of: Callable[[str], Awaitable[int | None]],
    http: httpx.AsyncClient,
) -> Counter:
    """The best counter this endpoint allows. `usage_of(text)` sends one short chat request and returns its
    `usage.prompt_tokens` (for calibration)."""
    if tokenizer is not None:
        chosen = tokenizer_counter(tokenizer)
    else:
        chosen = server_counter(http, root_of(base_url), model)
        if not await _works(chosen):
            chosen = await _calibrated(usage_of)
    sample = " ".join(Filler().take(2000, 0).split(" ")[:-1])
    counted = await chosen.count(sample)
    chosen.chars_per_token = len(sample) / counted if counted else 4.0
    return chosen


async def _calibrated(usage_of: Callable[[str], Awaitable[int | None]]) -> Counter:
    """Characters per token from two prompts that differ only in length: the chat template's own tokens cancel."""
    filler = Filler()
    short, long = filler.take(400, 0), filler.take(4000, 0)
    a, b = await usage_of(short), await usage_of(long)
    if a is None or b is None or b <= a:
        raise InputError(
            "cannot count prompt tokens here: no /tokenize route and no usage.prompt_tokens in answers; "
            "give --tokenizer PATH (a tokenizer.json)"
        )
    rate = (len(long) - len(short)) / (b - a)

    async def count(text: str) -> int:
        return max(1, round(len(text) / rate)) if text else 0

    return Counter("calibrated", count, rate)


def headers_of(api_key: Any) -> dict[str, str]:
    """The Authorization header for side routes (/tokenize, /metrics): the key goes only into the header; without
    one given, OPENAI_API_KEY, as the chat client reads it."""
    secret = api_key.get_secret_value() if hasattr(api_key, "get_secret_value") else api_key
    secret = secret or os.environ.get("OPENAI_API_KEY")
    return {"Authorization": f"Bearer {secret}"} if secret else {}
