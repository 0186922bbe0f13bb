"""One episode's environment: an instance of each API class it involves, loaded with its initial state, and
calls executed on them by method name with keyword arguments, as BFCL's executor runs them (its result shaping,
its error text), except that nothing a model wrote is ever evaluated: a call's name is looked up among the
instances' public methods and its arguments are a JSON object."""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from qualeval.agent.classes import ClassSource
from qualeval.records import EpisodeSpec, ToolCall

__all__ = ["Env", "execute", "open_env", "run_call", "state"]

_REFUSED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
"""Method names BFCL's executor refuses to run whatever the class (its guard around `eval`)."""


@dataclass(slots=True)
class Env:
    """The instances of one episode, by class name, and their public methods by name (a later class's method
    of the same name wins, as in BFCL's mapping)."""

    instances: dict[str, Any]
    methods: dict[str, Callable[..., Any]] = field(default_factory=dict)


def open_env(spec: EpisodeSpec, source: ClassSource) -> Env:
    """Fresh instances of the episode's classes, each given its initial state (a copy: the spec is never changed);
    the stateless ones as built."""
    stateless = set(source.environment.stateless)
    instances: dict[str, Any] = {}
    methods: dict[str, Callable[..., Any]] = {}
    for name in spec.classes:
        instance = source.cls(name)()
        if name not in stateless:
            config = copy.deepcopy(spec.initial_config.get(name, {}))
            instance._load_scenario(config, long_context=spec.long_context)
        instances[name] = instance
        for method_name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not method_name.startswith("_"):
                methods[method_name] = method
    return Env(instances, methods)


def _shaped(result: Any) -> str:
    """BFCL's shaping of a result: text as it is, a dict as JSON (its str where JSON cannot hold it), else str."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


def run_call(env: Env, name: str, kwargs: dict[str, Any], args: tuple[Any, ...] = ()) -> str:
    """Execute one call on the episode's instances; whatever it raises comes back as BFCL's error text."""
    try:
        if name in _REFUSED:
            raise PermissionError(f"Function call {name} is not allowed.")
        method = env.methods.get(name)
        if method is None:
            raise NameError(f"name '{name}' is not defined")
        return _shaped(method(*args, **kwargs))
    except Exception as exc:  # the model's call is the input: any failure is the tool's answer to it
        return f"Error during execution: {exc}"


def execute(env: Env, call: ToolCall) -> str:
    """Execute a model's call: its arguments text must be a JSON object (empty text: no arguments)."""
    try:
        kwargs = orjson.loads(call.arguments) if call.arguments.strip() else {}
    except orjson.JSONDecodeError as exc:
        return f"Error during execution: arguments are not JSON ({exc})"
    if not isinstance(kwargs, dict):
        return f"Error during execution: arguments must be a JSON object, got {type(kwargs).__name__}"
    return run_call(env, call.name, kwargs)


def state(env: Env) -> dict[str, dict[str, Any]]:
    """Each instance's public attributes (those BFCL's state check compares), by class name: the live values."""
    return {name: {k: v for k, v in vars(obj).items() if not k.startswith("_")} for name, obj in env.instances.items()}
