"""Which responses compare, board and gate pair when a run was sent with --stream-parity: each of its items at
two levels, `stream=on` and `stream=off` (beside any other level part: `c=4 stream=on`).

Like is paired with like, and the output says which (never a silent pool of both sides):
- every run a parity run: streamed with streamed and non-streamed with non-streamed, each side a group of its own
  (`task @ stream=on`, `task @ stream=off`);
- parity runs beside plain runs: the parity runs' side sent as the plain runs were (streamed, or not with
  --no-stream) pairs with them; their other side is in no paired figure, only in their own stream parity;
- plain runs sent some streamed and some not, beside a parity run: which of its sides stands for it is not ours to
  pick, so the set is refused in one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from qualeval.errors import InputError
from qualeval.records import Record

__all__ = ["match_streams", "stream_of", "without_stream"]

_PARTS = {"stream=on": True, "stream=off": False}

Keyed = Mapping[tuple[str, ...], Record]


def stream_of(level: str) -> bool | None:
    """True for a `stream=on` level, False for `stream=off`, None for a level of no parity run."""
    return next((_PARTS[part] for part in level.split() if part in _PARTS), None)


def without_stream(level: str) -> str:
    """A level's label without its stream part: what the two sides of a parity run share."""
    return " ".join(part for part in level.split() if part not in _PARTS)


def _parity_run(records: Keyed) -> bool:
    return bool(records) and all(len(k) > 3 and stream_of(k[3]) is not None for k in records)


def _one_side(records: Keyed, streamed: bool) -> dict[tuple[str, ...], Record]:
    """The responses of one side, keyed at their level without its stream part."""
    return {(*k[:3], without_stream(k[3])): r for k, r in records.items() if stream_of(k[3]) is streamed}


def _way(streamed: bool) -> str:
    return "streamed" if streamed else "not streamed"


def _other(side: str) -> str:
    return "stream=off" if side == "stream=on" else "stream=on"


def _plain_way(runs: Sequence[tuple[Path, Keyed]]) -> bool:
    """How the plain runs were sent: one way for all of them, or one line refusing the set."""
    ways = {(path, bool(r.request.stream)) for path, records in runs for r in records.values()}
    if len({way for _, way in ways}) == 1:
        return next(iter(ways))[1]
    on = next(str(p) for p, way in sorted(ways) if way)
    off = next(str(p) for p, way in sorted(ways) if not way)
    raise InputError(
        f"{on} was sent streamed and {off} not, beside a --stream-parity run: which of its two sides pairs with "
        "them is not one to pick; set the parity run beside runs sent one way (or beside another parity run)"
    )


def match_streams(runs: Sequence[tuple[Path, Keyed]]) -> tuple[list[Keyed], str | None]:
    """Each run's records as they pair (the module's rule), and the sentence that says so; None where no run is a
    parity run (nothing to say, nothing changed)."""
    parity = [_parity_run(records) for _, records in runs]
    if not any(parity):
        return [records for _, records in runs], None
    if all(parity):
        note = (
            "every run was sent with --stream-parity: streamed responses pair with streamed ones (stream=on) and "
            "non-streamed with non-streamed (stream=off), each side compared on its own"
        )
        return [records for _, records in runs], note
    streamed = _plain_way([run for run, p in zip(runs, parity, strict=True) if not p])
    side = "stream=on" if streamed else "stream=off"
    named = [str(path) for (path, _), p in zip(runs, parity, strict=True) if p]
    its = "its" if len(named) == 1 else "their"
    note = (
        f"{' and '.join(named)} sent each item both ways (--stream-parity); the other runs were {_way(streamed)}, "
        f"so only {its} {side} responses are paired with theirs; {its} {_other(side)} responses are in no paired "
        f"figure, only in {its} own stream parity"
    )
    return [_one_side(records, streamed) if p else records for (_, records), p in zip(runs, parity, strict=True)], note
