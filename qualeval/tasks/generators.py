"""Built-in generated datasets. A task names one with `generator:`; the file itself stays code-free.

`syllogisms`: every categorical syllogism form (4 moods for each of 3 propositions, in 4 figures: 256 forms),
each asked as "does the conclusion follow?". Validity is computed, not looked up: a form is valid when every
model of its premises satisfies its conclusion, where a model says which of the 8 regions of a three-set Venn
diagram are inhabited. Without existential import 15 forms are valid; with it (every term has members), 24.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from qualeval.errors import InputError

__all__ = ["FIGURES", "generate", "is_valid", "syllogism_forms"]

# premises as (subject, predicate) of the major and minor premise; the conclusion is always S-P
FIGURES = {
    1: (("M", "P"), ("S", "M")),
    2: (("P", "M"), ("S", "M")),
    3: (("M", "P"), ("M", "S")),
    4: (("P", "M"), ("M", "S")),
}
_TERMS = ("S", "M", "P")
_BOTH = (False, True)
_REGIONS = list(itertools.product(_BOTH, _BOTH, _BOTH))  # membership in (S, M, P), one iterable each so it types


def _holds(mood: str, x: str, y: str, inhabited: set[tuple[bool, bool, bool]]) -> bool:
    i, j = _TERMS.index(x), _TERMS.index(y)
    both = any(r[i] and r[j] for r in inhabited)
    x_not_y = any(r[i] and not r[j] for r in inhabited)
    return {"A": not x_not_y, "E": not both, "I": both, "O": x_not_y}[mood]


def is_valid(mood: str, figure: int, *, existential_import: bool = False) -> bool:
    """Whether `mood` (three letters: major, minor, conclusion) in `figure` is valid."""
    (mx, my), (nx, ny) = FIGURES[figure]
    for size in range(len(_REGIONS) + 1):
        for chosen in itertools.combinations(_REGIONS, size):
            inhabited = set(chosen)
            if existential_import and not all(any(r[t] for r in inhabited) for t in range(3)):
                continue
            if (
                _holds(mood[0], mx, my, inhabited)
                and _holds(mood[1], nx, ny, inhabited)
                and not _holds(mood[2], "S", "P", inhabited)
            ):
                return False
    return True


def syllogism_forms() -> list[tuple[str, int]]:
    return [("".join(m), f) for f in FIGURES for m in itertools.product("AEIO", repeat=3)]


def _sentence(mood: str, x: str, y: str) -> str:
    return {"A": f"All {x} are {y}", "E": f"No {x} are {y}", "I": f"Some {x} are {y}", "O": f"Some {x} are not {y}"}[
        mood
    ]


_NONSENSE = [
    "blickets",
    "daxes",
    "wugs",
    "feps",
    "zorbs",
    "glarps",
    "tovs",
    "kimbles",
    "frabs",
    "snerds",
    "plonks",
    "quazzles",
    "vrums",
    "drazzles",
    "yopples",
    "mibbles",
]
# real-world (S, P) pairs by how S relates to P, and middle terms that make plausible-sounding premises
_SUBSET = [
    ("roses", "flowers"),
    ("sparrows", "birds"),
    ("salmon", "fish"),
    ("oaks", "trees"),
    ("violins", "instruments"),
    ("squares", "rectangles"),
    ("carrots", "vegetables"),
    ("cobras", "snakes"),
]
_DISJOINT = [
    ("cats", "fish"),
    ("rocks", "animals"),
    ("spoons", "vegetables"),
    ("bicycles", "birds"),
    ("chairs", "insects"),
    ("clouds", "minerals"),
    ("pianos", "fruits"),
    ("trout", "mammals"),
]
_OVERLAP = [
    ("doctors", "women"),
    ("students", "athletes"),
    ("cars", "red things"),
    ("books", "bestsellers"),
    ("teachers", "parents"),
    ("dogs", "pets"),
    ("houses", "wooden things"),
    ("songs", "hits"),
]
_MIDDLE = [
    "things sold in markets",
    "things found in gardens",
    "objects in the museum",
    "things on the list",
    "items in the catalogue",
    "things Maria owns",
    "things in the picture",
    "things in the report",
]
# which pair kind makes each conclusion mood believable, and which makes it unbelievable
_BELIEVABLE = {"A": _SUBSET, "E": _DISJOINT, "I": _OVERLAP, "O": _OVERLAP}
_UNBELIEVABLE = {"A": _DISJOINT, "E": _SUBSET, "I": _DISJOINT, "O": _SUBSET}
RENDERINGS = ("abstract", "nonsense", "believable", "unbelievable")


def _syllogisms(options: dict[str, Any], where: str) -> list[dict[str, Any]]:
    unknown = set(options) - {"existential_import", "renderings", "seed"}
    if unknown:
        raise InputError(
            f"{where}: field 'generator_options': unknown option '{sorted(unknown)[0]}' "
            "(expected existential_import, renderings, seed)"
        )
    existential = bool(options.get("existential_import", False))
    renderings = tuple(options.get("renderings", RENDERINGS))
    bad = [r for r in renderings if r not in RENDERINGS]
    if bad:
        raise InputError(
            f"{where}: field 'generator_options.renderings': unknown rendering '{bad[0]}' "
            f"(expected {', '.join(RENDERINGS)})"
        )
    rng = random.Random(int(options.get("seed", 0)))
    assumption = (
        "Assume that every category mentioned has at least one member."
        if existential
        else "Do not assume that any category mentioned has members."
    )
    docs = []
    for mood, figure in syllogism_forms():
        valid = is_valid(mood, figure, existential_import=existential)
        for rendering in renderings:
            if rendering == "abstract":
                terms = {"S": "A", "M": "B", "P": "C"}
                credible = "neutral"
            elif rendering == "nonsense":
                s, m, p = rng.sample(_NONSENSE, 3)
                terms = {"S": s, "M": m, "P": p}
                credible = "neutral"
            else:
                pool = (_BELIEVABLE if rendering == "believable" else _UNBELIEVABLE)[mood[2]]
                s, p = rng.choice(pool)
                terms = {"S": s, "M": rng.choice(_MIDDLE), "P": p}
                credible = rendering
            (mx, my), (nx, ny) = FIGURES[figure]
            premises = [_sentence(mood[0], terms[mx], terms[my]), _sentence(mood[1], terms[nx], terms[ny])]
            docs.append(
                {
                    "id": f"{mood}-{figure}-{rendering}",
                    "premises": premises,
                    "conclusion": _sentence(mood[2], terms["S"], terms["P"]),
                    "assumption": assumption,
                    "valid": valid,
                    "target": "yes" if valid else "no",
                    "mood": mood,
                    "figure": figure,
                    "rendering": rendering,
                    "believability": credible,
                }
            )
    return docs


_GENERATORS = {"syllogisms": _syllogisms}


def generate(name: str, options: dict[str, Any], where: str) -> list[dict[str, Any]]:
    if name not in _GENERATORS:
        raise InputError(
            f"{where}: field 'generator': unknown generator '{name}' (expected one of {', '.join(_GENERATORS)})"
        )
    return _GENERATORS[name](options, where)
