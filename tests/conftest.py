"""Shared fixtures: the reference server on 127.0.0.1, in a thread or in its own process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualeval.records import ClientConfig
from qualeval.sim import Behaviour, Latency, SimConfig, running_server, server_process
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatRequest, ChatResponse, Message

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
"""The test suite's own data files (cases, fixtures)."""
SHARED = ROOT.parent / "shared" / "data"
GSM8K = SHARED / "gsm8k" / "test.jsonl"
needs_gsm8k = pytest.mark.skipif(not GSM8K.exists(), reason="../shared/data/gsm8k missing")
"""For a test that reads GSM8K from ../shared/data: a clone without it skips, as the README says."""


def fast_sim(flavour: str = "vllm", **kw: Any) -> SimConfig:
    """A reference server with no delays, port chosen by the OS."""
    behaviour = kw.pop("behaviour", Behaviour(reasoning_tokens=40))
    latency = kw.pop("latency", Latency(burst=True))
    return SimConfig(flavour=flavour, port=0, behaviour=behaviour, latency=latency, **kw)


@contextlib.contextmanager
def sim_url(config: SimConfig) -> Iterator[str]:
    with running_server(config) as url:
        yield url


def ask(text: str, **kw: Any) -> ChatRequest:
    return ChatRequest(model="sim", messages=(Message(role="user", content=text),), **kw)


def chat(url: str, request: ChatRequest, headers: dict[str, str] | None = None, **cfg: Any) -> ChatResponse:
    config = ClientConfig(base_url=url, api_key=None, headers=headers or {}, backoff_base=0.01, **cfg)

    async def go() -> ChatResponse:
        async with ChatClient(config) as client:
            return await client.chat(request)

    return asyncio.run(go())


def sim_process(*args: str) -> contextlib.AbstractContextManager[str]:
    """`qualeval serve-sim` in its own process (no shared GIL), yielding its base URL."""
    return server_process(*args)


def chromium_dom(chromium: str, page: Path, profile: Path) -> str:
    """The page's DOM after its scripts ran, from Debian's headless Chromium."""
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--dump-dom",
    ]
    return subprocess.run([chromium, *flags, page.as_uri()], capture_output=True, text=True, timeout=90).stdout


@pytest.fixture(scope="session")
def gsm8k_rows() -> list[dict[str, str]]:
    import json

    if not GSM8K.exists():
        pytest.skip(f"{GSM8K} not present")
    with GSM8K.open() as handle:
        return [json.loads(line) for line in handle]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for `-n auto`: one more than the cores, since tests mostly wait."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The llama-server tests share session-scoped servers: one worker runs them all, so each starts once."""
    for item in items:
        if item.get_closest_marker("real_server"):
            item.add_marker(pytest.mark.xdist_group("real_server"))


def in_ci() -> bool:
    """`CI` set, and not to 0, false or no: as CI services set it, and as `.ci/run` exports it."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def _failed_under_ci(report: pytest.TestReport | pytest.CollectReport, what: str) -> None:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
    report.outcome = "failed"
    report.longrepr = f"{what} was skipped under CI: {str(reason).removeprefix('Skipped: ')}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI (`CI` set) a skipped test is a failure that says why it skipped: CI cannot pass without running
    a test, whatever it lacked (../shared data, an optional extra, a tool, a Slurm cluster, llama-server).
    Elsewhere such a test skips with that one line."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and not hasattr(report, "wasxfail"):
        _failed_under_ci(report, "this test")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """The same for a whole module skipped while it is collected (a module-level skip or importorskip)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci():
        _failed_under_ci(report, collector.nodeid or "a module")
