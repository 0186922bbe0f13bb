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
from qualeval.errors import InputError, validation_problem

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
    concurrency: list[int] = Field(default_factory=lambda: [16])
    """Requests in flight; several values make a sweep where every level runs the same items. With
    --request-rate, the cap on requests in flight."""
    request_rate: list[float] | None = None
    """Open-loop load: requests per second (gamma-distributed arrivals); several values make a sweep."""
    burstiness: float = 1.0
    """Shape of the gamma arrival distribution, as in vllm bench serve: 1 is Poisson, lower is burstier."""
    arrival_seed: int = 0
    warmup: int = 1
    """Requests at the start of each level that run first, one at a time, and stay out of speed figures."""
    slo: dict[str, float] = Field(default_factory=dict)
    """Goodput: a request counts when it meets every limit given: ttft_ms, first_answer_ms, tpot_ms, e2e_ms."""
    max_tokens: int | None = None
    temperature: float | None = None
    thinking: bool | None = None
    thinking_switch: Literal["auto", "chat_template_kwargs", "reasoning_effort", "deepseek", "none"] = "auto"
    """How thinking is switched on or off: auto is the first convention the probe saw work (none is sent when
    thinking is left to the server); a name forces that convention."""
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
    """Probe the endpoint first (stored in the manifest; needed for --constraint auto and --thinking-switch auto).
    A resumed run is not probed again: it keeps what it pinned."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    judge_base_url: str | None = None
    """A model judge for free-form answers the rules reject (any OpenAI-compatible endpoint); its key comes
    from QUALEVAL_JUDGE_API_KEY, else OPENAI_API_KEY."""
    judge_model: str | None = None

    @field_validator("base_url", "judge_base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got '{value}'")
        return value

    @field_validator("samples_per_item")
    @classmethod
    def _at_least_one(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"must be at least 1, got {value}")
        return value

    @field_validator("concurrency", "request_rate", mode="before")
    @classmethod
    def _levels(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return [value] if isinstance(value, (int, float)) else value

    @field_validator("concurrency")
    @classmethod
    def _concurrency(cls, value: list[int]) -> list[int]:
        if not value or any(v < 1 for v in value):
            raise ValueError(f"every level must be at least 1, got {value}")
        return value

    @field_validator("request_rate")
    @classmethod
    def _rates(cls, value: list[float] | None) -> list[float] | None:
        if value is not None and (not value or any(v <= 0 for v in value)):
            raise ValueError(f"every rate must be positive, got {value}")
        return value

    @field_validator("burstiness")
    @classmethod
    def _burstiness(cls, value: float) -> float:
        if value <= 0:
            raise ValueError(f"must be positive, got {value}")
        return value

    @field_validator("warmup")
    @classmethod
    def _warmup(cls, value: int) -> int:
        if value < 0:
            raise ValueError(f"must not be negative, got {value}")
        return value

    @field_validator("slo")
    @classmethod
    def _slo(cls, value: dict[str, float]) -> dict[str, float]:
        allowed = {"ttft_ms", "first_answer_ms", "tpot_ms", "e2e_ms"}
        for key, limit in value.items():
            if key not in allowed:
                raise ValueError(f"unknown limit '{key}' (expected {', '.join(sorted(allowed))})")
            if limit <= 0:
                raise ValueError(f"limit '{key}' must be positive")
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
        if self.request_rate and len(self.concurrency) > 1:
            raise ValueError("sweep either --concurrency or --request-rate, not both")
        if bool(self.judge_base_url) != bool(self.judge_model):
            raise ValueError("--judge-base-url and --judge-model go together")
        return self

    def levels(self) -> list[tuple[str, int, float | None]]:
        """(label, requests in flight, request rate) for each load level, in order."""
        if self.request_rate:
            cap = self.concurrency[0]
            return [(f"rate={r:g}", cap, r) for r in self.request_rate]
        return [(f"c={c}", c, None) for c in self.concurrency]

    def data_for(self, task: str) -> Path | None:
        base = task.split(":", 1)[0]
        return self.data.get(task) or self.data.get(base) or self.data.get("*")


def _error(exc: ValidationError, where: str) -> InputError:
    problem = validation_problem(exc)
    flag = f"--{problem.field.replace('_', '-')}" if problem.field else "the configuration"
    prefix = f"{where}: " if where else ""
    return InputError(f"{prefix}{flag}: {problem.message}")


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
