"""The gate's policy file read and checked: every mistake is one line naming the file and the field, and nothing in
it is read as something it does not say (an empty clause as no clause, `true` as 1, `.inf` as a limit)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from qualeval.errors import InputError, validation_problem, yaml_mapping
from qualeval.records import TOOL_CLAUSES, Clauses, Policy

__all__ = ["check_tasks", "clauses_for", "load_policy"]

_EXAMPLES = {
    "accuracy": "{max_drop: 0.02}",
    "ttft_p99": "{max_ratio: 1.2}",
    "output_tps": "{min_ratio: 0.9}",
    "endpoint_errors": "{max: 0}",
    "truncated": "{max_share: 0.02}",
    "output_tokens": "{within: 0.1}",
    "tool_accuracy": "{max_drop: 0.02}",
    "parity": "{min: 0.95}",
    "schema_valid": "{min: 0.98}",
    "leaked_markup": "{max_share: 0.05}",
}


def _kind(value: Any) -> str:
    names = {list: "list", str: "text", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)


def _refuse_empty(path: Path, raw: dict[str, Any]) -> None:
    """A task or clause left empty (its values commented out: YAML reads null) would be no clause, and in a task's
    block it would replace the default's clause with none: a loss would pass unsaid."""
    for task, block in raw.items():
        if block is None:
            raise InputError(f"{path}: '{task}' is empty: give its clauses ({', '.join(_EXAMPLES)}) or remove it")
        if not isinstance(block, dict):  # pydantic would say "a valid dictionary or instance of Clauses"
            raise InputError(
                f"{path}: {task}: {block!r} is a {_kind(block)}, not clauses: give them as keys under it, "
                f"such as accuracy: {_EXAMPLES['accuracy']}"
            )
        for key, value in block.items():
            if value is None and key in _EXAMPLES:
                raise InputError(
                    f"{path}: {task}.{key}: empty (its values left out or commented out): give them, as "
                    f"{key}: {_EXAMPLES[key]}, or remove the key"
                )


def load_policy(path: Path) -> Policy:
    """The policy file, every task's clauses checked; a mistake is one line naming the file and the field."""
    raw = yaml_mapping(path, "policy")
    _refuse_empty(path, raw)
    try:
        policy = Policy.model_validate(raw)
    except ValidationError as exc:
        # a misspelt key shows as the missing key it stood for too: name the key the file gave
        extra = [e["loc"] for e in exc.errors() if e["type"] == "extra_forbidden"]
        if extra:
            raise InputError(f"{path}: {'.'.join(map(str, extra[0]))}: not a key of a policy") from None
        problem = validation_problem(exc)
        raise InputError(f"{path}: {problem.field}: {problem.message}") from None
    if not any(c.model_fields_set for c in policy.root.values()):
        raise InputError(f"{path}: the policy has no clause ({', '.join(_EXAMPLES)})")
    return policy


def clauses_for(policy: Policy, task: str) -> Clauses:
    """`default:`'s clauses with the task's own on top."""
    default = policy.root.get("default", Clauses())
    own = policy.root.get(task, Clauses())
    return Clauses.model_validate({**default.model_dump(exclude_unset=True), **own.model_dump(exclude_unset=True)})


def check_tasks(
    path: Path, policy: Policy, known: Iterable[str], unscored: Iterable[str], untooled: Iterable[str] = ()
) -> None:
    """Every task the policy names is one of the runs', none it asks an accuracy of is unscored (a workload's
    synthetic prompts have no right answer: the clause could never be measured), and none it asks a tool clause
    of has no tool-call item (under `default:` such a clause is not applied, and the gate says so)."""
    known = sorted(set(known))
    for name, clauses in policy.root.items():
        if name != "default" and name not in known:
            raise InputError(f"{path}: task '{name}' is not in the runs (they hold {', '.join(known)})")
        if name in set(unscored) and clauses.accuracy is not None:
            raise InputError(
                f"{path}: {name}.accuracy: task '{name}' is not scored (synthetic prompts, no right answer): "
                "no accuracy to test; remove the clause"
            )
        tool = next((c for c in TOOL_CLAUSES if getattr(clauses, c) is not None), None)
        if name in set(untooled) and tool is not None:
            raise InputError(
                f"{path}: {name}.{tool}: task '{name}' has no tool-call item (no `tools:`), so the clause could "
                "never be measured; remove it"
            )
