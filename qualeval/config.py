"""The run configuration: one model for the CLI flags, the profile files in configs/, and the Python API.

Every key is the flag's name with `_` for `-`; a flag given on the command line overrides the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from qualeval.constrain import Mode, Style
from qualeval.errors import InputError

__all__ = ["RunConfig", "load_config"]


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(default_factory=lambda: os.environ.get("OPENAI_BASE_URL") or "")
    model: str = ""
    tasks: list[str] = Field(default_factory=list)
    data: dict[str, Path] = Field(default_factory=dict)
    """Task name -> local file or folder; the key `*` applies to every task."""
    out: Path | None = None
    limit: int | None = None
    """The first N samples of each task (after --sample-seed shuffling, if any)."""
    limit_per_subject: int | None = None
    sample_seed: int | None = None
    """Shuffle each task's samples with this seed before --limit (a reproducible random subset)."""
    num_fewshot: int | None = None
    samples_per_item: int = 1
    concurrency: int = 16
    max_tokens: int | None = None
    temperature: float | None = None
    thinking: bool | None = None
    thinking_opened: bool = False
    constraint: Mode = "auto"
    constraint_style: Style | None = None
    """Force one structured-output convention instead of what the probe found."""
    rescue: bool = False
    stream: bool = True
    timeout: float = 600.0
    max_retries: int = 4
    fail_under: float | None = None
    """Exit with code 1 when any task's accuracy is below this."""
    probe: bool = True
    """Probe the endpoint first (stored in the manifest; needed for --constraint auto)."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"

    @field_validator("concurrency", "samples_per_item")
    @classmethod
    def _at_least_one(cls, value: int, info: Any) -> int:
        if value < 1:
            raise ValueError(f"must be at least 1, got {value}")
        return value

    @field_validator("limit", "limit_per_subject", "num_fewshot", "max_tokens")
    @classmethod
    def _non_negative(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError(f"must be at least 1, got {value}")
        return value

    @field_validator("fail_under")
    @classmethod
    def _share(cls, value: float | None) -> float | None:
        if value is not None and not 0 <= value <= 1:
            raise ValueError(f"must be between 0 and 1 (a share, 0.8 = 80%), got {value}")
        return value

    @field_validator("timeout")
    @classmethod
    def _positive(cls, value: float) -> float:
        if value <= 0:
            raise ValueError(f"must be positive, got {value}")
        return value

    @model_validator(mode="after")
    def _complete(self) -> RunConfig:
        if not self.tasks:
            raise ValueError("at least one --task is needed")
        if not self.model:
            raise ValueError("--model is needed")
        if not self.base_url:
            raise ValueError("--base-url is needed (or OPENAI_BASE_URL)")
        if self.out is None:
            raise ValueError("--out is needed")
        return self

    def data_for(self, task: str) -> Path | None:
        base = task.split(":", 1)[0]
        return self.data.get(task) or self.data.get(base) or self.data.get("*")


def _error(exc: ValidationError, where: str) -> InputError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"])
    flag = f"--{field.replace('_', '-')}" if field else "the configuration"
    prefix = f"{where}: " if where else ""
    return InputError(f"{prefix}{flag}: {err['msg'].removeprefix('Value error, ')}")


def load_config(path: Path | None, flags: dict[str, Any]) -> RunConfig:
    """A profile file (if any) overlaid with the flags that were given (not None)."""
    values: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"{path}: cannot read config ({exc.strerror})") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(f"{path}{f':{mark.line + 1}' if mark else ''}: invalid YAML") from None
        if not isinstance(loaded, dict):
            raise InputError(f"{path}: a config file must be a mapping of run options")
        values.update({str(k).replace("-", "_"): v for k, v in loaded.items()})
        unknown = sorted(set(values) - set(RunConfig.model_fields))
        if unknown:
            raise InputError(f"{path}: unknown option '{unknown[0]}' (options are the flags of qualeval run)")
    values.update({k: v for k, v in flags.items() if v is not None and v != [] and v != {}})
    try:
        return RunConfig.model_validate(values)
    except ValidationError as exc:
        raise _error(
            exc, str(path) if path and not any(k in flags and flags[k] is not None for k in _fields(exc)) else ""
        ) from None


def _fields(exc: ValidationError) -> list[str]:
    return [str(e["loc"][0]) for e in exc.errors() if e["loc"]]
