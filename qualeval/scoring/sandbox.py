"""Run untrusted Python (a model's answer and its tests) in a process of its own, fenced in.

Every program gets: its own process and process group; CPU-time, address-space, file-size, open-file and
process-count limits (setrlimit); a wall-clock timeout after which the whole group is killed; an empty temporary
working directory; an environment of its own (PATH, HOME, LANG and nothing inherited, so no API key or token);
its output written to a file the size limit caps. Its standard input holds one line, a random token made for this
run alone (never in the source, the environment or the arguments): a program proves it ran to its end by writing
that line to its output, so an early exit with status 0 (`sys.exit(0)`, `os._exit(0)`) is told from a finish.

As root where `unshare` works (Linux, this project's machines and CI), it also gets new network, mount and PID
namespaces and runs as a user id of its own:
- no network: the namespace has only a loopback interface, down; no address outside is reachable;
- writes stay inside: the world-writable directories (/tmp, /var/tmp, /dev/shm, /run/lock) are fresh tmpfs
  mounts that vanish with the namespace, and the unprivileged user id can write nowhere else;
- nothing outlives it: the program is the namespace's first process, so killing it ends every process it made,
  whether or not it left the process group; the process limit counts that user id alone.
Elsewhere (not root, no unshare) the limits above still hold but the network and the file system are only what
the current user may reach: run code-scored tasks in a container or as root there. `isolation()` says which.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Literal

__all__ = ["Limits", "Run", "isolation", "run_python"]

_OUTPUT_TAIL = 4000
_STARTUP_S = 2.0
"""Added to the wall-clock limit for starting the interpreter in its namespaces."""


@dataclass(frozen=True, slots=True)
class Limits:
    timeout: float = 10.0
    """Wall-clock seconds; the CPU-time limit, a backstop, is a little more."""
    memory_mb: int = 1024
    file_mb: int = 16
    processes: int = 32
    open_files: int = 64


@dataclass(frozen=True, slots=True)
class Run:
    status: Literal["passed", "failed", "timeout"]
    returncode: int | None
    output: str
    """The last few thousand characters of what the program wrote (stdout and stderr together), the token left out."""
    proved: bool = False
    """The program wrote the token it was given on its standard input: it reached the point that writes it."""


_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}

# Runs as root inside the new namespaces (argv[1]: settings): fresh tmpfs over every world-writable directory,
# an empty working directory, limits, then the program under its own user id. Data in, nothing returned.
_BOOT = r"""
import ctypes, json, os, resource, sys
cfg = json.loads(sys.argv[1])
token, _, source = sys.stdin.buffer.read().partition(b"\n")
libc = ctypes.CDLL(None, use_errno=True)
for place in cfg["tmpfs"]:
    if os.path.isdir(place) and libc.mount(b"tmpfs", place.encode(), b"tmpfs", 0, b"size=64m,mode=1777") != 0:
        sys.exit(f"sandbox: cannot mount tmpfs on {place} (errno {ctypes.get_errno()})")
uid = cfg["uid"]
program = "/tmp/.qualeval-program.py"
with open(program, "wb") as handle:
    handle.write(source)
