"""What reading tool-call markup back costs, against floors run side by side.

    python benchmarks/markup_speed.py

find_markup runs on every answer of a tool run, most of which hold no markup at all. Two targets:

- plain text (9 KB of prose with none of the formats' markers): find_markup costs less than lower-casing the
  same text once (`str.lower`), the floor;
- a model repeating an opening in a loop (one case per format that once took seconds): doubling the text at
  most 3x the time (linear, with room for noise; a quadratic reader gives 4x).

Exit status 1 when a target is missed. A busy machine moves both sides of each ratio; run it alone all the same.
"""

from __future__ import annotations

import sys
import timeit
from collections.abc import Callable
from functools import partial

from qualeval.reasoning import find_markup

PLAIN = "The quick brown fox jumps over the lazy dog. So 2 + 2 = 4, and (a, b) holds. " * 120

LOOPS = {
    "glm": lambda n: "<tool_call>f<arg_key>a</arg_key><arg_value>" * n,
    "kimi": lambda n: "<|tool_call_begin|>x " * n + "<|tool_call_argument_begin|>",
    "deepseek": lambda n: "<｜tool▁call▁begin｜>x " * n + "<｜tool▁sep｜>",
    "dsml": lambda n: '<｜DSML｜invoke x="' * n + '">',
    "minimax": lambda n: "<minimax:tool_call> x " * n + '<invoke name="f">',
    "harmony": lambda n: "<|channel|>commentary to=functions.f " * n + "<|message|>",
    "llama": lambda n: '{"name": "x", "parameters": {}} and\n' * n,
}

PLAIN_TARGET = 1.0
DOUBLING_TARGET = 3.0


def best(fn: Callable[[], object], number: int, repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> int:
    missed = 0
    plain, floor = best(lambda: find_markup(PLAIN), 200), best(PLAIN.lower, 200)
    ratio = plain / floor
    ok = ratio < PLAIN_TARGET
    missed += not ok
    print(
        f"plain 9 KB: find_markup {plain * 1e6:.1f} µs, str.lower {floor * 1e6:.1f} µs, "
        f"ratio {ratio:.2f} (target < {PLAIN_TARGET}) {'ok' if ok else 'MISSED'}"
    )
    for name, make in LOOPS.items():
        short, long = make(3000), make(6000)
        once, twice = best(partial(find_markup, short), 1, 3), best(partial(find_markup, long), 1, 3)
        ratio = twice / once
        ok = ratio < DOUBLING_TARGET
        missed += not ok
        print(
            f"loop {name}: n=3000 {once * 1e3:.2f} ms, n=6000 {twice * 1e3:.2f} ms, "
            f"ratio {ratio:.2f} (target < {DOUBLING_TARGET}) {'ok' if ok else 'MISSED'}"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
