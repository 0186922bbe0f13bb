"""The reference server in a process of its own: no shared interpreter, so its timing is its own."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

__all__ = ["server_process"]


@contextlib.contextmanager
def server_process(*args: str) -> Iterator[str]:
    """Run `qualeval serve-sim --port 0 ARGS...` and yield its base URL (…/v1) once it listens."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "qualeval", "serve-sim", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = ""
        for _ in range(5):  # a banner line, then the address
            line = proc.stdout.readline()
            if line.startswith("listening on "):
                url = line.split()[-1]
                break
        if not url:
            proc.kill()
            message = proc.stderr.read().strip() if proc.stderr else ""
            raise RuntimeError(f"the reference server did not start: {message}")
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=5)  # also closes the pipes
