"""BFCL's ground-truth calls are Python call strings (`cd(folder='document')`): read here with `ast`, their
arguments literals only, so nothing in the data is ever evaluated."""

from __future__ import annotations

import ast
from typing import Any

from qualeval.errors import InputError

__all__ = ["parse_call"]


def parse_call(text: str, where: str = "") -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """A call string's function name, positional and keyword arguments (literal values; BFCL's ground truth
    passes some positionally: `sort('final_report.pdf')`); InputError naming `where` otherwise."""
    prefix = f"{where}: " if where else ""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise InputError(f"{prefix}'{text[:80]}' is not a call") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise InputError(f"{prefix}'{text[:80]}' is not a call name(literal, keyword=literal, ...)")
    try:
        args = tuple(ast.literal_eval(arg) for arg in node.args)
    except (ValueError, SyntaxError, TypeError):
        raise InputError(f"{prefix}'{text[:80]}': a positional argument is not a literal") from None
    kwargs: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise InputError(f"{prefix}'{text[:80]}': **arguments are not literal")
        try:
            kwargs[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, SyntaxError, TypeError):
            raise InputError(f"{prefix}'{text[:80]}': argument {keyword.arg} is not a literal") from None
    return node.func.id, args, kwargs
