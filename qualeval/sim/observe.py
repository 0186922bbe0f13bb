"""What the reference server tells about itself: Prometheus `/metrics`, `/tokenize`, and a log of what it sent.

`/metrics` uses the real servers' metric names (each flavour names its family's `Metrics`), so the client reads
the reference server exactly as it reads a real one. Flavours whose real counterparts have neither `/metrics` nor
`/tokenize` (the APIs, Ollama) name none.

Output forcing (`ignore_eos`, `min_tokens`) and speculative decoding are simulated here too: the first writes
neutral words after the answer until the asked length, the second draws how many draft tokens each step accepts.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from qualeval.sim.behaviour import PlannedReply, tokenize

__all__ = [
    "Metrics",
    "Observed",
    "decay",
    "force_length",
    "log_record",
    "metrics_text",
    "spec_steps",
    "speedup",
    "tokenized",
]


@dataclass(frozen=True, slots=True)
class Metrics:
    """How one server family names its Prometheus metrics."""

    names: tuple[tuple[str, str, str], ...]
    """(our counter or gauge, the server's metric name, kind), in the order the server exports them."""
    labelled: bool = True
    """The samples carry `engine` and `model_name` labels (vLLM, SGLang; llama.cpp's carry none)."""


_WORDS = tokenize(" and the river ran on past the old mill while the light went slowly down over the hills")


@dataclass(slots=True)
class Observed:
    """Counters and gauges of one server, and the optional log it writes (one JSON line per request)."""

    kv_tokens: int = 262144
    waiting: int = 0
    in_kv: int = 0
    counters: dict[str, float] = field(default_factory=dict)
    recent: list[str] = field(default_factory=list)
    log: IO[bytes] | None = None

    def add(self, name: str, value: float) -> None:
        self.counters[name] = self.counters.get(name, 0.0) + value

    def admitted(self, prompt: str, prompt_tokens: int, planned: int) -> int:
        """A request starts decoding: prompt tokens, prefix-cache hits (its longest shared start with a recent
        prompt), KV-cache occupancy; returns the KV tokens it holds."""
        shared = max((_common(prompt, p) for p in self.recent), default=0)
        self.recent = [*self.recent[-7:], prompt]
        self.add("prompt_tokens", prompt_tokens)
        self.add("prefix_queries", prompt_tokens)
        self.add("prefix_hits", min(len(tokenize(prompt[:shared])), prompt_tokens))
        held = prompt_tokens + planned
        if self.in_kv + held > self.kv_tokens:
            self.add("preemptions", 1)  # a real engine would evict a running request to make room
        self.in_kv += held
        return held

    def finished(self, held: int, tokens: int, steps: tuple[int, int, int] | None, record: dict[str, Any]) -> None:
        self.in_kv -= held
        self.add("generation_tokens", tokens)
        self.add("requests", 1)
        if steps is not None:
            self.add("drafts", steps[0])
            self.add("draft_tokens", steps[1])
            self.add("accepted_tokens", steps[2])
        if self.log is not None:
            self.log.write(orjson.dumps(record) + b"\n")
            self.log.flush()

    def values(self, running: int) -> dict[str, float]:
        out = dict(self.counters)
        out["running"], out["waiting"] = float(running), float(self.waiting)
        out["kv_usage"] = min(self.in_kv / self.kv_tokens, 1.0) if self.kv_tokens else 0.0
        queries = out.get("prefix_queries", 0.0)
        out["hit_rate"] = out.get("prefix_hits", 0.0) / queries if queries else 0.0
        drafts = out.get("drafts", 0.0)
        out["accept_length"] = 1 + out.get("accepted_tokens", 0.0) / drafts if drafts else 0.0
        return out


def _common(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def metrics_text(metrics: Metrics, observed: Observed, running: int, model: str) -> bytes:
    """The Prometheus text exposition of the server's state, in its family's metric names."""
    values = observed.values(running)
    labels = f'{{engine="0",model_name="{model}"}}' if metrics.labelled else ""
    lines: list[str] = []
    for ours, name, kind in metrics.names:
        value = values.get(ours, 0.0)
        lines.append(f"# HELP {name} simulated by qualeval's reference server")
        lines.append(f"# TYPE {name} {kind}")
        lines.append(f"{name}{'_total' if kind == 'counter' else ''}{labels} {value!r}")
    return ("\n".join(lines) + "\n").encode()


def tokenized(raw: bytes, max_model_len: int) -> dict[str, Any] | None:
    """vLLM's and SGLang's `/tokenize`: a `prompt` string, or chat `messages` counted as the chat route counts
    them (4 tokens of template per message). None: the body is not a request to tokenize."""
    try:
        body = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("messages"), list):
        texts = [str(m.get("content", "")) for m in body["messages"] if isinstance(m, dict)]
        count = len(tokenize("\n".join(texts))) + 4 * len(texts)
    elif isinstance(body.get("prompt"), str):
        count = len(tokenize(body["prompt"]))
    else:
        return None
    # ids stand for the tokens; a client counts them, it never decodes them
    return {"count": count, "max_model_len": max_model_len, "tokens": list(range(count)), "token_strs": None}


def force_length(gen: PlannedReply, body: dict[str, Any], max_tokens: int | None) -> None:
    """`ignore_eos` writes on to `max_tokens`; `min_tokens` writes on to at least that many (vLLM's sampling
    parameters). The extra words follow the answer, as a model that was not allowed to stop writes on."""
    wanted = 0
    if body.get("ignore_eos") is True and max_tokens:
        wanted = max_tokens
    minimum = body.get("min_tokens")
    if isinstance(minimum, int) and not isinstance(minimum, bool) and minimum > 0:
        wanted = max(wanted, min(minimum, max_tokens or minimum))
    have = len(gen.reasoning) + len(gen.answer) + (1 if gen.reasoning and gen.closed else 0)
    if wanted <= have or (gen.reasoning and not gen.closed):
        return
    more = wanted - have
    gen.answer = gen.answer + (_WORDS * (more // len(_WORDS) + 1))[:more]
    if max_tokens is not None and wanted >= max_tokens:
        gen.finish = "length"


def spec_steps(tokens: int, draft: int, accept: float, seed: object) -> tuple[int, int, int] | None:
    """(drafts, draft tokens, accepted tokens) of speculative decoding over `tokens` outputs: each step proposes
    `draft` tokens, accepted one by one with probability `accept` until the first rejection, plus the one token
    the target model adds. None when speculation is off."""
    if draft <= 0 or tokens <= 0:
        return None
    rng = random.Random(str(seed))
    made = drafts = accepted = 0
    while made < tokens:
        taken = 0
        while taken < draft and rng.random() < accept:
            taken += 1
        drafts += 1
        accepted += taken
        made += taken + 1
    return drafts, drafts * draft, accepted


def speedup(tokens: int, steps: tuple[int, int, int] | None) -> float:
    """Per-token time shrinks by the tokens each verification step yields (one step costs one decode)."""
    if steps is None or tokens <= 0:
        return 1.0
    return max(steps[0], 1) / tokens


def log_record(received: float, prompt_tokens: int, tokens: int, first: float | None, end: float) -> dict[str, Any]:
    """One line of the server's own log: when it received the request and sent its first and last token."""
    return {
        "received": received,
        "wall": time.time(),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": tokens,
        "first_token_ms": None if first is None else (first - received) * 1000.0,
        "end_ms": (end - received) * 1000.0,
    }


def decay(accuracy: float, prompt_tokens: int, half_tokens: int) -> float:
    """Accuracy at a context length: halved every `half_tokens` prompt tokens (0: no decay)."""
    if half_tokens <= 0:
        return accuracy
    return accuracy * math.pow(0.5, prompt_tokens / half_tokens)
