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

__all__ = ["Counter", "Filler", "counter_for", "fit", "place", "root_of"]

_WORD_END = re.compile(r"\s+")
Count = Callable[[str], Awaitable[int]]


@dataclass(slots=True)
class Counter:
    """Counts the tokens of a text; `source` says how (server, tokenizer, calibrated)."""

    source: str
    count: Count
    chars_per_token: float = 4.0


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


async def fit(counter: Counter, filler: Filler, tokens: int, offset: int) -> tuple[str, int]:
    """Filler text of `tokens` tokens (as `counter` counts them) from word `offset`, and its count.

    Each count rescales the length by the ratio missed; within half a percent (or one token) is close enough."""
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
    return best


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

    return Counter(f"tokenizer:{path.name}", count)


def server_counter(http: httpx.AsyncClient, root: str, model: str) -> Counter:
    """`POST {root}/tokenize`: vLLM and SGLang read `prompt`, llama.cpp `content`; vLLM answers `count`,
    the others a `tokens` list."""

    async def count(text: str) -> int:
        body = {"model": model, "prompt": text, "content": text, "add_special_tokens": False}
        try:
            reply = await http.post(f"{root}/tokenize", content=orjson.dumps(body))
        except httpx.HTTPError as exc:
            raise EndpointError(f"{root}/tokenize: {type(exc).__name__} while counting a prompt") from None
        if reply.status_code != 200:
            raise InputError(f"{root}/tokenize answered HTTP {reply.status_code} while counting a prompt")
        data = reply.json()
        return int(data["count"]) if "count" in data else len(data["tokens"])

    return Counter("server", count)


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
