"""The scoring side of an lm-eval task, mapped to the nearest qualeval scorer; lm-eval's own scoring code never runs.

lm-eval scores with `metric_list` (and `process_results`, `filter_list` functions); qualeval with its own scorers.
By the metrics the task reports: IFEval's four -> `ifeval`; pass@k on HumanEval-shaped documents -> `code`;
`math_verify`, or the MATH answer check of lm-eval's math families -> `math`; SQuAD's f1/em -> `alias_match`;
everything else -> `exact`, with lm-eval's options (`ignore_case`, `ignore_punctuation`, `regexes_to_ignore`).
A regex filter says which of the answer's markers counts (`group_select`); the prompt stays lm-eval's, with no
instruction of qualeval's, and the extraction ladder reads what the model wrote.
"""

from __future__ import annotations

import re
from typing import Any

from qualeval.errors import InputError
from qualeval.tasks.lmeval.files import FunctionRef, tasks_root

__all__ = ["answer_side", "metric_names"]

_IFEVAL = frozenset({"prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc"})
_SPAN = frozenset({"f1", "em", "fscore"})
_RIGHT_OR_WRONG = frozenset({"exact_match", "acc", "accuracy", "em", "exact", "f1", "math_verify", "score"})
_MATH_CHECKS = frozenset(
    {
        "hendrycks_math/utils.process_results",
        "minerva_math/utils.process_results",
        "leaderboard/math/utils.process_results",
        "aime/utils.process_results",
        "agieval/utils.process_results",
    }
)
"""process_results functions that are the MATH answer check (boxed answer, then Hendrycks et al.'s is_equiv)."""
_REGEX_META = set("\\.^$*+?{}[]|()")


def metric_names(cfg: dict[str, Any]) -> list[str]:
    """The metrics a task reports; a metric given as a function goes by the function's name."""
    out = []
    for metric in cfg.get("metric_list") or []:
        name = metric.get("metric") if isinstance(metric, dict) else None
        out += [name.attr if isinstance(name, FunctionRef) else str(name)] if name is not None else []
    return out


def _exact_options(cfg: dict[str, Any]) -> dict[str, Any]:
    """The options of the task's exact_match metric (lm-eval applies them to the gold and the answer alike)."""
    for metric in cfg.get("metric_list") or []:
        if isinstance(metric, dict) and metric.get("metric") == "exact_match":
            return metric
    return {}


def _literal(pattern: str) -> str | None:
    """The fixed text a filter regex starts with (`#### `, `The answer is `, a lookbehind's), when it has one."""
    head = re.sub(r"^\(*(?:\?<=|\?:)?", "", pattern)
    out: list[str] = []
    index = 0
    while index < len(head):
        char = head[index]
        if char == "\\" and index + 1 < len(head):
            char = head[index + 1]
            if char.isalnum():  # \b, \d, \s: a class, not a character
                break
            index += 1
        elif char in _REGEX_META:
            break
        if head[index + 1 : index + 2] in ("?", "*", "{"):
            break  # an optional character is not part of the marker
        out.append(char)
        index += 1
    text = "".join(out)
    return text if text.strip() else None


def _pick(cfg: dict[str, Any]) -> str:
    """Which answer marker counts: the one the first regex filter with a fixed marker keeps (`group_select` -1:
    the last)."""
    for pipeline in cfg.get("filter_list") or []:
        steps = pipeline.get("filter") if isinstance(pipeline, dict) else None
        for step in steps if isinstance(steps, list) else []:
            if isinstance(step, dict) and step.get("function") == "regex":
                marker = _literal(str(step.get("regex_pattern") or ""))
                if marker is not None:
                    return "last" if str(step.get("group_select", 0)) == "-1" else "first"
    return "last"


def _exact(cfg: dict[str, Any], names: list[str]) -> tuple[dict[str, Any], list[str]]:
    metric = _exact_options(cfg)
    normalize = ["whitespace", *(["lower"] if metric.get("ignore_case") else [])]
    normalize += ["punctuation"] if metric.get("ignore_punctuation") else []
    pick = _pick(cfg)
    # the gold is what lm-eval compares: the target after regexes_to_ignore (GSM8K: the number after ####)
    ignore = [str(r) for r in metric.get("regexes_to_ignore") or []]
    out = {
        "answer": {"type": "text", "normalize": normalize, "pick": pick},
        "scorer": {"kind": "exact", "ignore": ignore},
    }
    if names and not set(names) & _RIGHT_OR_WRONG:
        return out, [f"lm-eval scores it by {', '.join(names[:4])}, for which qualeval has no scorer: exact match"]
    return out, []


def _code(cfg: dict[str, Any], where: str, names: list[str]) -> dict[str, Any]:
    templates = " ".join(str(cfg.get(k)) for k in ("doc_to_text", "doc_to_target") if isinstance(cfg.get(k), str))
    if not all(field in templates for field in ("prompt", "entry_point", "test")):
        raise InputError(
            f"{where}: field 'metric_list': {names[0]} runs the answer against tests lm-eval's own way; "
            "qualeval's code scorer takes HumanEval-shaped documents (prompt, test, entry_point)"
        )
    return {
        "answer": {"type": "text"},
        "scorer": {"kind": "code"},
        # lm-eval's stop strings ("\ndef", "\nclass"...) end a completion that continues the prompt's function;
        # a chat answer restates the function, which they would cut before its `def`
        "generation": {"stop": []},
        "doc_to_meta": {"entry_point": "entry_point", "test": "test", "prompt": "prompt"},
    }


def _checks_math(cfg: dict[str, Any]) -> bool:
    results = cfg.get("process_results")
    if not isinstance(results, FunctionRef):
        return False
    folder = results.folder.resolve().relative_to(tasks_root(results.name)).as_posix()
    return f"{folder}/{results.name}" in _MATH_CHECKS


def answer_side(cfg: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    """Spec keys of a generative task's answer (answer, scorer, prompt parts, doc_to_meta), and notes on the
    mapping for its description."""
    names = metric_names(cfg)
    if set(names) & _IFEVAL:
        meta = {"instruction_id_list": "instruction_id_list", "kwargs": "kwargs", "prompt": "prompt"}
        return {
            "answer": {"type": "text"},
            "scorer": {"kind": "ifeval"},
            "doc_to_meta": meta,
        }, []
    if any(re.search(r"pass(_at_|@)", n) for n in names):
        return _code(cfg, where, names), []
    if "math_verify" in names or _checks_math(cfg):
        return {"answer": {"type": "text"}, "scorer": {"kind": "math"}}, []
    if set(names) & _SPAN:
        return {"answer": {"type": "text", "pick": _pick(cfg)}, "scorer": {"kind": "alias_match"}}, []
    return _exact(cfg, names)
