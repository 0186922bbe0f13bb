"""Run options are declared once, as the fields of qualeval.records.RunConfig (name, type, default, help; an
option handed on to the client is ClientConfig's). This module turns that declaration into the `qualeval run`
flags and the run options `qualeval score` takes, and loads a profile file with flags on top, so the flags and
the profile-file keys cannot drift apart; qualeval.run.keywords declares the same options as qualeval.evaluate's
keywords (a test checks that all three agree). `qualeval probe` gets its flags the same way, from the probe's options.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_type_hints

import typer
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from qualeval._shipped import shipped
from qualeval.errors import InputError, validation_problem, yaml_mapping
from qualeval.reasoning import resolve_formats
from qualeval.records import RunConfig
from qualeval.run.keywords import RunOptions

__all__ = [
    "cli_parameters",
    "flag_of",
    "given_or_default",
    "load_config",
    "options_from",
    "profile_path",
    "profiles",
]

Options = TypeVar("Options", bound=BaseModel)

# where each option shows in `qualeval run --help` (presentation only; the options themselves are RunConfig's)
_PANELS = {
    "Endpoint": (
        "base_url",
        "model",
        "api_key",
        "timeout",
        "max_retries",
        "probe",
        "probe_time",
        "stream",
        "stream_parity",
        "max_tokens_field",
    ),
    "Tasks": ("tasks", "data", "limit", "limit_per_subject", "sample_seed", "num_fewshot", "samples_per_item"),
    "Load": ("concurrency", "request_rate", "burstiness", "arrival_seed", "warmup", "slo"),
    "Generation": (
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "presence_penalty",
        "sampling",
        "thinking",
        "thinking_pair",
        "reasoning_effort",
        "thinking_budget",
        "thinking_switch",
        "thinking_opened",
        "reasoning_format",
        "reasoning_passback",
    ),
    "Answers": ("constraint", "constraint_style", "rescue", "judge_base_url", "judge_model", "fail_under"),
    "Serving": (
        "workload",
        "workload_set",
        "context_lengths",
        "context_depth",
        "filler",
        "tokenizer",
        "force_output",
        "batch",
        "endpoints",
        "shard",
    ),
}
_PANEL_OF = {name: panel for panel, names in _PANELS.items() for name in names}


def flag_of(name: str, source: type[BaseModel] = RunConfig) -> str:
    """The flag a field of RunConfig (or of another model of options) is given by (its first, when it has several)."""
    return _flags(source.model_fields[name], name)[0]


def _flags(field: FieldInfo, name: str) -> list[str]:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    given = extra.get("flags")  # RunConfig's own lists of strings, typed as any JSON value
    if isinstance(given, list) and given:
        return [str(flag) for flag in given]
    return [f"--{name.replace('_', '-')}"]


def _bare(annotation: Any) -> Any:
    """The annotation without `| None`."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _cli_type(annotation: Any, repeatable: bool = False) -> Any:
    """What the command line reads: lists and mappings as repeatable strings, choices and secrets as text."""
    if repeatable:  # a single value that may be given several times (--base-url: more replicas)
        return list[str]
    bare = _bare(annotation)
    origin = typing.get_origin(bare)
    if origin in (list, dict):
        return list[str]
    if bare in (bool, int, float, Path):
        return bare
    if origin is Literal:
        return str
    return str


def _metavar(annotation: Any) -> str:
    bare = _bare(annotation)
    if typing.get_origin(bare) is Literal:
        return "NAME"  # the help lists the names
    if typing.get_origin(bare) in (list, dict):
        return "VALUE"
    return {int: "N", float: "X", Path: "PATH", bool: ""}.get(bare, "TEXT")


def _default_text(field: FieldInfo) -> str:
    default = field.get_default(call_default_factory=True)
    if default in (None, "", [], {}) or field.exclude:
        return ""
    if isinstance(default, bool):
        default = "on" if default else "off"
    if isinstance(default, list):
        default = ",".join(map(str, default))
    return f" (default: {default})"


def cli_parameters(
    source: type[BaseModel] = RunConfig, names: Iterable[str] | None = None, helps: Mapping[str, str] | None = None
) -> list[inspect.Parameter]:
    """One command-line option per field of `source` (those in `names`, if given): `qualeval run` takes every
    RunConfig field, `score` some, `probe` the probe's options. None means "not given", so a profile's value (or
    the field's default) stays. `helps`: a command's own help for an option that means something else there."""
    params = []
    fields = source.model_fields
    for name in fields if names is None else names:
        field = fields[name]
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        kind = _cli_type(field.annotation, bool(extra.get("repeatable")))
        flags = _flags(field, name)
        if kind is bool:
            flags = [f"{flags[0]}/--no-{flags[0][2:]}"]
        option = typer.Option(
            *flags,
            help=((helps or {}).get(name) or field.description or "") + _default_text(field),
            show_default=False,
            metavar=_metavar(field.annotation),
            rich_help_panel=_PANEL_OF.get(name, "Run"),
        )
        # a type made at run time for typer to read, which no static annotation can be
        annotation = Annotated[kind | None, option]  # type: ignore[valid-type]
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation))
    return params


def given_or_default(flags: dict[str, Any], source: type[BaseModel] = RunConfig) -> dict[str, Any]:
    """Options made by cli_parameters as given, each one not given (None) at its field's default."""
    fields = source.model_fields
    return {k: fields[k].get_default(call_default_factory=True) if v is None else v for k, v in flags.items()}


