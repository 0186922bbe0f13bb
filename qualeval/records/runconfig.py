"""The run configuration: one model for the CLI flags, the profile files in configs/, and the Python API.

Every key is the flag's name with `_` for `-`; a flag given on the command line overrides the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationInfo, field_validator, model_validator

from qualeval.records.checks import Positive
from qualeval.records.clientconfig import (
    ClientConfig,
    MaxTokensField,
    ThinkingSwitch,
    client_option,
    env_base_url,
    not_coerced,
)
from qualeval.records.episodes import PassbackMode
from qualeval.records.flagtext import comma_list, named_values, published_share
from qualeval.records.probe import Mode, Style, probe_time_option
from qualeval.records.taskspec import ByThinking, check_sampling

__all__ = ["EFFORTS", "RunConfig"]

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""The reasoning_effort values OpenAI's API names (openai-python's ReasoningEffort); vLLM, SGLang, llama.cpp and
Ollama take these or a subset."""


class RunConfig(BaseModel):
    """Every option of a run, declared once: the `qualeval run` flags, the profile-file keys and the keywords of
    `qualeval.evaluate` are all made from these fields (qualeval.run.options), with the descriptions as help; one
    handed on to the client is ClientConfig's (`client_option`), with what a run does differently and why."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = client_option(
        "base_url",
        "a run names its endpoint: without OPENAI_BASE_URL or the flag it stops, never sending a benchmark to OpenAI",
        default_factory=lambda: env_base_url() or "",
        description="The endpoint's base URL (…/v1); default OPENAI_BASE_URL. Given again: more replicas of the "
        "same model, each request sent to the one with the fewest in flight.",
        json_schema_extra={"repeatable": True},
    )
    model: str = Field("", description="The model name to send.")
    api_key: SecretStr | None = client_option(
        "api_key", "None: the client reads OPENAI_API_KEY; never in the manifest", default=None, exclude=True
    )
    tasks: list[str] = Field(
        default_factory=list,
        description="Tasks: built-in names (gsm8k, mmlu:stem), task YAML paths or lm_eval:NAME; repeat the flag "
        "or give a comma list.",
        json_schema_extra={"flags": ["--task", "--tasks"]},
    )
    data: dict[str, Path] = Field(
        default_factory=dict,
        description="Local data: PATH for all tasks, or TASK=PATH (TASK as in --task, or the task's name); repeatable.",
    )
    out: Path | None = Field(None, description="Run directory; an existing run there is resumed.")
    limit: int | None = Field(None, description="The first N samples of each task (after --sample-seed shuffling).")
    limit_per_subject: int | None = Field(None, description="At most N samples per subject (MMLU).")
    sample_seed: int | None = Field(None, description="Shuffle samples with this seed before --limit.")
    num_fewshot: int | None = Field(None, description="Few-shot examples (the task's default otherwise).")
    samples_per_item: int = Field(1, description="K samples per item: mean, maj@K, pass@K.")
    concurrency: list[int] = client_option(
        "concurrency",
        "a run may sweep load levels, each one the client's cap in turn",
        checked=False,  # a list of levels: _concurrency checks each one
        default_factory=lambda: [ClientConfig.model_fields["concurrency"].default],
        description="Requests in flight; several values (1,4,16) make a sweep over the same items. With "
        "--request-rate, the cap on requests in flight.",
    )
    request_rate: list[float] | None = Field(
        None, description="Open-loop load: requests per second (gamma arrivals); several values make a sweep."
    )
    burstiness: Positive = Field(
        1.0, description="Gamma shape of the arrivals, as in vllm bench serve: 1 Poisson, <1 burstier."
    )
    arrival_seed: int = Field(0, description="Seed of the open-loop arrival times.")
    warmup: int = Field(1, description="Warm-up requests per level, one at a time, kept out of speed figures.")
    slo: dict[str, float] = Field(
        default_factory=dict,
        description="Goodput limits, e.g. ttft_ms=500,tpot_ms=50 (also first_answer_ms, e2e_ms).",
    )
    max_tokens: list[int] = Field(
        default_factory=list,
        description="Token budget (the task's default otherwise); a list (512,2048,8192) is one level per budget.",
    )
    max_tokens_field: MaxTokensField = client_option("max_tokens_field")
    temperature: float | None = Field(
        None, description="Sampling temperature (0 to 2); over --sampling and the task's own (default: the task's)."
    )
    top_p: float | None = Field(None, description="Nucleus sampling (0 to 1); over --sampling and the task's.")
    top_k: int | None = Field(None, description="Top-k sampling (vLLM, SGLang, llama.cpp); over --sampling.")
    min_p: float | None = Field(None, description="Min-p sampling (vLLM, SGLang, llama.cpp); over --sampling.")
    presence_penalty: float | None = Field(None, description="Presence penalty (-2 to 2); over --sampling.")
    sampling: ByThinking = Field(
        default_factory=ByThinking,
        description="Sampling per thinking mode, as model cards give it: thinking.temperature=0.6, "
        "no_thinking.top_p=0.8 ... (repeatable; a profile's `sampling:` mapping; configs/qwen3-sampling.yaml and "
        "deepseek-r1-sampling.yaml carry the cards' values). Over the task's own; the plain flags override it.",
    )
    thinking: bool | None = Field(None, description="Ask for thinking on or off (the server's default otherwise).")
    thinking_pair: bool = Field(False, description="Run every item with thinking on and off: two paired levels.")
    reasoning_effort: list[str] = Field(
        default_factory=list,
        description=f"reasoning_effort to send ({', '.join(EFFORTS)}); a list is one level each.",
    )
    thinking_budget: list[int] = Field(
        default_factory=list,
        description="The server's own cap on thinking tokens (vLLM's thinking_token_budget; the probe checks it "
        "holds); a list is one level per budget.",
    )
    thinking_switch: Literal["auto", ThinkingSwitch] = client_option(
        "thinking_switch",
        "a run can ask the probe which switch the endpoint obeys (auto) before it pins one",
        default="auto",
        description="How thinking is switched: auto (the first convention the probe saw work), or force "
        "chat_template_kwargs, reasoning_effort, deepseek or none.",
    )
    thinking_opened: bool = client_option("thinking_opened")
    reasoning_format: list[str] = Field(
        default_factory=list,
        description="A reasoning-format YAML (or built-in name) to split with, before the built-ins (repeatable).",
    )
    constraint: Mode = Field("auto", description="Structured-output constraint: auto, single, followup or off.")
    constraint_style: Style | None = Field(
        None,
        description="Force a convention: structured_outputs, guided, sglang, response_format, json_schema, grammar.",
    )
    rescue: bool = Field(False, description="Read answers from the reasoning when content is empty (counted apart).")
    reasoning_passback: PassbackMode = Field(
        "auto",
        description="Agents (multi-turn items): what earlier assistant turns carry back of their reasoning: none, "
        "reasoning (vLLM >= 0.16), reasoning_content (llama.cpp, SGLang, DeepSeek), inline (<think>...</think> "
        "before the content), or auto (what the probe found the server consumes).",
    )
    stream: bool = Field(True, description="Stream responses.")
    stream_parity: bool = Field(False, description="Send every item streamed and not: two paired levels.")
    timeout: float = client_option("timeout")
    max_retries: int = client_option("max_retries")
    fail_under: float | None = Field(None, description="Exit 1 when a task's accuracy is below this share (0.8 = 80%).")
    probe: bool = Field(
        True,
        description="Probe the endpoint first (needed for --constraint auto and --thinking-switch auto); a resumed "
        "run keeps what it pinned.",
    )
    probe_time: float = probe_time_option()
    judge_base_url: str | None = Field(
        None,
        description="A model judge (OpenAI-compatible base URL) asked only about free-form answers the rules "
        "reject; key from QUALEVAL_JUDGE_API_KEY or OPENAI_API_KEY.",
    )
    judge_model: str | None = Field(None, description="The model judge's model name.")
    allow_code_execution: bool = Field(
        False,
        description="Run the model's code to score code tasks (HumanEval), each program in a sandboxed process "
        "of its own; such tasks are refused without it.",
    )
    published: dict[str, float] = Field(
        default_factory=dict,
        description="Published figures (a model card's) shown beside the measured accuracy: TASK=SHARE (0.85) or "
        "TASK=PERCENT% (85%); a bare number above 1 is a percent (85). Kept as a share; repeatable.",
    )
    within: float = Field(1.0, ge=0, le=100, description="Frontier: the smallest budget within N points of the best.")
    # serving benchmarks (issue 14): workloads, context lengths, replicas, shards
    workload: str | None = Field(
        None,
        description="A serving workload by name (configs/workloads/NAME.yaml) or path: its prompts, lengths and "
        "load; with --task, that task's items inside prompts of its lengths.",
    )
    workload_set: list[str] = Field(
        default_factory=list, description="Override a workload's prompts: KEY=VALUE (num_prompts=4), repeatable."
    )
    context_lengths: list[int] = Field(
        default_factory=list,
        description="Run every item at these context lengths in tokens (500,2000,8000), placed in filler text.",
        json_schema_extra={"flags": ["--context-length", "--context-lengths"]},
    )
    context_depth: float = Field(
        1.0, description="Where the item sits in the filler: 1 after it, 0 before it, 0.5 in the middle."
    )
    filler: Path | None = Field(
        None, description="A text file to cut filler from (default: a public-domain text shipped with qualeval)."
    )
    tokenizer: Path | None = Field(
        None, description="A tokenizer.json to count prompt tokens with where the server has no /tokenize."
    )
    force_output: Literal["auto", "off"] = Field(
        "auto",
        description="Force a workload's output lengths with ignore_eos/min_tokens where the server accepts them "
        "(auto), or never (off).",
    )
    batch: bool = Field(
        False,
        description="Send --concurrency requests at once, the next batch when all have ended (llama-benchy).",
    )
    endpoints: list[str] = Field(
        default_factory=list,
        description="More replicas of the model (also: --base-url given again); each request goes to the one "
        "with the fewest in flight.",
        json_schema_extra={"flags": ["--endpoint"]},
    )
    shard: str | None = Field(
        None, description="Run shard K of N (K/N, K from 0): every N-th item; join shards with qualeval merge."
    )

    @model_validator(mode="before")
    @classmethod
    def _replicas(cls, values: Any) -> Any:
        """`--base-url` given several times: the first is the base URL, the others more replicas."""
        if isinstance(values, dict) and isinstance(values.get("base_url"), (list, tuple)):
            urls = [u for v in values["base_url"] for u in str(v).split(",") if u.strip()]
            more = [*urls[1:], *(values.get("endpoints") or [])]
            values = {**values, "base_url": urls[0] if urls else "", "endpoints": more}
        return values

    @field_validator("*", mode="before")
    @classmethod
    def _as_given(cls, value: Any, info: ValidationInfo) -> Any:
        """`limit=True`, `thinking="no"`, `probe=0`: refused, not read as another setting."""
        return not_coerced(value, cls.model_fields[str(info.field_name)].annotation)

    @field_validator("context_lengths")
    @classmethod
    def _lengths(cls, value: list[int]) -> list[int]:
        if any(v < 1 for v in value):
            raise ValueError(f"every length must be at least 1 token, got {value}")
        return value

    @field_validator("context_depth")
    @classmethod
    def _depth(cls, value: float) -> float:
        if not 0 <= value <= 1:
            raise ValueError(f"must be between 0 and 1, got {value}")
        return value

    @field_validator("shard")
    @classmethod
    def _shard(cls, value: str | None) -> str | None:
        k, sep, n = (value or "0/1").partition("/")
        if not (sep and k.isdigit() and n.isdigit() and int(k) < int(n)):
            raise ValueError(f"expected K/N with 0 <= K < N (e.g. 0/4), got '{value}'")
        return value

    @field_validator("base_url", "judge_base_url", "endpoints")
    @classmethod
    def _url(cls, value: Any) -> Any:
        for url in value if isinstance(value, list) else [value]:
            if url and not url.startswith(("http://", "https://")):
                # a replica comes from --endpoint or from --base-url given again: say both, as the user typed one
                which = "a replica's URL (--endpoint, or --base-url given again) " if isinstance(value, list) else ""
                raise ValueError(f"{which}must start with http:// or https://, got '{url}'")
        return value

    @field_validator("concurrency", "request_rate", "tasks", "reasoning_format", "workload_set", "context_lengths",
                     "endpoints", "max_tokens", "reasoning_effort", "thinking_budget", mode="before")  # fmt: skip
    @classmethod
    def _lists(cls, value: Any, info: Any) -> Any:
        """One value, a comma list ("1,4,16"), or a list of either; a level twice would share its keys, never run."""
        value = comma_list(value)
        levels = {"concurrency", "request_rate", "max_tokens", "reasoning_effort", "thinking_budget"}
        if info.field_name in levels and isinstance(value, list) and len(set(map(str, value))) < len(value):
            raise ValueError(f"a level is given twice: {', '.join(map(str, value))}")
        return value

    @field_validator("data", mode="before")
    @classmethod
    def _data(cls, value: Any) -> Any:
        """PATH (every task), TASK=PATH, a list of those (a repeated flag), or a mapping."""
        if isinstance(value, (str, Path)):
            value = [value]
        if isinstance(value, list):
            pairs = [str(v).partition("=") for v in value]
            return {name if sep else "*": path if sep else name for name, sep, path in pairs}
        return value

    @field_validator("published", "slo", "sampling", mode="before")
    @classmethod
    def _named_text(cls, value: Any, info: Any) -> Any:
        """`NAME=VALUE` (a comma list, or a list of those: a repeated flag) or a mapping."""
        return named_values(value, info.field_name)

    @field_validator("published", mode="before")
    @classmethod
    def _shares(cls, value: Any) -> Any:
        """Each figure as a share: `85%` and a bare number above 1 are percents, a bare number up to 1 a share."""
        value = named_values(value, "published")  # whichever of the two before-validators pydantic runs first
        if not isinstance(value, dict):
            return value
        return {task: published_share(task, figure) for task, figure in value.items()}

    @field_validator("reasoning_effort")
    @classmethod
    def _efforts(cls, value: list[str]) -> list[str]:
        for effort in value:
            if effort not in EFFORTS:  # a server that checks it would refuse every request of the level
                raise ValueError(f"'{effort}' is not a reasoning effort (one of {', '.join(EFFORTS)})")
        return value

    @field_validator("temperature", "top_p", "top_k", "min_p", "presence_penalty")
    @classmethod
    def _sampling_range(cls, value: float | None, info: Any) -> float | None:
        return check_sampling(info.field_name, value)

    @field_validator("concurrency", "request_rate")
    @classmethod
    def _load_levels(cls, value: list[float] | None, info: Any) -> list[float] | None:
        """Concurrencies are whole, so a concurrency above 0 is at least 1."""
        if value is not None and (not value or any(v <= 0 for v in value)):
            what = "level must be at least 1" if info.field_name == "concurrency" else "rate must be positive"
            raise ValueError(f"every {what}, got {value}")
        return value

    @field_validator("warmup")
    @classmethod
    def _warmup(cls, value: int) -> int:
        if value < 0:
            raise ValueError(f"must not be negative, got {value}")
        return value

    @field_validator("slo", mode="before")
    @classmethod
    def _slo_names(cls, value: Any) -> Any:
        """Each limit's name before its value is read: `ttft=abc` is an unknown limit, not a bad number."""
        value = named_values(value, "slo")  # whichever of the two before-validators pydantic runs first
        allowed = ("e2e_ms", "first_answer_ms", "tpot_ms", "ttft_ms")
        for key in value if isinstance(value, dict) else ():
            if key not in allowed:
                raise ValueError(f"unknown limit '{key}' (expected {', '.join(allowed)})")
        return value

    @field_validator("slo")
    @classmethod
    def _slo(cls, value: dict[str, float]) -> dict[str, float]:
        for key, limit in value.items():
            if limit <= 0:
                raise ValueError(f"limit '{key}' must be positive")
        return value

    @field_validator("limit", "limit_per_subject", "max_tokens", "samples_per_item", "thinking_budget")
    @classmethod
    def _at_least_one(cls, value: int | list[int] | None) -> int | list[int] | None:
        for one in value if isinstance(value, list) else [value]:
            if one is not None and one < 1:
                raise ValueError(f"must be at least 1, got {one}")
        return value

    @field_validator("num_fewshot")
    @classmethod
    def _not_negative(cls, value: int | None) -> int | None:
        # 0 is a choice of its own: lm-eval's 5-shot gsm8k run zero-shot
        if value is not None and value < 0:
            raise ValueError(f"must not be negative, got {value}")
        return value

    @field_validator("fail_under")
    @classmethod
    def _share(cls, value: float | None) -> float | None:
        if value is not None and not 0 <= value <= 1:
            raise ValueError(f"must be between 0 and 1 (a share, 0.8 = 80%), got {value}")
        return value

    @model_validator(mode="after")
    def _complete(self) -> RunConfig:
        if not self.tasks and not self.workload:
            raise ValueError("at least one --task (or a --workload) is needed")
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
        if self.thinking_pair and self.thinking is not None:
            raise ValueError("--thinking-pair runs thinking on and off; drop --thinking/--no-thinking")
        if self.stream_parity and not self.stream:
            raise ValueError("--stream-parity sends every item both ways; drop --no-stream")
        if self.thinking_budget and self.thinking is False:
            raise ValueError("--thinking-budget caps the thinking, which --no-thinking turns off")
        return self

    def data_for(self, task: str, ref: str | None = None) -> Path | None:
        keys = (ref or task, task, task.split(":", 1)[0], "*")  # what --task said, the task's name, its base, PATH
        return next((self.data[k] for k in keys if k in self.data), None)