os.chmod(program, 0o444)
work = "/tmp/work"
os.mkdir(work, 0o700)
os.chown(work, uid, uid)
for name, value in cfg["limits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
os.setgroups([])
os.setgid(uid)
os.setuid(uid)
os.chdir(work)
env = dict(cfg["env"], HOME=work, TMPDIR=work)
feed, end = os.pipe()
os.write(end, token + b"\n")
os.close(end)
os.dup2(feed, 0)
os.close(feed)
os.execve(cfg["python"], [cfg["python"], "-I", program], env)
"""


def _limits(limits: Limits, processes: int) -> dict[str, int]:
    mb = 1024 * 1024
    cpu = int(limits.timeout + 0.999) + 1
    return {
        "RLIMIT_CPU": cpu,
        "RLIMIT_AS": limits.memory_mb * mb,
        "RLIMIT_FSIZE": limits.file_mb * mb,
        "RLIMIT_NPROC": processes,
        "RLIMIT_NOFILE": limits.open_files,
        "RLIMIT_CORE": 0,
    }


def _reachable_by_all(path: str) -> bool:
    """Every directory above the file can be traversed, and the file run, by any user."""
    target = Path(path).resolve()
    if not os.stat(target).st_mode & 0o001:
        return False
    return all(os.stat(parent).st_mode & 0o001 for parent in target.parents)


@cache
def _interpreter() -> str | None:
    """A Python the unprivileged user id can run: this one when its directories allow it (a pyenv under /root
    does not), else the system's."""
    for candidate in (getattr(sys, "_base_executable", sys.executable), "/usr/bin/python3", "/usr/local/bin/python3"):
        if candidate and os.path.exists(candidate) and _reachable_by_all(candidate):
            return candidate
    return None


@cache
def isolation() -> Literal["namespaces", "limits"]:
    """`namespaces` where programs run without network in their own mount and PID namespaces under a user id of
    their own; `limits` where only the resource limits, the clean environment and the empty directory hold."""
    unshare = shutil.which("unshare")
    if sys.platform != "linux" or os.geteuid() != 0 or unshare is None or _interpreter() is None:
        return "limits"
    probe = [unshare, "--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "true"]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return "namespaces" if ok else "limits"


def _own_processes() -> int:
    """Processes of the current user: a process limit in the `limits` mode counts them all."""
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def run_python(source: str, limits: Limits | None = None) -> Run:
    """Run `source` as a Python program under the limits; passed means it exited with status 0 in time, proved
    that it also wrote the token line its standard input gave it."""
    limits = limits or Limits()
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="qualeval-sandbox-") as scratch:
        out_path = Path(scratch) / "output"
        with out_path.open("wb") as out:
            started = time.monotonic()
            proc = _start(source, token, limits, Path(scratch), out)
            try:
                proc.wait(timeout=limits.timeout + _STARTUP_S)
            except subprocess.TimeoutExpired:
                pass
            finally:
                _kill(proc)
            elapsed = time.monotonic() - started
        # the whole file: output the program buffered may land after the token
        written = out_path.read_bytes()
    proved = token.encode() in written
    output = written.replace(token.encode(), b"")[-_OUTPUT_TAIL:].decode("utf-8", "replace")
    code = proc.returncode
    # a program still running at the limit, or ended by its CPU limit (unshare reports the signal as status 1),
    # ran out of time
    if code != 0 and elapsed >= limits.timeout:
        return Run("timeout", code, output, proved)
    return Run("passed" if code == 0 else "failed", code, output, proved)


def _start(source: str, token: str, limits: Limits, scratch: Path, out: IO[bytes]) -> subprocess.Popen[bytes]:
    if isolation() == "namespaces":
        settings = {
            "tmpfs": ["/tmp", "/var/tmp", "/dev/shm", "/run/lock"],
            "uid": 200_000 + secrets.randbelow(800_000),  # a user id of its own: the process limit is its alone
            "limits": _limits(limits, limits.processes),
            "env": _ENV,
            "python": _interpreter(),
        }
        command = [
            str(shutil.which("unshare")),
            "--net",
            "--mount",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
            sys.executable,
            "-I",
            "-c",
            _BOOT,
            json.dumps(settings),
        ]
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_ENV,
            cwd="/",
            start_new_session=True,
        )
        assert proc.stdin is not None
        with proc.stdin:
            proc.stdin.write(f"{token}\n{source}".encode("utf-8", "surrogatepass"))
        return proc
    return _start_fenced(source, token, limits, scratch, out)


def _start_fenced(source: str, token: str, limits: Limits, scratch: Path, out: IO[bytes]) -> subprocess.Popen[bytes]:
    """The `limits` mode: the program under setrlimit in a directory of its own, without namespaces."""
    work = scratch / "work"
    work.mkdir()
    program = scratch / "program.py"
    program.write_text(source, encoding="utf-8", errors="surrogatepass")
    rlimits = _limits(limits, _own_processes() + limits.processes)

    def fence() -> None:
        import resource

        for name, value in rlimits.items():
            resource.setrlimit(getattr(resource, name), (value, value))

    proc = subprocess.Popen(
        [sys.executable, "-I", str(program)],
        stdin=subprocess.PIPE,
        stdout=out,
        stderr=subprocess.STDOUT,
        env={**_ENV, "HOME": str(work), "TMPDIR": str(work)},
        cwd=work,
        start_new_session=True,
        preexec_fn=fence,  # only setrlimit, in the child, before exec
    )
    assert proc.stdin is not None
    # a program that never reads its input may have exited already
    with contextlib.suppress(BrokenPipeError), proc.stdin:
        proc.stdin.write(f"{token}\n".encode())
    return proc


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """End the program's whole process group (and with the namespace's first process, every process in it)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