def options_from(flags: dict[str, Any], source: type[Options]) -> Options:
    """A model of options (ProbeOptions) from the flags cli_parameters made of it: a bad value is one line naming
    its flag, as a bad `qualeval run` flag is."""
    try:
        return source(**given_or_default(flags, source))
    except ValidationError as exc:
        raise _error(exc, "", source) from None


def _error(exc: ValidationError, where: str, source: type[BaseModel] = RunConfig) -> InputError:
    problem = validation_problem(exc)
    top = str(problem.loc[0]) if problem.loc else ""
    flag = flag_of(top, source) if top in source.model_fields else "the configuration"
    inner = ".".join(str(p) for p in problem.loc[1:]) if top in source.model_fields else ""
    if problem.loc[1:] and isinstance(problem.loc[-1], int):  # a list's item: the value says which, not its index
        inner = ".".join([*map(str, problem.loc[1:-1]), repr(str(exc.errors()[0].get("input")))])
    message = "not a setting here" if problem.message == "Extra inputs are not permitted" else problem.message
    prefix = f"{where}: " if where else ""
    return InputError(f"{prefix}{flag}: {f'{inner}: ' if inner else ''}{message}")


@cache
def _kinds() -> dict[str, TypeAdapter[Any]]:
    """The options meant as numbers, each by its declared type; a boolean's text (`thinking="no"`) RunConfig
    refuses with its own words."""
    hints = get_type_hints(RunOptions).items()
    return {name: TypeAdapter(kind) for name, kind in hints if _numeric(kind)}


def _numeric(kind: Any) -> bool:
    return kind in (int, float) or any(_numeric(k) for k in typing.get_args(kind))


def _listed(name: str) -> bool:
    """An option that takes a list of numbers (a sweep's levels), which a caller may give as the flag's text."""
    kind = get_type_hints(RunOptions)[name]
    return any(typing.get_origin(k) is not None and _numeric(k) for k in typing.get_args(kind))


def _has_text(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list | tuple) and any(isinstance(v, str) for v in value))


def check_kinds(values: Mapping[str, Any], where: str) -> None:
    """Text given where an `evaluate` keyword or a profile's value is meant to be a number (`limit="5"`,
    `concurrency: ["4"]`) is refused, naming it, rather than converted: only the command line's flags arrive as text,
    and they are parsed by their own types. Other wrong kinds (a boolean for a number) RunConfig refuses itself."""
    kinds = _kinds()
    for name, value in values.items():
        if name not in kinds or not _has_text(value):
            continue
        try:
            kinds[name].validate_python(value, strict=True)
        except ValidationError as exc:
            prefix = f"{where}: " if where else ""
            listed = "; several levels are a list of numbers ([4, 16]), never text" if _listed(name) else ""
            raise InputError(
                f"{prefix}{flag_of(name)}: {value!r} is text: {validation_problem(exc).message}{listed}"
            ) from None


def profiles() -> dict[str, Path]:
    """The run profiles qualeval ships (configs/*.yaml), by name."""
    return {p.stem: p for p in sorted(shipped("configs").glob("*.yaml"))}


def profile_path(ref: Path) -> Path:
    """A profile file as given, or a shipped profile by name (`--config qwen3-sampling`)."""
    if ref.exists() or ref.suffix in (".yaml", ".yml") or len(ref.parts) > 1:
        return ref
    known = profiles()
    if ref.name in known:
        return known[ref.name]
    raise InputError(f"--config {ref}: no such file, and no shipped profile of that name (known: {', '.join(known)})")


def load_config(path: Path | None, flags: dict[str, Any]) -> RunConfig:
    """A profile file or a shipped profile's name (if any) overlaid with the flags that were given (not None)."""
    values: dict[str, Any] = {}
    if path is not None:
        path = profile_path(path)
        loaded = yaml_mapping(path, "config")
        values.update({str(k).replace("-", "_"): v for k, v in loaded.items()})
        if len(values) < len(loaded):  # `max-tokens` and `max_tokens`: one option given twice
            twice = next(k for k in values if sum(str(n).replace("-", "_") == k for n in loaded) > 1)
            names = [str(n) for n in loaded if str(n).replace("-", "_") == twice]
            raise InputError(f"{path}: option '{twice}' is given twice (as {' and '.join(names)})")
        unknown = sorted(set(values) - set(RunConfig.model_fields))
        if unknown:
            raise InputError(f"{path}: unknown option '{unknown[0]}' (options are the flags of qualeval run)")
        check_kinds(values, str(path))  # YAML types its values: a quoted "5" is text, not a number
    values.update({k: v for k, v in flags.items() if v is not None and v != [] and v != {}})
    if values.get("workload"):  # a workload's own load options sit under the profile and the flags
        from qualeval.serving import load_workload

        workload, where = load_workload(str(values["workload"]))
        unknown = sorted(set(workload.run) - set(RunConfig.model_fields))
        if unknown:
            raise InputError(f"{where}: field 'run.{unknown[0]}': not a run option")
        values = {**workload.run, **values}
    try:
        config = RunConfig.model_validate(values)
    except ValidationError as exc:
        raise _error(
            exc, str(path) if path and not any(k in flags and flags[k] is not None for k in _fields(exc)) else ""
        ) from None
    resolve_formats(config.reasoning_format)  # a missing or malformed format file is one line now, not mid-run
    return config


def _fields(exc: ValidationError) -> list[str]:
    return [str(e["loc"][0]) for e in exc.errors() if e["loc"]]
