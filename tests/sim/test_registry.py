"""The flavour table: a new flavour is one entry in it, and nothing else in the reference server names one."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest

from qualeval.errors import InputError
from qualeval.sim import FLAVOURS, Flavour, Latency, SimConfig, SimServer, running_server
from qualeval.sim.flavours import sglang, table, vllm
from qualeval.sim.flavours.common import response_format
from tests.conftest import ROOT, ask, chat, fast_sim

SIM = ROOT / "qualeval" / "sim"
NEW = "sglang-on-vllm-0.10"


@pytest.fixture(scope="module")
def flavours() -> Mapping[str, Flavour]:
    """The shipped table and one more entry, made of pieces the shipped flavours already have: vLLM 0.10's wire
    format behind SGLang's parameters, response ids and metric names."""
    entry = Flavour(
        NEW,
        "vLLM 0.10's wire format with SGLang's parameters, ids and metrics",
        *vllm.wire("0.10"),
        constraints=(response_format, sglang.regex),
        response_id=sglang.response_id,
        metrics=sglang.METRICS,
    )
    return table(*FLAVOURS.values(), entry)


@pytest.fixture(scope="module")
def url(flavours: Mapping[str, Flavour]) -> Iterator[str]:
    with running_server(fast_sim(NEW), flavours) as base:
        yield base


def test_a_new_flavour_is_one_table_entry(url: str) -> None:
    resp = chat(url, ask("What is 2+2?", stream=True))
    assert resp.error is None and resp.completion.status == "ok"
    assert set(resp.raw_reasoning) == {"reasoning_content"}  # vLLM 0.10's field
    assert resp.completion.reasoning and resp.completion.content
    whole = httpx.post(f"{url}/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}).json()
    assert len(whole["id"]) == 32 and not whole["id"].startswith("chatcmpl-")  # SGLang's bare hex id
    assert "stop_reason" in whole["choices"][0]  # vLLM's body


def test_the_new_entry_reads_its_own_parameters(url: str) -> None:
    body = {"messages": [{"role": "user", "content": "Pick a digit."}], "regex": "[0-9]"}
    answer = httpx.post(f"{url}/chat/completions", json=body).json()["choices"][0]["message"]["content"].strip()
    assert len(answer) == 1 and answer.isdigit()  # SGLang's `regex`, which no vLLM flavour reads


def test_the_new_entry_serves_its_own_extras(url: str) -> None:
    root = url.removesuffix("/v1")
    assert "sglang:num_running_reqs" in httpx.get(f"{root}/metrics").text
    models = httpx.get(f"{url}/models").json()["data"]
    assert [m["flavour"] for m in models] == [NEW]


def test_the_shipped_table_is_untouched_and_read_only(flavours: Mapping[str, Flavour]) -> None:
    assert NEW in flavours and NEW not in FLAVOURS
    assert set(flavours) - {NEW} == set(FLAVOURS)
    with pytest.raises(TypeError):
        FLAVOURS[NEW] = flavours[NEW]  # type: ignore[index]
    with pytest.raises(InputError, match=f"unknown flavour '{NEW}'"):
        SimServer(fast_sim(NEW))  # the shipped table does not know it


def test_no_module_but_the_table_names_a_flavour() -> None:
    """Flavour names are keys of FLAVOURS: anything that needs one reads the table (SimConfig's default aside)."""
    allowed = {
        SIM / "flavours" / "__init__.py": set(FLAVOURS),
        SIM / "config.py": {"vllm"},
        SIM / "flavours" / "unparsed.py": {"harmony"},  # gpt-oss's writing style, which that flavour is named for
        SIM / "toolwrite.py": {"harmony"},  # gpt-oss's tool-call markup, named as vLLM's parser names it
    }
    found = {}
    for path in sorted(SIM.rglob("*.py")):
        names = {
            node.value
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in FLAVOURS
        }
        if names - allowed.get(path, set()):
            found[str(path.relative_to(SIM))] = sorted(names)
    assert not found, json.dumps(found)


def test_routes_and_model_names_are_the_servers_own() -> None:
    """vLLM answers only under /v1 and refuses a model it does not serve; llama-server answers both paths and any
    model name with the model it loaded."""
    with running_server(SimConfig(port=0, latency=Latency(burst=True))) as url:
        root = url.removesuffix("/v1")
        body = {"model": "sim", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{url}/chat/completions", json=body).status_code == 200
        assert httpx.post(f"{root}/chat/completions", json=body).status_code == 404
        assert httpx.get(f"{root}/models").status_code == 404
        wrong = httpx.post(f"{url}/chat/completions", json={**body, "model": "Qwen/Qwen3-8B"})
        assert wrong.status_code == 404 and "Qwen/Qwen3-8B" in wrong.text
    with running_server(SimConfig(flavour="llamacpp", port=0, latency=Latency(burst=True))) as url:
        root = url.removesuffix("/v1")
        assert httpx.post(f"{root}/chat/completions", json={**body, "model": "anything"}).status_code == 200


def test_a_server_without_an_answer_key_says_so_and_so_does_the_report(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app

    with running_server(SimConfig(port=0, latency=Latency(burst=True))) as url:
        models = httpx.get(f"{url}/models").json()["data"]
        assert models[0]["answer_key"] is False
        done = CliRunner().invoke(app, ["run", "--base-url", url, "--model", "sim", "--task", "word_problems",
                                        "--limit", "2", "--no-probe", "--out", str(tmp_path / "run")])  # fmt: skip
    assert done.exit_code == 3, done.stderr  # no answer of the model's at all: not a run that worked
    assert "no answer key" in " ".join(done.stderr.split()) and "no item was answered by the model" in done.stderr
    assert "no answer key" in (tmp_path / "run" / "report.md").read_text()
    assert "no answer key" in (tmp_path / "run" / "report.html").read_text()
    with running_server(SimConfig(port=0, tasks=("word_problems",), latency=Latency(burst=True))) as url:
        assert httpx.get(f"{url}/models").json()["data"][0]["answer_key"] is True
