"""The Python API: pinned public names, options that agree across the CLI, config files and `evaluate`, and
`evaluate` from inside a running event loop (Jupyter)."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest
import yaml

import qualeval
from qualeval.errors import InputError
from qualeval.run.config import RunConfig
from qualeval.run.options import load_config
from qualeval.sim import Behaviour, Latency, SimConfig, running_server

PUBLIC = {
    "ChatClient",
    "ChatRequest",
    "ChatResponse",
    "ClientConfig",
    "Completion",
    "Message",
    "Record",
    "RunConfig",
    "RunResult",
    "Sample",
    "Timing",
    "Usage",
    "__version__",
    "evaluate",
    "evaluate_async",
    "load_task",
    "open_run",
    "score_file",
}


def test_the_public_api_is_pinned() -> None:
    assert set(qualeval.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(qualeval, name) is not None


def test_every_run_option_is_a_flag_a_config_key_and_an_evaluate_keyword(tmp_path: Path) -> None:
    from typer.main import get_command

    from qualeval.cli import app

    run = get_command(app).commands["run"]  # type: ignore[attr-defined]
    flags = {p.name for p in run.params} - {"config", "help"}
    options = set(RunConfig.model_fields)
    assert flags == options
    keywords = set(inspect.signature(qualeval.evaluate).parameters) - {"config", "progress", "on_record"}
    assert keywords == options
    profile = tmp_path / "p.yaml"  # every option is also a key of a profile file
    profile.write_text(yaml.safe_dump({name: None for name in options}))
    with pytest.raises(InputError) as err:  # values are checked, but no key is unknown
        load_config(profile, {})
    assert "unknown option" not in str(err.value)


def test_flags_take_the_forms_people_type() -> None:
    config = load_config(
        None,
        {
            "tasks": ["gsm8k,mmlu:stem", "knowledge_qa"],
            "model": "m",
            "base_url": "http://127.0.0.1:1/v1",
            "out": "o",
            "data": ["gsm8k=/d/gsm8k", "/d/all"],
            "slo": ["ttft_ms=500,tpot_ms=50"],
            "concurrency": ["1,4", "16"],
        },
    )
    assert config.tasks == ["gsm8k", "mmlu:stem", "knowledge_qa"] and config.concurrency == [1, 4, 16]
    assert config.data == {"gsm8k": Path("/d/gsm8k"), "*": Path("/d/all")} and config.slo["tpot_ms"] == 50
    base = {"tasks": "gsm8k", "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": "o"}
    assert load_config(None, {**base, "data": "/d"}).data == {"*": Path("/d")}
    with pytest.raises(InputError, match=r"--temperature: .*between 0 and 2"):
        load_config(None, {**base, "temperature": -1})
    with pytest.raises(InputError, match="unknown reasoning format 'nope'"):
        load_config(None, {**base, "reasoning_format": "nope"})
    assert "api_key" not in load_config(None, {**base, "api_key": "sk-canary"}).model_dump(mode="json")


def test_evaluate_works_inside_a_running_event_loop_and_reads_back(tmp_path: Path) -> None:
    sim = SimConfig(
        port=0, tasks=("word_problems",), behaviour=Behaviour(reasoning_tokens=10), latency=Latency(burst=True)
    )
    seen: list[str] = []
    with running_server(sim) as url:

        async def notebook_cell() -> qualeval.RunResult:  # as in Jupyter: a loop is already running
            return qualeval.evaluate(
                "sim",
                "word_problems",
                base_url=url,
                out=tmp_path / "run",
                limit=5,
                on_record=lambda r: seen.append(r.sample_id),
            )

        result = asyncio.run(notebook_cell())
        assert len(seen) == 5 and result.summary.tasks["word_problems"].summary.n == 5
        again = asyncio.run(
            qualeval.evaluate_async("sim", ["word_problems"], base_url=url, out=tmp_path / "run", limit=5)
        )  # resumed: nothing left to send
        assert again.summary.records == 5
    opened = qualeval.open_run(tmp_path / "run")
    assert opened.summary.tasks["word_problems"].summary.n == 5 and len(opened.records) == 5
    frame = opened.to_pandas()
    assert {"prompt", "content", "reasoning", "subject"} <= set(frame.columns)
    assert frame["prompt"].str.len().min() > 0
    with pytest.raises(InputError, match=r"no summary\.json here"):
        qualeval.open_run(tmp_path)
    with pytest.raises(InputError, match="unknown option 'concurency'"):
        qualeval.evaluate("sim", "word_problems", base_url=url, out=tmp_path / "x", concurency=4)
