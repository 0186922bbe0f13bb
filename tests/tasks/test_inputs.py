"""Task files as a new user writes them: choice prompts, header-less CSVs, the hub offline, stray --data, and the
reference server's answer key (several data paths, found by hashing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qualeval.cli.output import shown_warnings
from qualeval.errors import InputError
from qualeval.records import RunConfig
from qualeval.run.checks import check_run_tasks
from qualeval.sim.answerkey import AnswerKey, KeyEntry
from qualeval.tasks import build_samples, load_task, sources
from qualeval.tasks import prompts as prompts_module
from tests.conftest import DATA

CHOICE_TASK = """\
name: {name}
samples:
  - {{question: "Which planet is largest?", options: [Mars, Jupiter, Venus], answer: 1}}
doc_to_text: "{{{{ question }}}}"
doc_to_choice: options
doc_to_target: answer
answer: {{type: choice}}
scorer: choice
{extra}"""


def qualeval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=120)


def _task(tmp_path: Path, name: str, extra: str = "") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(CHOICE_TASK.format(name=name, extra=extra), encoding="utf-8")
    return path


def test_a_choice_task_without_a_prompt_lists_its_options_and_says_how_to_answer(tmp_path: Path) -> None:
    sample = build_samples(load_task(str(_task(tmp_path, "planets"))))[0]
    prompt = sample.messages[-1].content
    assert prompt.startswith("Which planet is largest?\n\nA. Mars\nB. Jupiter\nC. Venus\n")
    assert '"Answer: X"' in prompt and sample.gold == "B"


def test_a_prompt_that_hides_the_choices_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts_module._warned.clear()
    path = _task(tmp_path, "hidden", 'prompt:\n  user: "{{ text }} Answer with a letter."\n')
    with shown_warnings():  # as the CLI shows a library warning
        build_samples(load_task(str(path)))
    err = capsys.readouterr().err
    assert err.startswith("warning: ") and "does not show all its choices" in err and str(path) in err


def test_a_csv_without_a_header_row_is_one_line_naming_the_file_and_field(tmp_path: Path) -> None:
    data = tmp_path / "questions.csv"
    data.write_text("What is 2+2?,3,4,5,6,B\nWhat is 1+1?,2,3,4,5,A\n", encoding="utf-8")
    task = tmp_path / "headerless.yaml"
    task.write_text(
        'name: headerless\ndata_files: {test: questions.csv}\ndoc_to_text: "{{ question }}"\n'
        'doc_to_choice: "{{ [A, B, C, D] }}"\ndoc_to_target: answer\nanswer: {type: choice}\nscorer: choice\n',
        encoding="utf-8",
    )
    done = qualeval("tasks", "show", str(task), "--data", str(data))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and str(data) in line and "'question'" in line and "columns:" in line


def test_a_hub_dataset_without_network_points_to_data_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*sources._OFFLINE_VARS, *sources._PROXY_VARS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://hub.invalid")  # a name that never resolves
    with pytest.raises(InputError, match=r"cannot be reached .*give --data PATH"):
        build_samples(load_task("gsm8k"), limit=1)


def test_hf_hub_offline_reads_the_cache_and_then_points_to_data(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in sources._PROXY_VARS}
    env.update(HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))  # an empty cache: nothing to read offline
    done = subprocess.run(
        [sys.executable, "-m", "qualeval", "tasks", "show", "gsm8k"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "openai/gsm8k" in done.stderr and "give --data PATH" in done.stderr


def test_data_for_a_task_not_in_the_run_is_a_warning_every_run(capsys: pytest.CaptureFixture[str]) -> None:
    config = RunConfig(
        base_url="http://127.0.0.1:1/v1", model="m", out="o", tasks=["knowledge_qa"], data={"gsm8k": "x.jsonl"}
    )
    for _ in range(2):  # a second run in the same process (the API, a notebook) is warned again
        with shown_warnings():
            check_run_tasks(config, [load_task("knowledge_qa")])
        assert "warning: --data gsm8k=x.jsonl: no task 'gsm8k' in this run" in capsys.readouterr().err


def test_code_tasks_are_refused_without_permission() -> None:
    config = RunConfig(base_url="http://127.0.0.1:1/v1", model="m", out="o", tasks=["humaneval"])
    with pytest.raises(InputError, match="allow-code-execution"):
        check_run_tasks(config, [load_task("humaneval")])


class _CountingList(list):  # type: ignore[type-arg]
    scans = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        _CountingList.scans += 1
        return super().__iter__()


def test_the_answer_key_finds_wrapped_questions_by_hashing_not_scanning() -> None:
    entries = [
        KeyEntry(question=f"What is {i} plus {i + 1} in all, counting carefully?", answer=str(2 * i + 1))
        for i in range(15000)
    ]
    entries.append(KeyEntry(question="What is 7 plus 8", answer="short"))
    key = AnswerKey(entries)
    key._norms = _CountingList(key._norms)
    for i in (3, 7_000, 14_999):
        found = key.find(
            f"Solve this.\n\nWhat is {i} plus {i + 1} in all, counting carefully?\n\nEnd with 'Answer: N'."
        )
        assert found is not None and found.answer == str(2 * i + 1)
    assert _CountingList.scans == 0
    # the longest contained question wins; a question glued to its neighbour is still found, by the slow way
    assert key.find("Q: What is 7 plus 8 in all, counting carefully? go").answer == "15"
    assert key.find("Q:What is 7 plus 8").answer == "short" and _CountingList.scans == 1
    assert key.find("nothing like it") is None


def test_serve_sim_takes_data_for_each_task(tmp_path: Path) -> None:
    from qualeval.sim import SimConfig, SimServer

    arc = DATA / "lmeval" / "arc"
    planets = _task(tmp_path, "planets")
    config = SimConfig(
        port=0,
        tasks=("knowledge_qa", f"lm_eval:{arc / 'arc_easy.yaml'}", str(planets)),
        task_data={"arc_easy": arc / "test.jsonl"},
    )
    server = SimServer(config)
    asked = build_samples(load_task(f"lm_eval:{arc / 'arc_easy.yaml'}"), data=arc / "test.jsonl")[0]
    assert server.key is not None and server.key.find(asked.messages[-1].content).answer == "B"
