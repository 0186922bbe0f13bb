"""Import an lm-eval task YAML and run it generatively, through a chat endpoint.

`lm_eval:NAME` looks the task up in the installed lm-eval package (`pip install "qualeval[lm-eval]"`);
`lm_eval:path/to/task.yaml` reads a file. Only data is imported: a task whose YAML needs `!function` (Python
code from the lm-eval tree) is refused, as every task file with code is. Loglikelihood (`multiple_choice`)
tasks become generative choice questions: the choices are listed and the model answers with a letter.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from qualeval.errors import InputError, validation_problem
from qualeval.tasks.spec import TaskSpec
from qualeval.tasks.task import Task

__all__ = ["find_task_file", "import_lm_eval_task", "lm_eval_to_spec"]

_CHOICE_INSTRUCTION = 'Answer on the last line as "Answer: X", where X is the letter of your choice.'
_TEXT_INSTRUCTION = 'Give the final answer on the last line as "Answer: <answer>".'
_REGEX_META = set("\\.^$*+?{}[]|()")


def _find(name: str) -> Path:
    if name.endswith((".yaml", ".yml")):
        return Path(name)
    try:
        import lm_eval
    except ImportError:
        raise InputError(
            f'lm_eval:{name}: lm-eval is not installed (pip install "qualeval[lm-eval]"), '
            "or give lm_eval:path/to/task.yaml"
        ) from None
    return find_task_file(Path(lm_eval.__file__).parent / "tasks", name)


def find_task_file(root: Path, name: str) -> Path:
    """The YAML file under `root` that defines task `name`."""
    # the task's own top-level `task:` line, never a `- task: NAME` entry of a group file that runs it
    own = re.compile(rf"^task:\s*['\"]?{re.escape(name)}['\"]?\s*(?:#.*)?$", re.MULTILINE)
    for path in sorted(root.rglob("*.yaml")):
        try:
            head = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if own.search(head):
            return path
    raise InputError(f"lm_eval:{name}: no lm-eval task of that name under {root}")


class _DataOnly(yaml.SafeLoader):
    """SafeLoader that names the offending tag instead of failing on it anonymously."""


def _reject(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    raise InputError(
        f"{loader.name}:{node.start_mark.line + 1}: YAML tag !{suffix} runs code from the lm-eval "
        "tree; qualeval imports data only"
    )


_DataOnly.add_multi_constructor("!", _reject)


def _read(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    if path in seen:
        raise InputError(f"{path}: 'include' loops back to itself")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read lm-eval task ({exc.strerror})") from None
    try:
        loader = _DataOnly(text)
        loader.name = str(path)
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: an lm-eval task must be a mapping")
    include = data.pop("include", None)
    if include:
        base = _read(path.parent / str(include), (*seen, path))
        data = {**base, **data}
    return data


def _template(value: Any) -> str:
    """lm-eval allows a bare field name where a template is expected."""
    text = str(value)
    return text if "{{" in text or "{%" in text else "{{ " + text + " }}"


def _exact_match(data: dict[str, Any]) -> dict[str, Any]:
    """The options of the task's exact_match metric (lm-eval applies them to the gold and the answer alike)."""
    for metric in data.get("metric_list") or []:
        if isinstance(metric, dict) and metric.get("metric") == "exact_match":
            return metric
    return {}


def _literal(pattern: str) -> str | None:
    """The fixed text a filter regex starts with (`#### `, `The answer is `), when it has one."""
    head, out, escaped = pattern.split("(", 1)[0], [], False
    for char in head:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in _REGEX_META:
            return None
        else:
            out.append(char)
    return "".join(out) if "".join(out).strip() else None


def _answer_of(data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The answer spec and instruction of a generative task, from its first filter pipeline: the marker its
    regex reads (asked for in the instruction) and which match it keeps (`group_select`: 0 first, -1 last)."""
    metric = _exact_match(data)
    normalize = ["whitespace", *(["lower"] if metric.get("ignore_case") else [])]
    normalize += ["punctuation"] if metric.get("ignore_punctuation") else []
    answer: dict[str, Any] = {"type": "text", "normalize": normalize}
    pipelines = [f for f in data.get("filter_list") or [] if isinstance(f, dict)]
    steps = [s for s in (pipelines[0].get("filter") or []) if isinstance(s, dict)] if pipelines else []
    regex = next((s for s in steps if s.get("function") == "regex"), None)
    if regex is None:
        return answer, _TEXT_INSTRUCTION
    answer["pick"] = "last" if int(regex.get("group_select", 0)) == -1 else "first"
    marker = _literal(str(regex.get("regex_pattern") or ""))
    if marker is None:
        return answer, _TEXT_INSTRUCTION
    return answer, f'Give the final answer on its own last line as "{marker.strip()} <answer>".'


def lm_eval_to_spec(data: dict[str, Any], where: str) -> TaskSpec:
    if "task" not in data:
        raise InputError(f"{where}: field 'task': an lm-eval task needs a name")
    mc = data.get("output_type") == "multiple_choice"
    gen = data.get("generation_kwargs") or {}
    until = gen.get("until") or []
    spec: dict[str, Any] = {
        "name": str(data["task"]).replace("/", "_"),
        "description": f"Imported from lm-eval ({where}).",
        "dataset_path": data.get("dataset_path"),
        "dataset_name": data.get("dataset_name"),
        "test_split": data.get("test_split") or data.get("validation_split") or "test",
        "fewshot_split": data.get("fewshot_split") or data.get("training_split"),
        "num_fewshot": int(data.get("num_fewshot") or 0),
        "doc_to_text": _template(data.get("doc_to_text", "{{ question }}")),
        "doc_to_target": str(data.get("doc_to_target", "answer")),
        "prompt": {"system": data.get("description") or None},
        "generation": {
            "max_tokens": gen.get("max_gen_toks", 4096),
            "temperature": gen.get("temperature", 0.0),
            "stop": [str(u) for u in (until if isinstance(until, list) else [until])],
        },
    }
    if mc:
        choice = data.get("doc_to_choice")
        if choice is None:
            raise InputError(f"{where}: field 'doc_to_choice': a multiple_choice task needs choices")
        spec["doc_to_choice"] = choice if isinstance(choice, list) else str(choice)
        spec["answer"] = {"type": "choice", "labels": "letters"}
        spec["scorer"] = "choice"
        spec["prompt"]["instruction"] = _CHOICE_INSTRUCTION  # qualeval's default user template lists the options
    else:
        # the gold is what lm-eval compares: the target after regexes_to_ignore (GSM8K: the number after ####);
        # few-shot turns keep the whole target, worked solution and all
        spec["answer"], spec["prompt"]["instruction"] = _answer_of(data)
        ignore = [str(r) for r in _exact_match(data).get("regexes_to_ignore") or []]
        spec["scorer"] = {"kind": "exact", "ignore": ignore}
    # a local folder given with --data holds one JSONL file per split, named after it
    spec["data_files"] = {split: f"{split}.jsonl" for split in (spec["test_split"], spec["fewshot_split"]) if split}
    try:
        return TaskSpec.model_validate(spec)
    except ValidationError as exc:
        problem = validation_problem(exc)
        raise InputError(f"{where}: field '{problem.field or '(task)'}': {problem.message}") from None


def import_lm_eval_task(name: str) -> Task:
    path = _find(name)
    return Task(lm_eval_to_spec(_read(path), str(path)), path)
