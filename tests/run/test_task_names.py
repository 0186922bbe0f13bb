"""A run's tasks against its options: two different tasks under one name, and --limit-per-subject where a task
has no subjects."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.cli.output import shown_warnings
from qualeval.errors import InputError
from qualeval.records import RunConfig
from qualeval.run.checks import check_run_tasks, check_task_names
from qualeval.tasks import load_task
from qualeval.tasks.load import builtin_tasks

UNREACHED = "http://127.0.0.1:8169/v1"  # nothing listens: every case here stops before a request


def _copy(builtin: str, to: Path, change: str = "") -> Path:
    """A task file: the built-in one, with its description replaced when `change` is given."""
    spec = yaml.safe_load(builtin_tasks()[builtin].read_text(encoding="utf-8"))
    spec["description"] = change or spec.get("description")
    to.parent.mkdir(parents=True, exist_ok=True)
    to.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return to


def _run(tmp_path: Path, *args: str) -> tuple[int, str]:
    base = ["run", "--model", "m", "--base-url", UNREACHED, "--out", str(tmp_path / "run"), "--no-probe"]
    done = CliRunner().invoke(app, [*base, *args])
    return done.exit_code, done.output


def test_a_file_named_as_a_builtin_task_is_refused_naming_both(tmp_path: Path) -> None:
    mine = _copy("word_problems", tmp_path / "a" / "word_problems.yaml", change="my own")
    code, output = _run(tmp_path, "--task", "word_problems", "--task", str(mine))
    assert code == 2, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(mine) in errors[0] and str(builtin_tasks()["word_problems"]) in errors[0]
    assert "name:" in errors[0] and "Traceback" not in output


def test_two_files_whose_names_are_equal_are_refused_and_the_same_task_twice_is_what_it_was(tmp_path: Path) -> None:
    a = _copy("word_problems", tmp_path / "a" / "x.yaml", change="first")
    b = _copy("word_problems", tmp_path / "b" / "x.yaml", change="second")
    with pytest.raises(InputError, match="two different tasks are named 'word_problems'") as caught:
        check_task_names([load_task(str(a)), load_task(str(b))])
    assert str(a) in str(caught.value) and str(b) in str(caught.value)
    # the same task given twice, by name or by its very file: not two different tasks
    check_task_names([load_task("word_problems"), load_task("word_problems")])
    check_task_names([load_task("word_problems"), load_task(str(builtin_tasks()["word_problems"]))])
    code, output = _run(tmp_path, "--task", "word_problems", "--task", "word_problems")
    assert code == 2 and "the same task is given twice" in output


def test_limit_per_subject_without_subjects_is_a_warning_or_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = RunConfig(model="m", tasks=["mmlu:anatomy", "word_problems"], base_url=UNREACHED, out="unused")
    tasks = [load_task("mmlu:anatomy"), load_task("word_problems")]
    with shown_warnings():  # as the CLI shows a library warning
        check_run_tasks(config.model_copy(update={"limit_per_subject": 2}), tasks)
    warned = [line for line in capsys.readouterr().err.splitlines() if "--limit-per-subject" in line]
    assert len(warned) == 1 and warned[0].startswith("warning:") and "word_problems" in warned[0]
    with shown_warnings():
        check_run_tasks(config, tasks)  # not asked for: nothing to say
    assert "--limit-per-subject" not in capsys.readouterr().err
    # no task of the run has subjects: the flag would change nothing while the user expects a few of each
    code, output = _run(tmp_path, "--task", "word_problems", "--limit-per-subject", "2")
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "--limit-per-subject" in errors[0] and "word_problems" in errors[0]
