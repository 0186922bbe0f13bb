"""Code scoring (HumanEval): the program in the answer, run against the item's tests, in the sandbox.

The code comes from the answer content only, never the reasoning: the first fenced block that defines the
entry point (else the first Python block, else the first block; an unclosed fence runs to the end), or the
whole content when nothing is fenced. A whole function replaces the prompt's stub (the prompt's imports and
helpers stay); anything else continues the prompt's function body. The model's code runs as a module, not as
`__main__`, so a demo under `if __name__ == "__main__":` is not run as if it were a test. A pass needs the exit
status 0 and the sandbox's per-run token written after `check(entry_point)` returned: a program that exits before
(`sys.exit(0)`, `os._exit(0)`, `raise SystemExit`, at module level or in the function) fails, whatever its status.

Running a model's code is refused unless the caller passes the user's permission (`--allow-code-execution`)
down as `allow_code`: an argument, not process state, so one command's permission never leaks into another's.
"""

from __future__ import annotations

import re

from qualeval.errors import InputError
from qualeval.records import Score, ScorerSpec
from qualeval.scoring.sandbox import Limits, isolation, run_python
from qualeval.tasks import Sample

__all__ = ["REFUSAL", "answer_code", "program", "score_code"]

REFUSAL = (
    "runs the model's code to score it; allow that with --allow-code-execution (each program then runs in its "
    "own process with CPU, memory, file-size and process limits, an empty temporary directory, no inherited "
    "secrets, and no network where the OS allows: see the README)"
)

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def answer_code(content: str, entry_point: str | None) -> str | None:
    """The code an answer gives, or None when it gives nothing."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(content)]
    if not blocks:
        return content if content.strip() else None
    defines = (
        re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", re.MULTILINE) if entry_point else None
    )
    python = [body for lang, body in blocks if lang in ("", "python", "py", "python3")]
    for body in python:
        if defines is not None and defines.search(body):
            return body
    return python[0] if python else blocks[0][1]


def program(prompt: str, code: str, test: str, entry_point: str) -> str:
    """The program that passes when the answer's function passes the item's tests."""
    whole = re.search(rf"^(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", code, re.MULTILINE)
    # a docstring-only stub is a complete function: the answer's definition that follows replaces it
    module = f"{prompt}\n\n{code}" if whole else f"{prompt}{code}"
    checks = f"{test}\n\ncheck({entry_point})\n"
    # the token is read before the answer runs (it may read or close stdin) and written through a copy of the
    # output descriptor (it may close or replace stdout); it lives in a local, never in the source
    return (
        "import os, sys\n"
        "def _qualeval_run():\n"
        "    token = sys.stdin.readline().strip()\n"
        "    proof = os.dup(1)\n"
        "    namespace = {'__name__': 'answer'}\n"
        f"    exec(compile({module!r}, 'answer.py', 'exec'), namespace)\n"
        f"    exec(compile({checks!r}, 'tests.py', 'exec'), namespace)\n"
        "    os.write(proof, ('\\n' + token + '\\n').encode())\n"
        "_qualeval_run()\n"
    )


def score_code(code: str, sample: Sample, scorer: ScorerSpec, *, allow_code: bool = False) -> Score:
    """Run the answer's program against the item's tests. `allow_code`: the user's --allow-code-execution for the
    run, `score` or `rescore` this scoring belongs to (never inherited from anywhere else), so refused by default."""
    if not allow_code:
        raise InputError(f"task {sample.task} {REFUSAL}")
    meta = sample.meta
    test, entry, prompt = meta.get("test"), meta.get("entry_point"), meta.get("prompt")
    if not isinstance(test, str) or not isinstance(entry, str) or not isinstance(prompt, str):
        raise InputError(f"{sample.id}: the code scorer needs meta 'test', 'entry_point' and 'prompt'")
    run = run_python(program(prompt, code, test, entry), Limits(timeout=scorer.timeout, memory_mb=scorer.memory_mb))
    last = next((line for line in reversed(run.output.strip().splitlines()) if line.strip()), "")
    status = run.status
    if status == "passed" and not run.proved:
        status, last = "failed", "the program exited before its tests ran"
    return Score(correct=status == "passed", detail=f"{status} ({isolation()}){': ' + last if last else ''}")
