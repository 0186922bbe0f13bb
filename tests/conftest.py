"""Shared fixtures: the reference server on 127.0.0.1, in a thread or in its own process."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualeval.client import ChatClient, ClientConfig
from qualeval.models import ChatRequest, ChatResponse, Message
from qualeval.sim import Behaviour, Latency, SimConfig, running_server

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
GSM8K = SHARED / "gsm8k" / "test.jsonl"


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


@contextlib.contextmanager
def sim_process(*args: str) -> Iterator[str]:
    """`qualeval serve-sim` in its own process (no shared GIL), yielding its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "qualeval", "serve-sim", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = ""
        for _ in range(5):
            line = proc.stdout.readline()
            if line.startswith("listening on "):
                url = line.split()[-1]
                break
        if not url:
            proc.kill()
            raise RuntimeError(f"reference server did not start: {proc.stderr.read() if proc.stderr else ''}")
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=5)  # also closes the pipes


@pytest.fixture(scope="session")
def gsm8k_rows() -> list[dict[str, str]]:
    import json

    if not GSM8K.exists():
        pytest.skip(f"{GSM8K} not present")
    with GSM8K.open() as handle:
        return [json.loads(line) for line in handle]
