"""A rescore's summary opens with the notes the live run's did: the probe's broken tool_choice contracts for the
tool tasks that ask for them, and the reference server's missing answer key."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from qualeval.errors import QualevalWarning
from qualeval.records import RunConfig
from qualeval.run import driver
from qualeval.run.checks import KEYLESS, run_notes
from qualeval.run.probetools import PROBE_TOOL
from qualeval.run.rescoring import rescore
from qualeval.wire import ChatRequest
from tests.run.test_probe_tools import _fake_endpoint


def test_a_rescore_keeps_the_broken_tool_choice_note_of_the_live_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sent: list[ChatRequest] = []
    _fake_endpoint(monkeypatch, sent)  # a server that ignores tool_choice
    plain = driver.load_run_tasks

    def tooled(config: RunConfig) -> list[tuple[Any, list[Any]]]:
        offered = {"tools": (PROBE_TOOL,), "tool_choice": "required"}
        return [(task, [s.model_copy(update=offered) for s in samples]) for task, samples in plain(config)]

    monkeypatch.setattr(driver, "load_run_tasks", tooled)
    out = tmp_path / "run"
    config = RunConfig(base_url="http://127.0.0.1:9/v1", model="m", tasks=["knowledge_qa"], out=out, limit=2)
    with pytest.warns(QualevalWarning):
        live = asyncio.run(driver.execute(config))
    said = [n for n in live.notes if "tool_choice required is broken" in n]
    assert len(said) == 1
    sent.clear()
    again, _ = rescore(out)
    assert again.notes == live.notes and not sent  # the same words, and no request


def test_the_notes_name_the_missing_answer_key_only_where_something_is_scored() -> None:
    models = {"object": "list", "data": [{"id": "m", "owned_by": "qualeval-simulated", "answer_key": False}]}
    assert run_notes(models, None, {}, scored=True) == [KEYLESS]
    assert run_notes(models, None, {}, scored=False) == []
