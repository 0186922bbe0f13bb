"""manifest.json's `shaping`: what qualeval.serving.shaping made of the items before the first request (a
workload's prompts, target context lengths, this shard's share) and what it asked the server to do so. A key is
written only once shaping decided it, so a run that shaped nothing writes `{}`. And records.jsonl's `shape`: what
it made of one item's prompt (Shape)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from qualeval.records.checks import AtLeast0, AtLeast1

__all__ = [
    "SHAPE_KEYS",
    "ContextShaping",
    "Shape",
    "ShapedWorkload",
    "Shaping",
    "Shard",
    "TemplateTokens",
    "WorkloadPrompts",
    "WorkloadStyle",
]

WorkloadStyle = Literal["vllm", "llama-benchy"]
"""Which tool's figures the report shows beside qualeval's own: vllm bench serve's or llama-benchy's."""


def _unset(value: object) -> bool:
    return value is None


class WorkloadPrompts(BaseModel):
    """A workload's `prompts` section, as its file gives it and as the manifest and summary keep it."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["random", "sharegpt", "task"] = "random"
    """random: filler text of `input_len` tokens (vllm's random dataset, llama-benchy's book text);
    sharegpt: the first turn of each conversation in `path`; task: the items of `task`, as they are."""
    input_len: AtLeast1 = 1024
    output_len: int | None = 128
    range_ratio: float = 0.0
    """Lengths drawn uniformly from [len × (1 − r), len × (1 + r)], as vllm bench serve draws them."""
    num_prompts: AtLeast1 = 10
    depth: AtLeast0 = 0
    """Earlier exchanges in the conversation: each a user turn of `input_len` and a reply of `output_len`."""
    context: AtLeast0 = 0
    """Tokens of earlier context before the prompt, in a system message: what llama-benchy's `--depth` is."""
    seed: int = 0
    """The prompts' seed: the file's, or the one given (`--workload-set seed=N`); with `cache: fresh`, one drawn
    for each run, kept here so that `--workload-set seed=N` sends its prompts again."""
    cache: Literal["same", "fresh"] = "same"
    """same: the same prompts every run (the seed given), so that a rerun and a candidate can be paired item by
    item with the baseline; fresh: new prompts each run (llama-benchy's way), so that no run is served from the
    prefix cache an earlier one filled, and no two runs pair."""
    path: Path | None = None
    """sharegpt: a JSON list of {conversations: [{from, value}, …]}, as ShareGPT_V3 is published."""
    task: str | None = None
    max_tokens: int | None = None
    """kind task: the token budget of each request (the task's default otherwise)."""
    thinking: bool | None = None

    @field_validator("cache", mode="before")
    @classmethod
    def _cache(cls, value: object) -> object:
        # `measure`, in workload files and manifests written before `same` was the default, meant the same
        return "same" if value == "measure" else value

    @field_validator("range_ratio")
    @classmethod
    def _ratio(cls, value: float) -> float:
        if not 0 <= value < 1:
            raise ValueError(f"must be in [0, 1), got {value}")
        return value


class ShapedWorkload(BaseModel):
    """The workload the prompts came from, with its `--workload-set` overrides applied."""

    name: str
    file: str | None = None
    style: WorkloadStyle = "vllm"
    mirrors: str = ""
    percentiles: list[float] = Field(default_factory=lambda: [50.0, 90.0, 95.0, 99.0])
    prompts: WorkloadPrompts = Field(default_factory=WorkloadPrompts)


class TemplateTokens(BaseModel):
    """The chat template's tokens for a conversation of these roles, as llama-benchy measures them."""

    roles: list[str]
    server: int | None
    """usage.prompt_tokens of the warm-up request; None: the server reported none."""
    text: int
    """The warm-up messages' own tokens."""
    tokens: int


class ContextShaping(BaseModel):
    lengths: list[int]
    depth: float


class Shard(BaseModel):
    index: int
    count: int


class Shaping(BaseModel):
    prompt_count: str | None = Field(default=None, exclude_if=_unset)
    """Who counted the prompts' tokens (qualeval.serving.lengths.Counter.source)."""
    forcing: dict[str, bool] | None = Field(default=None, exclude_if=_unset)
    """The output-forcing keys the server accepts (ignore_eos, min_tokens); {}: none, or --force-output off."""
    template: list[TemplateTokens] | None = Field(default=None, exclude_if=_unset)
    specials: int | None = Field(default=None, exclude_if=_unset)
    """The special tokens the tokenizer adds to a text (vllm's num_special_tokens_to_add)."""
    workload: ShapedWorkload | None = Field(default=None, exclude_if=_unset)
    context: ContextShaping | None = Field(default=None, exclude_if=_unset)
    shard: Shard | None = Field(default=None, exclude_if=_unset)


class Shape(BaseModel):
    """What qualeval.serving made of one item's prompt (a workload's lengths, a context length), kept in its
    record's `shape` for the serving figures. Only the values shaping set are written."""

    model_config = ConfigDict(frozen=True)

    prompt_target: int | None = Field(default=None, exclude_if=_unset)
    """The prompt length in tokens the workload asked for (earlier turns included)."""
    prompt_tokens: int | None = Field(default=None, exclude_if=_unset)
    """The prompt's tokens as counted when it was built."""
    prompt_count: str | None = Field(default=None, exclude_if=_unset)
    """Who counted them: `server` (its /tokenize), `tokenizer:FILE` or an estimate."""
    output_target: int | None = Field(default=None, exclude_if=_unset)
    """The output length the workload asked for (None: the model's own)."""
    run: int | None = Field(default=None, exclude_if=_unset)
    """llama-benchy's runs (--batch): which batch of `concurrency` requests the item went in."""
    context_tokens: int | None = Field(default=None, exclude_if=_unset)
    """--context-lengths: the context length the item was placed in, and where in the filler (0 to 1)."""
    context_depth: float | None = Field(default=None, exclude_if=_unset)
    prompt_rule: str | None = Field(default=None, exclude_if=_unset)
    """How the prompt was counted: `llama-benchy` (what the server processes, the chat template included) or
    `vllm-random` / `vllm-sharegpt` (vllm bench serve's rule for that dataset)."""
    template_tokens: int | None = Field(default=None, exclude_if=_unset)
    """llama-benchy's rule: the chat template's tokens, taken off the prompt so that the server processes `pp`."""


SHAPE_KEYS = frozenset(Shape.model_fields)
"""The names under which a record written before `shape` was a field of its own kept these values, in its `meta`."""
