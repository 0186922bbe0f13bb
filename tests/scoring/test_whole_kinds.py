"""Which scorer kinds read the whole answer is the scoring tables' to say: the task format names the kinds, and a
task whose whole-answer scorer is given a typed answer is refused, naming its file, before anything is sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.errors import InputError
from qualeval.records import RunConfig, TaskSpec
from qualeval.run.driver import execute
from qualeval.run.rescoring import rescore
from qualeval.scoring.whole import WHOLE_SCORERS, check_scorers, scorer_problem
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.tasks import builtin_tasks, load_task, parse_task


def _task(tmp_path: Path, kind: str, answer: str) -> Path:
    path = tmp_path / f"{kind}.yaml"
    path.write_text(
        f"name: t\nsamples:\n  - {{question: a, answer: '1'}}\nanswer: {{type: {answer}}}\nscorer: {kind}\n"
    )
    return path


def _refused(args: list[str]) -> str:
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output
    return " ".join(done.output.split())


@pytest.mark.parametrize("kind", ["code", "ifeval"])
def test_a_whole_answer_scorer_of_a_typed_answer_is_refused_naming_the_file(tmp_path: Path, kind: str) -> None:
    task = _task(tmp_path, kind, "number")
    (tmp_path / "r.jsonl").write_text('{"id": 0, "response": "1"}\n')
    said = f"error: {task}: field 'scorer': the {kind} scorer reads the whole answer: it needs answer.type 'text'"
    assert said in _refused(["tasks", "show", str(task)])
    score = ["score", "--task", str(task), "--responses", str(tmp_path / "r.jsonl"), "--out"]
    assert said in _refused([*score, str(tmp_path / "scored")])
    run = ["run", "--task", str(task), "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--out"]
    assert said in _refused([*run, str(tmp_path / "run")])
    assert not (tmp_path / "run").exists() and not (tmp_path / "scored").exists()


def test_the_scoring_table_decides_which_kinds_read_the_whole_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = load_task(str(_task(tmp_path, "exact", "number")))
    check_scorers([task])  # a value scorer reads a typed answer
    monkeypatch.setitem(WHOLE_SCORERS, "exact", WHOLE_SCORERS["ifeval"])
    with pytest.raises(InputError, match=r"exact\.yaml: field 'scorer': the exact scorer reads the whole answer"):
        check_scorers([task])


def test_a_rescore_is_refused_once_the_tables_say_its_task_cannot_be_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = _task(tmp_path, "exact", "number")
    sim = SimConfig(
        flavour="vllm", port=0, tasks=(str(task),), behaviour=Behaviour(accuracy=1.0), latency=Latency(burst=True)
    )
    with running_server(sim) as url:
        config = RunConfig(base_url=url, model="sim", tasks=[str(task)], out=tmp_path / "run", warmup=0)
        asyncio.run(execute(config))
    monkeypatch.setitem(WHOLE_SCORERS, "exact", WHOLE_SCORERS["ifeval"])
    with pytest.raises(InputError, match=r"exact\.yaml: field 'scorer': the exact scorer reads the whole answer"):
        rescore(tmp_path / "run")
    assert not (tmp_path / "run" / "rescore").exists()


def test_the_task_format_names_the_kinds_but_leaves_what_they_read_to_scoring() -> None:
    spec = TaskSpec.model_validate(
        {"name": "t", "samples": [{"question": "a", "answer": "1"}], "scorer": "code", "answer": {"type": "number"}}
    )
    assert scorer_problem(spec) == "the code scorer reads the whole answer: it needs answer.type 'text'"


def test_every_builtin_task_can_be_judged_by_its_scorer() -> None:
    assert {name: scorer_problem(parse_task(path)) for name, path in builtin_tasks().items()} == dict.fromkeys(
        builtin_tasks()
    )
