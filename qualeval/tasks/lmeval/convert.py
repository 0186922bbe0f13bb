"""One lm-eval task configuration -> a qualeval task: the spec (data), and the functions it renders with."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from qualeval.errors import InputError, validation_problem
from qualeval.records import TaskSpec
from qualeval.tasks.lmeval.files import FunctionRef
from qualeval.tasks.lmeval.functions import documents_function, first_line, resolve_function
from qualeval.tasks.lmeval.lookup import Found
from qualeval.tasks.lmeval.mmlu import MMLU_NOTE, mmlu_local
from qualeval.tasks.lmeval.render import fewshot_answer_template, prefix_sources, user_template
from qualeval.tasks.lmeval.scoring import answer_side
from qualeval.tasks.prompts import CHOICE_USER, warn_once
from qualeval.tasks.task import Task, TaskCode

__all__ = ["build_task", "lm_eval_to_spec"]

_CHOICE_INSTRUCTION = 'Answer on the last line as "Answer: X", where X is the letter of your choice.'
_REFUSED = {
    "class": "a task written as a Python class; qualeval imports YAML tasks",
    "doc_to_image": "an image task; qualeval sends text",
    "doc_to_audio": "an audio task; qualeval sends text",
    "custom_dataset": "the dataset is built by code; qualeval reads the hub or --data",
    "use_prompt": "a promptsource prompt, which qualeval does not read",
}
_HUB_KWARGS = ("data_files", "data_dir", "revision")
_FIELD = re.compile(r"[A-Za-z_][\w.]*")
Documents = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


@dataclass
class _Code:
    """The functions a task's keys name, collected while its spec is built."""

    keys: dict[str, Callable[[dict[str, Any]], Any]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    process_docs: Documents | None = None

    def key(self, name: str, value: Any, *, text: bool) -> str:
        """The spec's value of a doc_to_* key; a function is kept here and the spec names it in a comment."""
        if isinstance(value, FunctionRef):
            self.keys[name] = resolve_function(value)
            self.labels[name] = value.name
            return "{# lm-eval's " + value.name + " #}"
        return _template(value, text=text)

    def task_code(self) -> TaskCode | None:
        if not self.keys and self.process_docs is None:
            return None
        return TaskCode(keys=dict(self.keys), process_docs=self.process_docs, labels=dict(self.labels))


def _template(value: Any, *, text: bool) -> str:
    """lm-eval's reading of a key: a column name, else a Jinja template; a number is itself (IFEval's `0`)."""
    if isinstance(value, (bool, int, float)):
        return "{{ " + repr(value) + " }}"
    source = str(value)
    if "{{" in source or "{%" in source:
        return source
    if _FIELD.fullmatch(source):
        return "{{ " + source + " }}" if text else source
    return source if text else "{{ " + repr(source) + " }}"  # fixed text, not a field name


def _name(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", str(value)) or "task"


def _refuse(cfg: dict[str, Any], where: str) -> None:
    for key, why in _REFUSED.items():
        if cfg.get(key) is not None:
            raise InputError(f"{where}: field '{key}': {why}")
    kind = cfg.get("output_type", "generate_until")
    if kind not in ("generate_until", "multiple_choice"):
        raise InputError(f"{where}: field 'output_type': '{kind}' scores log-likelihoods, which a chat endpoint lacks")


def _number(cfg: dict[str, Any], key: str, where: str, default: float, label: str = "") -> Any:
    """A number of the configuration (an int where the default is one), or one line naming the field."""
    value = cfg.get(key)
    if isinstance(value, bool):  # float(True) is 1.0: a mistyped setting, never a number
        raise InputError(f"{where}: field '{label}{key}': expected a number, got '{value}'")
    try:
        return default if value is None else type(default)(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: field '{label}{key}': expected a number, got '{value}'") from None


def _generation(cfg: dict[str, Any], where: str) -> dict[str, Any]:
    gen = cfg.get("generation_kwargs") or {}
    if not isinstance(gen, dict):
        raise InputError(f"{where}: field 'generation_kwargs': expected a mapping")
    until = gen.get("until") or []
    label = "generation_kwargs."
    # greedy unless the task samples; a sampling task without a temperature samples at lm-eval's 1.0
    temperature = _number(gen, "temperature", where, 1.0, label) if gen.get("do_sample") else 0.0
    longest = _number(gen, "max_gen_toks", where, 0, label) or _number(gen, "max_new_tokens", where, 4096, label)
    return {
        "max_tokens": longest,
        "temperature": temperature,
        "stop": [str(u) for u in (until if isinstance(until, list) else [until])],
    }


def _samples(value: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(value, FunctionRef):
        function = resolve_function(value)
        try:
            value = function()
        except Exception as exc:  # lm-eval's code building its examples
            raise InputError(f"{value.where}: fewshot_config.samples {value.name} failed: {first_line(exc)}") from None
    if not isinstance(value, list) or not all(isinstance(d, dict) for d in value):
        raise InputError(f"{where}: field 'fewshot_config.samples': expected a list of documents")
    return [dict(d) for d in value]


def _fewshot(cfg: dict[str, Any], where: str, code: _Code, test_split: str) -> dict[str, Any]:
    """lm-eval's choice of few-shot examples: the configured split, else the inline samples, else the training,
    validation or (lm-eval warns) test split. Both of lm-eval's samplers are the first N here."""
    config = cfg.get("fewshot_config") or {}
    if not isinstance(config, dict):
        raise InputError(f"{where}: field 'fewshot_config': expected a mapping")
    out: dict[str, Any] = {"num_fewshot": _number(cfg, "num_fewshot", where, 0)}
    split = config.get("split") or cfg.get("fewshot_split")
    if split is None and config.get("samples") is not None:
        out["fewshot_samples"] = _samples(config["samples"], where)
    else:
        split = split or cfg.get("training_split") or cfg.get("validation_split")
        if split is None and out["num_fewshot"]:
            warn_once(f"lmeval-shots:{where}", f"{where}: few-shot examples come from the test split, as in lm-eval")
        out["fewshot_split"] = split or (test_split if out["num_fewshot"] else None)
    for key in ("doc_to_text", "doc_to_target"):
        if config.get(key) is not None:
            out[f"fewshot_{key}"] = code.key(f"fewshot_{key}", config[key], text=key == "doc_to_text")
    return out


def _choices(cfg: dict[str, Any], where: str, code: _Code, prefix: str | None, delimiter: str) -> dict[str, Any]:
    choice = cfg.get("doc_to_choice")
    if choice is None:
        raise InputError(f"{where}: field 'doc_to_choice': a multiple_choice task needs choices")
    if isinstance(choice, dict):
        choice = list(choice.values())
    fixed = [str(c) for c in choice] if isinstance(choice, list) else None
    prompt: dict[str, Any] = {}
    if fixed is None or fixed != list(string.ascii_uppercase[: len(fixed)]):
        # lm-eval scores these by log-likelihood and has no prompt that shows the choices: qualeval's lists them,
        # lettered, and says how to answer. Where the choices are letters the question already lists (MMLU), the
        # question is lm-eval's prompt as it is.
        prompt = {"instruction": _CHOICE_INSTRUCTION, "user": user_template(prefix, delimiter, CHOICE_USER)}
    return {
        "doc_to_choice": fixed if fixed is not None else code.key("doc_to_choice", choice, text=False),
        "answer": {"type": "choice", "labels": "letters"},
        "scorer": "choice",
        "prompt": prompt,
    }


def _dataset(cfg: dict[str, Any], where: str, test_split: str, fewshot_split: str | None) -> dict[str, Any]:
    kwargs = cfg.get("dataset_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise InputError(f"{where}: field 'dataset_kwargs': expected a mapping")
    hub = {k: kwargs[k] for k in _HUB_KWARGS if k in kwargs}  # trust_remote_code stays behind: no loading scripts
    # --data FOLDER: the repository's own files where the task names them, else one JSONL file per split
    files = {s: f"{s}.jsonl" for s in (test_split, fewshot_split) if s}
    named = kwargs.get("data_files")
    files.update({str(k): str(v) for k, v in named.items()} if isinstance(named, dict) else {})
    columns = kwargs.get("column_names") if kwargs.get("header", 0) is None else None
    return {
        "dataset_path": cfg.get("dataset_path"),
        "dataset_name": cfg.get("dataset_name"),
        "dataset_kwargs": hub,
        "data_files": files,
        **({"columns": [str(c) for c in columns]} if isinstance(columns, list) else {}),
    }


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = {**out[key], **value} if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _then(first: Documents, then: Documents | None) -> Documents:
    """`first`, then lm-eval's own process_docs where the task has one."""
    return first if then is None else lambda docs: then(first(docs))


def _description(where: str, code: _Code, notes: list[str]) -> str:
    text = f"Imported from lm-eval ({where})."
    if code.labels:
        used = ", ".join(dict.fromkeys(code.labels.values()))
        text += f" Rendered with lm-eval's own functions from its installed task tree: {used}."
    return " ".join([text, *notes])


def lm_eval_to_spec(cfg: dict[str, Any], where: str, code: _Code | None = None) -> TaskSpec:
    """The spec of one task configuration; `code` collects the functions its keys name."""
    code = code if code is not None else _Code()
    _refuse(cfg, where)
    if "task" not in cfg:
        raise InputError(f"{where}: field 'task': an lm-eval task needs a name")
    test_split = str(cfg.get("test_split") or cfg.get("validation_split") or "test")
    if isinstance(cfg.get("process_docs"), FunctionRef):
        code.process_docs = documents_function(cfg["process_docs"])
        code.labels["process_docs"] = cfg["process_docs"].name
    prefix, shot_prefix = prefix_sources(cfg)
    delimiter = str(cfg.get("target_delimiter", " "))
    spec: dict[str, Any] = {
        "name": _name(cfg["task"]),
        "test_split": test_split,
        "doc_to_text": code.key("doc_to_text", cfg.get("doc_to_text", "question"), text=True),
        "doc_to_target": code.key("doc_to_target", cfg.get("doc_to_target", "answer"), text=False),
        "prompt": {
            "system": str(cfg["description"]) if cfg.get("description") else None,
            "user": user_template(prefix, delimiter),
            "fewshot_answer": fewshot_answer_template(shot_prefix),
        },
        "generation": _generation(cfg, where),
        **_fewshot(cfg, where, code, test_split),
    }
    spec.update(_dataset(cfg, where, test_split, spec.get("fewshot_split")))
    local = mmlu_local(cfg, where)
    if local is not None:
        spec.update(local[0])
        code.process_docs = _then(local[1], code.process_docs)
    notes: list[str] = []
    if cfg.get("output_type") == "multiple_choice":
        spec = _merge(spec, _choices(cfg, where, code, prefix, delimiter))
    else:
        side, notes = answer_side(cfg, where)
        spec = _merge(spec, side)
    for note in notes:
        warn_once(f"lmeval-note:{where}:{note}", f"{where}: {note}")
    spec["description"] = _description(where, code, notes) + (f" {MMLU_NOTE}" if local is not None else "")
    try:
        return TaskSpec.model_validate(spec)
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{where}: field '{problem.field or '(task)'}': {problem.message}") from None


def build_task(found: Found) -> Task:
    code = _Code()
    spec = lm_eval_to_spec(found.cfg, str(found.path), code)
    return Task(spec, found.path, code=code.task_code())
