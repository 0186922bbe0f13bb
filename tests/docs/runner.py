"""Running a page's blocks under the docs' convention: one working directory per page, its `file:` blocks written,
its run blocks' commands run in order with the venv's `qualeval`, its `serve-sim ... &` servers started on free
ports and always stopped."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.docs.blocks import Block, Command, ConventionError, rewrite_serve_port, rewrite_urls

ROOT = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT = 600.0
"""Seconds one command may take: generous, for a busy shared machine; a guard against a hang, not a measurement."""
SERVER_START_TIMEOUT = 120.0
CLONE_DIRS = ("configs", "examples", "parsers", "tasks")
"""The clone's directories the docs read by relative path (the ones the wheel ships), copied so no command can
write into the repository."""


class DocCommandFailed(AssertionError):
    """A command of a page did not exit as the page says it does."""


@dataclass
class Page:
    name: str
    workdir: Path
    logs: Path
    ports: dict[int, int] = field(default_factory=dict)
    """The port a page's text shows for each of its servers -> the free port it really listens on."""


def prepare(tmp: Path) -> tuple[Path, Path]:
    """A fresh working directory laid out like a clone's root (its data directories, `../shared` beside it)."""
    workdir, logs = tmp / "clone", tmp / "logs"
    workdir.mkdir(parents=True)
    logs.mkdir(parents=True)
    for name in CLONE_DIRS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, workdir / name)
    if (ROOT.parent / "shared").exists():
        (tmp / "shared").symlink_to((ROOT.parent / "shared").resolve())
    return workdir, logs


def environment() -> dict[str, str]:
    """The venv's `qualeval` first on PATH, importing this checkout's package."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), env.get("PYTHONPATH", "")] if p)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _stop(proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """End a command's whole process group (bash and anything it left running), SIGKILL if SIGTERM is not enough."""
    with contextlib.suppress(ProcessLookupError):  # the group is already gone
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _wait_listening(proc: subprocess.Popen[bytes], port: int, log: Path, where: str) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise DocCommandFailed(f"{where}\nthe server exited with {proc.returncode}:\n{tail(log.read_text())}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=5).status_code == 200:
                return
        time.sleep(0.2)
    raise DocCommandFailed(f"{where}\nthe server did not answer /v1/models in {SERVER_START_TIMEOUT:.0f} s")


@contextlib.contextmanager
def _server(page: Page, command: Command) -> Iterator[None]:
    port = free_port()
    log = page.logs / f"serve-{command.line}.log"
    text = rewrite_serve_port(command.text, port)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["bash", "-c", text],
            cwd=page.workdir,
            env=environment(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_listening(proc, port, log, f"{page.name}:{command.line}: {command.text}")
        assert command.doc_port is not None  # lint_page refuses a server line without --port
        page.ports[command.doc_port] = port
        yield
    finally:
        _stop(proc)


def _run(page: Page, command: Command, expected: int) -> None:
    where = f"{page.name}:{command.line}: {command.text}"
    try:
        text = rewrite_urls(command.text, page.ports)
    except ConventionError as refused:
        raise DocCommandFailed(f"{where}\n{refused}") from None
    proc = subprocess.Popen(
        ["bash", "-c", text],
        cwd=page.workdir,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        _stop(proc)
        proc.communicate()  # closes the pipes
        raise DocCommandFailed(f"{where}\ndid not finish in {COMMAND_TIMEOUT:.0f} s") from None
    finally:
        _stop(proc)
    if proc.returncode != expected:
        raise DocCommandFailed(f"{where}\nexited {proc.returncode}, expected {expected}; stderr:\n{tail(stderr)}")


def _write(page: Page, block: Block) -> None:
    target = (page.workdir / block.value).resolve()
    if not target.is_relative_to(page.workdir.resolve()):
        raise DocCommandFailed(f"{page.name}:{block.line}: `file: {block.value}` leaves the page's directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(block.text)


def run_page(name: str, blocks: list[Block], tmp: Path) -> int:
    """Run a page's blocks in order; raise DocCommandFailed at the first command that does not exit as shown.
    Returns how many commands ran."""
    workdir, logs = prepare(tmp)
    page = Page(name, workdir, logs)
    ran = 0
    with contextlib.ExitStack() as servers:
        for block in blocks:
            if block.kind == "file":
                _write(page, block)
            if block.kind != "run":
                continue
            commands = block.commands()
            for index, command in enumerate(commands):
                if command.serves and command.background:
                    servers.enter_context(_server(page, command))
                else:
                    last = index == len(commands) - 1
                    _run(page, command, block.exit_status if last else 0)
                ran += 1
    return ran
