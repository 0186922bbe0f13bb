"""The frontier plot's labels never print over one another: points are numbered, points that coincide share one
label, and a key names the levels."""

from __future__ import annotations

import base64
import re

from qualeval.records import Cell, Distribution, FrontierLevel
from qualeval.report.plots import frontier


def _level(name: str, accuracy: float, tokens: float, latency: float) -> FrontierLevel:
    tokens_d = Distribution(n=10, mean=tokens, p50=tokens, p90=tokens, p99=tokens)
    return FrontierLevel(
        level=name,
        accuracy=Cell(n=30, correct=round(30 * accuracy), accuracy=accuracy, low=accuracy - 0.1, high=accuracy + 0.1),
        output_tokens=tokens_d,
        reasoning_tokens=None,
        answer_tokens=None,
        reasoning_truncated=0.0,
        latency_p50=latency,
        latency_p99=latency,
        first_answer_p50=latency,
        efficient_tokens=False,
        efficient_latency=False,
        vs_previous=None,
    )


def _texts(uri: str) -> list[str]:
    svg = base64.b64decode(uri.split(",", 1)[1]).decode()
    return [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)]


def test_levels_at_one_point_share_one_label_and_the_key_names_each_once() -> None:
    levels = [
        _level("effort=low thinking=on", 0.2, 200, 1400),
        _level("effort=low thinking=off", 0.77, 8, 95),
        _level("effort=high thinking=on", 0.77, 1100, 7500),
        _level("effort=high thinking=off", 0.77, 8, 96),
    ]
    texts = _texts(frontier(levels, "gsm8k"))
    assert texts.count("2,4") == 2  # one label per plot for the two thinking-off levels at one point
    for name in ("effort=low thinking=off", "effort=high thinking=off"):
        assert sum(name in t for t in texts) == 1  # in the key, never again beside a point
