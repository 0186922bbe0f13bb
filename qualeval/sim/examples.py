"""Values that fit what a request constrains its answer to: a string a regex matches, a value a JSON schema allows.

The reference server forces its answer into them, as a constrained decoder would.
"""

from __future__ import annotations

import random
import re
import re._parser as sre_parse  # the public `sre_parse` alias warns on import since 3.11
from typing import Any

__all__ = ["as_number", "json_example", "regex_example"]


def as_number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("$", "").strip())
    except ValueError:
        return None


def regex_example(pattern: str, rng: random.Random) -> str:
    """A string that matches `pattern`, from its parse tree (enough for constraint probes)."""

    def walk(items: Any) -> str:
        out = []
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                out.append(chr(arg))
            elif name == "IN":
                out.append(_from_set(arg))
            elif name == "ANY":
                out.append("x")
            elif name == "BRANCH":
                out.append(walk(arg[1][0]))
            elif name == "SUBPATTERN":
                out.append(walk(arg[-1]))
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, _high, sub = arg
                out.append(walk(sub) * max(low, 1 if low == 0 and rng.random() < 0.5 else low))
            elif name in ("ATOMIC_GROUP",):
                out.append(walk(arg))
        return "".join(out)

    def _from_set(items: Any) -> str:
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                return chr(arg)
            if name == "RANGE":
                return chr(arg[0])
            if name == "CATEGORY":
                return "7" if "DIGIT" in str(arg) else ("a" if "WORD" in str(arg) else " ")
        return "a"

    text = walk(sre_parse.parse(pattern))
    return text if re.fullmatch(pattern, text) else ""


def json_example(schema: dict[str, Any] | None, answer: str) -> Any:
    """A value `schema` allows that carries `answer`: the answer itself where the schema leaves room for it."""
    if not schema:
        return {"answer": answer}
    kind = schema.get("type")
    if "enum" in schema:
        return answer if answer in schema["enum"] else schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {"answer": {"type": "string"}}
        return {name: json_example(sub, answer) for name, sub in props.items()}
    if kind in ("integer", "number"):
        num = as_number(answer)
        if num is None:
            return 0
        return int(num) if kind == "integer" or num.is_integer() else num
    if kind == "boolean":
        return answer.strip().lower() in ("true", "yes", "valid", "1")
    if kind == "array":
        return [json_example(schema.get("items"), answer)]
    return answer
