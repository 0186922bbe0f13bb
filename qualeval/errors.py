"""Errors qualeval raises. Every message is one line that names the file, field, item or URL at fault.

QualevalError
├── InputError            bad input from the user: a file, a field, a flag   (CLI exit code 2)
└── EndpointError         the server could not be reached or refused us      (CLI exit code 3)
    ├── TransportFailure  connection refused or dropped, timeout             (retried)
    ├── ProtocolFailure   a body that is not the protocol: HTML, bad SSE,    (retried)
    │                     no `choices`
    └── HTTPFailure       a non-2xx answer; 429 and 5xx are retried, other 4xx are not

Warnings qualeval gives (`warnings.warn`: a library user filters them as any Python warning; the CLI shows each
as one line on stderr):

QualevalWarning           a problem that does not stop the work              (CLI: `warning: ...`)
└── QualevalNote          what a run decided that the user should know       (CLI: `note: ...`)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

__all__ = [
    "EndpointError",
    "HTTPFailure",
    "InputError",
    "ProtocolFailure",
    "QualevalError",
    "QualevalNote",
    "QualevalWarning",
    "TransportFailure",
    "ValidationProblem",
    "validation_problem",
    "yaml_loader",
    "yaml_mapping",
]


class QualevalError(Exception):
    """Base of every error qualeval raises on purpose."""


class QualevalWarning(UserWarning):
    """A problem worth telling that does not stop the work: a task's prompt, a plot left out, an unlisted model."""


class QualevalNote(QualevalWarning):
    """Not a problem: what a run resolved on its own (how thinking is switched, a constraint's mode)."""


class InputError(QualevalError):
    """The user's input (a file, a field, a flag) is wrong."""


class EndpointError(QualevalError):
    """The endpoint could not be reached, answered outside the protocol, or refused the request."""

    retryable: bool = True


class TransportFailure(EndpointError):
    pass


class ProtocolFailure(EndpointError):
    pass


class HTTPFailure(EndpointError):
    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.retry_after = retry_after
        self.retryable = status == 429 or status >= 500


class ValidationProblem(NamedTuple):
    loc: tuple[str | int, ...]
    field: str
    """The location dotted (`generation.temperature`), or "" for the whole object."""
    message: str


_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict", "tuple", "none"}


def _is_type_tag(part: object) -> bool:
    """pydantic puts union branches (`str`, `tuple[str, ...]`) in error locations; they are not fields."""
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part or part.startswith("function-"))


def validation_problem(exc: ValidationError) -> ValidationProblem:
    """The first problem pydantic found, ready for a one-line error: where, and what, without pydantic's
    union branches in the location or its "Value error, " prefix on the message."""
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if not _is_type_tag(p))
    return ValidationProblem(loc, ".".join(str(p) for p in loc), err["msg"].removeprefix("Value error, "))


# YAML 1.2's floats: PyYAML (YAML 1.1) reads `1e-9` and `1.5e3` (no dot, or no sign on the exponent) as text, so a
# limit written so would be refused as text or, where text is accepted, silently not be the number written
_FLOAT_12 = r"""^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+|[-+]?\.[0-9_]+[eE][-+]?[0-9]+)$"""


def yaml_loader() -> Any:
    """yaml's SafeLoader reading every number YAML 1.2 writes as a number (`1e-9`, `5e-2`, `1.5e3`)."""
    import re

    import yaml

    class Floats12(yaml.SafeLoader):
        pass

    Floats12.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(_FLOAT_12), list("-+0123456789."))
    return Floats12


def _unique_keys_loader(path: Path) -> Any:
    """yaml_loader(), except that a key given twice in one mapping is an error (pyyaml keeps the last one,
    so `limit: 2` then `limit: 1` would silently run one item)."""
    import yaml

    class UniqueKeys(yaml_loader()):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # a merge (`<<:`) may be overridden by the mapping's own keys, as YAML means it
                key = self.construct_object(key_node)
                if key in seen:
                    raise InputError(f"{path}:{key_node.start_mark.line + 1}: key '{key}' is given twice")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeys


def yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """A YAML file that must hold a mapping (a profile, a workload, a policy): a mistake is one line naming the
    file. The text must be UTF-8 (a BOM allowed): a UTF-16 or latin-1 file is refused, never read as garbage."""
    import yaml

    try:
        text = path.read_bytes().decode("utf-8")
        loaded = yaml.load(text, Loader=_unique_keys_loader(path))  # a SafeLoader
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: the {what} file is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"{path}{f':{mark.line + 1}' if mark else ''}: invalid YAML") from None
    if loaded is None:  # nothing but blank lines and comments: say so, not only what it should be
        raise InputError(
            f"{path}: the {what} file is empty (no keys, only blank lines or comments): a {what} "
            "file must be a mapping of keys to values"
        )
    if not isinstance(loaded, dict):
        kind = {list: "a list", str: "text", int: "a number", float: "a number", bool: "a boolean"}
        raise InputError(
            f"{path}: a {what} file must be a mapping of keys to values, not {kind.get(type(loaded), 'a value')}"
        )
    return loaded
