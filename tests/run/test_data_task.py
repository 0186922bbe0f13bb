"""--data for a task that carries its own samples: the user's file is read, never passed over for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.records import RunConfig, TaskSpec
from qualeval.run.driver import load_run_tasks

LYON = '{"question": "What is the capital of France?", "answer": "Lyon", "aliases": [], "topic": "capital"}\n'


def _config(tmp_path: Path, data: dict[str, Path]) -> RunConfig:
    return RunConfig(base_url="http://127.0.0.1:9/v1", model="m", tasks=["knowledge_qa"], data=data, out=tmp_path / "r")


def test_a_bundled_task_reads_the_users_file_and_the_manifest_spec_still_loads(tmp_path: Path) -> None:
    data = tmp_path / "mine.jsonl"
    data.write_text(LYON)
    [(task, samples)] = load_run_tasks(_config(tmp_path, {"knowledge_qa": data}))
    assert [s.gold for s in samples] == ["Lyon"]
    assert TaskSpec.model_validate(task.spec.model_dump(mode="json")).samples == ()  # a rescore reads config.data


def test_a_missing_file_is_refused_not_replaced_by_the_bundled_samples(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^--data knowledge_qa=\S*nope.jsonl: no such file or folder$"):
        load_run_tasks(_config(tmp_path, {"knowledge_qa": tmp_path / "nope.jsonl"}))


def _qualeval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=120)


def test_tasks_show_reads_the_file_and_a_generated_task_refuses_data(tmp_path: Path) -> None:
    data = tmp_path / "mine.jsonl"
    data.write_text(LYON)
    assert "gold: Lyon" in _qualeval("tasks", "show", "knowledge_qa", "--data", str(data)).stdout
    refused = _qualeval("tasks", "show", "syllogisms", "--data", str(data))
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        f"error: --data {data}: task syllogisms generates its items (syllogisms) and reads no data"
    )
