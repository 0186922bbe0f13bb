"""What a reference server is told: its flavour, model, answer key, pacing, faults and limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from qualeval.errors import InputError
from qualeval.sim.behaviour import Behaviour
from qualeval.sim.toolwrite import MARKUP_FORMATS

__all__ = ["FAULTS", "TOOL_FAULTS", "Latency", "SimConfig", "has_key", "parse_faults"]

WIRE_FAULTS = ("429", "500", "503", "drop", "malformed", "slow-headers", "empty-choices", "stall", "html", "context")
"""Drawn per request (its body and how often it came): a retry may pass."""
TOOL_FAULTS = (
    "call_in_reasoning",
    "markup_in_content_stream",
    "empty_tool_calls",
    "stop_with_calls",
    "args_invalid_json",
    "delta_without_index",
    "truncated_call",
    "whitespace_stripped",
    "markup_in_content",
    "calls_dropped_at_high_effort",
)
"""How a server's tool parser breaks an answer that is a call: drawn per item (its question), so the same item
breaks alike streamed and not, on every retry; only requests that offer `tools` for a keyed call meet them."""
FAULTS = WIRE_FAULTS + TOOL_FAULTS


@dataclass(frozen=True, slots=True)
class Latency:
    ttft_ms: float = 40.0
    prefill_ms_per_token: float = 0.02
    decode_ms: float = 8.0
    """Per-token interval of one lone request."""
    batch_slowdown: float = 0.03
    """Each further request in flight stretches the decode interval by this share, as a batch does."""
    jitter: float = 0.1
    burst: bool = False
    """No delays at all: for client benchmarks."""


@dataclass(frozen=True, slots=True)
class SimConfig:
    flavour: str = "vllm"
    """A name in the server's flavour table (`FLAVOURS` unless the server is given another); checked there."""
    host: str = "127.0.0.1"
    port: int = 8011
    model: str = "sim"
    answers: Path | None = None
    tasks: tuple[str, ...] = ()
    """Tasks whose samples form the answer key (with or instead of `answers`)."""
    task_data: Path | dict[str, Path] | None = None
    """Local data for `tasks`: one path for all, or by task name (`{"gsm8k": ..., "humaneval": ...}`)."""
    behaviour: Behaviour = field(default_factory=Behaviour)
    latency: Latency = field(default_factory=Latency)
    max_running: int = 0
    """Requests decoded at once; more wait in a queue (0: no limit)."""
    faults: dict[str, float] = field(default_factory=dict)
    """Fault name -> probability per request."""
    retry_after: float = 1.0
    slow_headers_s: float = 5.0
    stall_s: float = 3600.0
    ignore_constraints: bool = False
    """Ignore structured-output requests, like some vLLM versions with a reasoning parser on."""
    ignore_effort: bool = False
    """Ignore `reasoning_effort`, like a server whose chat template never reads it (the thinking is the same)."""
    require_reasoning_content: bool = False
    """Refuse (HTTP 400) an assistant turn with tool calls sent back without its `reasoning_content`, as DeepSeek
    V3.2/V4 do in thinking mode."""
    max_model_len: int = 32768
    api_key: str | None = None
    thinking_opened: bool = False
    """The chat template opens the think block itself, so the model writes only `</think>` (llamacpp)."""
    accuracy_half_tokens: int = 0
    """Accuracy halves every this many prompt tokens (0: the same at every length): long-context decay."""
    spec_draft: int = 0
    """Speculative decoding: draft tokens proposed per step (0: off)."""
    spec_accept: float = 0.6
    """Probability that each draft token is accepted (until the first rejection in a step)."""
    kv_tokens: int = 262144
    """KV-cache capacity in tokens, for the KV-cache usage gauge."""
    log: Path | None = None
    """Append one JSON line per request: what the server received and sent, and when."""
    tool_format: str | None = None
    """The markup the model writes its calls in (a name of MARKUP_FORMATS), seen where a tool fault leaves it in
    the content or the reasoning; None: Qwen3 XML in the reasoning, Hermes JSON in the content."""

    def __post_init__(self) -> None:
        for name, rate in self.faults.items():
            if name not in FAULTS:
                raise InputError(f"unknown fault '{name}': expected one of {', '.join(FAULTS)}")
            if not 0 <= rate <= 1:
                raise InputError(f"fault '{name}': rate must be between 0 and 1, got {rate}")
        if self.tool_format is not None and self.tool_format not in MARKUP_FORMATS:
            raise InputError(f"unknown tool format '{self.tool_format}': expected one of {', '.join(MARKUP_FORMATS)}")
        for group, what in ((WIRE_FAULTS, "a request"), (TOOL_FAULTS, "an item")):
            total = sum(rate for name, rate in self.faults.items() if name in group)
            if total > 1 + 1e-9:
                # one draw picks at most one fault of a group: past 1 in all, the later names would get less than said
                raise InputError(f"--faults: the rates add up to {total:g}; {what} meets one fault at most: 1 at most")


def has_key(config: SimConfig) -> bool:
    """Whether the server was given questions and answers; without them every answer is a refusal (accuracy 0)."""
    return bool(config.answers or config.tasks)


def parse_faults(spec: str) -> dict[str, float]:
    """'429=0.05,drop=0.01' -> {'429': 0.05, 'drop': 0.01}."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, sep, rate = part.partition("=")
        try:
            out[name.strip()] = float(rate) if sep else 1.0
        except ValueError:
            raise InputError(f"--faults: '{part}' is not NAME=RATE") from None
    return out
