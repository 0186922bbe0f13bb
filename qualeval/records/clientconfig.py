"""How to talk to one endpoint: ClientConfig, whose fields are the one declaration of every option a run or a
probe hands on to its client (RunConfig takes them with `client_option`), and how the endpoint is told to think."""

from __future__ import annotations

import os
import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationInfo, field_validator

from qualeval.records.checks import AtLeast0, AtLeast1, Positive

__all__ = [
    "DEFAULT_BASE_URL",
    "ClientConfig",
    "MaxTokensField",
    "ThinkingSwitch",
    "client_option",
    "env_base_url",
    "not_coerced",
]

ThinkingSwitch = Literal["chat_template_kwargs", "reasoning_effort", "deepseek", "none"]
"""How a server is told to think or not; one vocabulary for the client, the probe, the run's pinned choice and
the reference server."""

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def env_base_url() -> str | None:
    """OPENAI_BASE_URL, the variable the openai SDK reads: every surface that defaults the endpoint reads it here."""
    return os.environ.get("OPENAI_BASE_URL") or None


MaxTokensField = Literal["max_tokens", "max_completion_tokens"]


def _kinds(annotation: Any) -> set[type]:
    """The plain types an annotation takes, through unions, lists and Annotated (`list[int] | None`: {int})."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return {annotation}
    if typing.get_origin(annotation) is Literal:
        return set()
    return {kind for arg in typing.get_args(annotation) for kind in _kinds(arg)} - {type(None)}


def not_coerced(value: Any, annotation: Any) -> Any:
    """A value of a field declared `annotation`, as given: a boolean is no number and only a boolean is one,
    where pydantic's lax mode would read True as 1 and "no", "off" or 0 as False. Text is still read as a number
    (a flag's, a list's "1,4"): only the two readings that turn a mistyped option into another setting are refused."""
    kinds = _kinds(annotation)
    numeric = bool(kinds & {int, float}) and bool not in kinds
    for one in value if isinstance(value, (list, tuple)) else [value]:
        if numeric and isinstance(one, bool):
            raise ValueError(f"{one!r} is a boolean, not a number")
        if kinds == {bool} and one is not None and not isinstance(one, bool):
            raise ValueError(f"{one!r} is not a boolean (True or False)")
    return value


class ClientConfig(BaseModel):
    """How to talk to one endpoint. Defaults read OPENAI_BASE_URL and OPENAI_API_KEY like the openai SDK.

    Its fields are the declaration of the options a run (or a probe) hands on to its client: name, default and
    help are taken from here by `client_option`."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(
        default_factory=lambda: env_base_url() or DEFAULT_BASE_URL,
        validate_default=True,
        description="The endpoint's base URL (…/v1); default OPENAI_BASE_URL, else OpenAI's.",
    )
    api_key: SecretStr | None = Field(
        default_factory=lambda: SecretStr(k) if (k := os.environ.get("OPENAI_API_KEY")) else None,
        description="The endpoint's API key (default OPENAI_API_KEY); never written anywhere.",
    )
    timeout: Positive = Field(
        600.0, description="Seconds per request attempt; also the longest silence tolerated inside a stream."
    )
    connect_timeout: Positive = Field(10.0, description="Seconds to open a connection.")
    max_retries: AtLeast0 = Field(4, description="Retries on 429, 5xx and connection errors.")
    backoff_base: float = Field(0.5, description="Seconds before the first retry (doubled for each next, jittered).")
    backoff_max: float = Field(30.0, description="The longest wait between two attempts, Retry-After included.")
    concurrency: AtLeast1 = Field(16, description="Requests in flight at most; the others wait for a free slot.")
    formats: tuple[str, ...] | None = Field(
        None, description="Inline reasoning formats by name or YAML path; None means all built-in formats."
    )
    thinking_opened: bool = Field(
        False,
        description="The chat template opens the thinking block (only </think> comes back: Qwen3.5, QwQ, R1's "
        "updated template).",
    )
    max_tokens_field: MaxTokensField = Field(
        "max_tokens",
        description="The body key that carries the budget (OpenAI's newer models want max_completion_tokens).",
    )
    thinking_switch: ThinkingSwitch = Field(
        "chat_template_kwargs",
        description="How a request's thinking is switched on or off: chat_template_kwargs, reasoning_effort, "
        "deepseek or none.",
    )
    headers: dict[str, str] = Field(default_factory=dict, description="More HTTP headers for every request.")

    @field_validator("*", mode="before")
    @classmethod
    def _as_given(cls, value: Any, info: ValidationInfo) -> Any:
        return not_coerced(value, cls.model_fields[str(info.field_name)].annotation)

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base URL must start with http:// or https://, got '{value}'")
        return value.rstrip("/")


def client_option(name: str, why: str = "", *, checked: bool = True, **own: Any) -> Any:
    """ClientConfig's declaration of option `name` (its default, help and checks) for a model that hands the option
    on to a client (RunConfig, the probe's options). `own` is what that model declares differently, and `why` says
    why: it is kept with the field (`differs`), so a difference is never silent. `checked=False` leaves the checks
    to a field of another shape (a list of levels), which then checks each value itself."""
    if bool(own.keys() - {"json_schema_extra"}) != bool(why):
        raise TypeError(f"client_option({name!r}): a field of its own needs a why, and a why needs a difference")
    field = ClientConfig.model_fields[name]
    declared: dict[str, Any] = {"description": field.description}
    if "default" not in own and "default_factory" not in own:
        declared.update(
            {"default_factory": field.default_factory} if field.default_factory else {"default": field.default}
        )
    extra = {**own.pop("json_schema_extra", {}), **({"differs": why} if why else {})}
    made: Any = Field(**{**declared, **own}, json_schema_extra=extra or None)
    if checked:  # the same checks, so that a bad value is refused by its flag before any client is made
        made.metadata.extend(field.metadata)
    return made
