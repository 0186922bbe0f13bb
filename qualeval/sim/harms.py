"""What a serving setting costs the simulated model's answers, so a serving decision can be rehearsed without a GPU:
accuracy that falls with the requests in flight, and answers corrupted by speculative decoding or by a quantized
KV cache."""

from __future__ import annotations

import math

__all__ = ["corruption", "load_factor"]


def load_factor(harm: float, in_flight: int) -> float:
    """The share of its accuracy a request keeps with `in_flight` requests decoded together, itself included:
    (1 - harm) for each doubling, so a lone request keeps all of it."""
    return (1.0 - harm) ** math.log2(max(in_flight, 1))


def corruption(spec_corrupt: float, kv_quant_harm: float, tokens: int) -> float:
    """The chance an answer written after `tokens` output tokens is corrupted: speculative decoding's share, or the
    KV cache's quantization error, which builds up with what is written (1 - exp(-harm * tokens / 1000))."""
    kv = 1.0 - math.exp(-kv_quant_harm * tokens / 1000.0)
    return 1.0 - (1.0 - spec_corrupt) * (1.0 - kv)
