"""How a flag's text becomes a value: comma lists and `NAME=VALUE` items, for RunConfig's validators."""

from __future__ import annotations

from typing import Any

__all__ = ["comma_list", "named_values", "published_share"]


def comma_list(value: Any) -> Any:
    """One value, a comma list ("1,4,16"), or a list of either (a repeated flag), as a flat list."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, list):
        parts = [p for v in value for p in (v.split(",") if isinstance(v, str) else [v])]
        return [p.strip() if isinstance(p, str) else p for p in parts if str(p).strip()]
    return value


_FORMS = {
    "published": "TASK=SHARE or TASK=PERCENT%",
    "slo": "NAME=MILLISECONDS",
    "sampling": "MODE.NAME=VALUE (thinking.top_p=0.95)",
}


def named_values(value: Any, field: str) -> Any:
    """A flag's `NAME=VALUE` items as a mapping (`MODE.NAME=VALUE` nests: sampling's thinking.top_p); a mapping
    (a profile's, the API's) as it is. The values are left to the field's type to check."""
    if not isinstance(value, (str, list)):
        return value
    out: dict[str, Any] = {}
    for part in comma_list(value):
        name, sep, text = str(part).partition("=")
        mode, dot, setting = name.strip().partition(".")
        if not sep or not text.strip() or (field == "sampling") != bool(dot):
            raise ValueError(f"'{part}' is not {_FORMS[field]}")
        if field == "sampling":
            out.setdefault(mode, {})[setting] = text.strip()
        else:
            out[name.strip()] = text.strip()
    return out


def published_share(task: str, figure: Any) -> float:
    """A published figure as a share: `85%` and a bare number above 1 (85) are percents, a bare number from 0 to
    1 (0.85) is a share, so 0.85 is never read as 0.85%."""
    text = str(figure).strip()
    percent = text.endswith("%")
    try:
        number = float(text.removesuffix("%"))
    except ValueError:
        raise ValueError(f"'{task}': '{figure}' is not a number (a share, 0.85, or a percent, 85%)") from None
    share = number / 100 if percent or number > 1 else number
    if not 0 <= share <= 1:
        raise ValueError(f"'{task}': a published figure is a share (0 to 1) or a percent (0% to 100%), got {text}")
    return share
