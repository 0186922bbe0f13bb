"""BFCL's multi-turn ground truth as the reference server reads it: a call string such as
"mv(source='final_report.pdf', destination='temp')" into a function name and an arguments object.

The server's own reader (`ast`, literal values only, never eval), apart from the one the scorer uses: the server
must not agree with the code it checks by sharing it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from qualeval.errors import InputError
from qualeval.sim.answerkey import KeyedCall

__all__ = ["parameter_order", "read_call"]


def parameter_order(tools: Sequence[Any]) -> dict[str, tuple[str, ...]]:
    """Each offered function's parameter names in the order its schema lists them: BFCL writes some calls with
    positional arguments ("sort('final_report.pdf')"), which fill the parameters in that order."""
    order: dict[str, tuple[str, ...]] = {}
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        props = (function.get("parameters") or {}).get("properties") or {}
        order[function["name"]] = tuple(props) if isinstance(props, dict) else ()
    return order


def _name(node: ast.expr) -> str | None:
    """`f` or `a.b.f` as text; None for anything else a call could be made on."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _name(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def read_call(text: str, order: Mapping[str, tuple[str, ...]]) -> KeyedCall:
    """One ground-truth call string as the call the server sends; raises InputError naming the string when it is
    not one call with literal arguments. `order`: parameter names by function (parameter_order)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise InputError(f"ground truth {text[:80]!r}: not a Python call") from None
    call = tree.body
    name = _name(call.func) if isinstance(call, ast.Call) else None
    if not isinstance(call, ast.Call) or name is None:
        raise InputError(f"ground truth {text[:80]!r}: not a call of a named function")
    params = order.get(name, ())
    arguments: dict[str, Any] = {}
    try:
        for n, node in enumerate(call.args):
            if isinstance(node, ast.Starred):
                raise ValueError
            arguments[params[n] if n < len(params) else f"arg{n}"] = ast.literal_eval(node)
        for keyword in call.keywords:
            if keyword.arg is None:  # **kwargs: nothing literal to read
                raise ValueError
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
    except (ValueError, TypeError, SyntaxError):
        raise InputError(f"ground truth {text[:80]!r}: an argument is not a literal value") from None
    return KeyedCall(name, arguments)
