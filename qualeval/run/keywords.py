"""The keyword options of `qualeval.evaluate`, declared with their types so that a type checker reads every call:
one key per field of qualeval.records.RunConfig (where each is described, and which validates the values), save
the four `evaluate` names itself (model, tasks, base_url, out). A test holds the keys to RunConfig's fields.

The types are what a caller may give: where the command line takes a comma list or a repeated flag (`1,4,16`,
`TASK=PATH`), Python takes one value or a list, a mapping, or the same text; but text is never a number, so an
option of numbers takes a number or a list of them (`concurrency=[4, 16]`), never `"4"` or `"4,16"` (the one rule
of qualeval.run.options.check_kinds, for keywords and profiles alike).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict

from qualeval.records import ByThinking, MaxTokensField, Mode, PassbackMode, Style, ThinkingSwitch

__all__ = ["RunOptions"]


class RunOptions(TypedDict, total=False):
    """Every run option `qualeval.evaluate` takes by keyword; each is RunConfig's field of the same name."""

    api_key: str | None
    data: str | Path | Sequence[str | Path] | Mapping[str, str | Path]
    limit: int | None
    limit_per_subject: int | None
    sample_seed: int | None
    num_fewshot: int | None
    samples_per_item: int
    concurrency: int | Sequence[int]
    request_rate: float | Sequence[float] | None
    burstiness: float
    arrival_seed: int
    warmup: int
    slo: str | Mapping[str, float]
    max_tokens: int | Sequence[int]
    max_tokens_field: MaxTokensField
    temperature: float | None
    top_p: float | None
    top_k: int | None
    min_p: float | None
    presence_penalty: float | None
    sampling: str | ByThinking | Mapping[str, Any]
    thinking: bool | None
    thinking_pair: bool
    reasoning_effort: str | Sequence[str]
    thinking_budget: int | Sequence[int]
    thinking_switch: Literal["auto"] | ThinkingSwitch
    thinking_opened: bool
    reasoning_format: str | Sequence[str]
    constraint: Mode
    constraint_style: Style | None
    rescue: bool
    reasoning_passback: PassbackMode
    stream: bool
    stream_parity: bool
    timeout: float
    max_retries: int
    fail_under: float | None
    probe: bool
    probe_time: float
    judge_base_url: str | None
    judge_model: str | None
    allow_code_execution: bool
    published: str | Mapping[str, float | str]
    within: float
    workload: str | None
    workload_set: str | Sequence[str]
    context_lengths: int | Sequence[int]
    context_depth: float
    filler: str | Path | None
    tokenizer: str | Path | None
    force_output: Literal["auto", "off"]
    batch: bool
    endpoints: str | Sequence[str]
    shard: str | None
