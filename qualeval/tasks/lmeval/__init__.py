"""Import lm-eval tasks and run them generatively, through a chat endpoint.

`lm_eval:NAME` looks NAME up in the installed lm-eval package (`pip install "qualeval[lm-eval]"`): a task, or a
group or tag, which imports as its tasks. `lm_eval:path/to/file.yaml` reads a file (a task, or a group of tasks
of the installed tree). The prompt sent is lm-eval's own (`render.py`), with nothing of qualeval's added.
Loglikelihood (`multiple_choice`) tasks become generative choice questions: where the question does not list the
choices (MMLU's does), they are listed and the model answers with a letter.

The rule for code: a `!function module.attr` tag is resolved (imported, as lm-eval imports it, relative to the
YAML file's folder) only when the real path of the YAML file that holds the tag lies inside the installed lm-eval
package's own `tasks` tree (`Path(lm_eval.__file__).parent / "tasks"`), and its module must lie there too. That
code is library code, installed with lm-eval and run by lm-eval itself. A tag anywhere else (a user's own file, an
`lm_eval:path/to/file.yaml` outside that tree) is refused, as every task file with code is; a user's file may
include or group tasks of the tree, which then bring their own functions, never functions of the user's file.
No flag widens the rule. The functions that shape what is sent (`process_docs`, `doc_to_text`,
`doc_to_target`, `doc_to_choice`, few-shot `samples` and formatting) run; the scoring-side ones
(`process_results`, filters, metric functions) never run: qualeval scores with its own scorers (`scoring.py`).
The functions are held with the loaded task in memory; the persisted spec stays data and names them.
"""

from __future__ import annotations

from pathlib import Path

from qualeval.errors import InputError
from qualeval.tasks.lmeval.convert import build_task, lm_eval_to_spec
from qualeval.tasks.lmeval.files import tasks_root
from qualeval.tasks.lmeval.lookup import Found, resolve, resolve_file
from qualeval.tasks.task import Task

__all__ = ["import_lm_eval_task", "import_lm_eval_tasks", "lm_eval_to_spec"]


def _found(name: str) -> list[Found]:
    if name.endswith((".yaml", ".yml")):
        return resolve_file(_root_if_installed(name), Path(name))
    return resolve(tasks_root(name), name)


def _root_if_installed(name: str) -> Path | None:
    try:
        return tasks_root(name)
    except InputError:
        return None  # a file of the user's own still imports; only its group members need the tree


def import_lm_eval_tasks(name: str) -> list[Task]:
    """Every task `lm_eval:NAME` stands for: one task, or a group's or tag's tasks, in order."""
    return [build_task(found) for found in _found(name)]


def import_lm_eval_task(name: str) -> Task:
    """The one task `lm_eval:NAME` names; a group or tag is one line saying what it holds."""
    found = _found(name)
    if not found:
        raise InputError(f"lm_eval:{name} is a group without tasks")
    if len(found) != 1:
        shown = ", ".join(str(f.cfg.get("task")) for f in found[:3])
        raise InputError(
            f"lm_eval:{name} is a group of {len(found)} lm-eval tasks ({shown}{', ...' if len(found) > 3 else ''}): "
            f"`qualeval run --task lm_eval:{name}` runs them all; give one, lm_eval:{found[0].cfg.get('task')}, "
            "to show a sample"
        )
    return build_task(found[0])
