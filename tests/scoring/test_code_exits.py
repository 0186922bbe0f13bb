"""A HumanEval pass needs proof that the item's tests ran to their end: an exit with status 0 before them (at
module level or from the function) fails with its reason, whatever the exit status says."""

from __future__ import annotations

import pytest

from qualeval.records import ScorerSpec
from qualeval.scoring import sandbox
from qualeval.scoring.code import score_code
from qualeval.scoring.sandbox import Limits, run_python
from qualeval.tasks.sample import Sample

QUICK = Limits(timeout=5, memory_mb=256)
SPEC = ScorerSpec(kind="code", timeout=5, memory_mb=256)
SAMPLE = Sample(
    id="humaneval/test/x",
    task="humaneval",
    messages=(),
    gold="def f():\n    return 1\n",
    meta={"entry_point": "f", "prompt": 'def f():\n    """One."""\n', "test": "def check(c):\n    assert c() == 1\n"},
)
WRONG = "import os, sys\n\ndef f():\n    return None\n"
RIGHT = "import os, sys\n\ndef f():\n    return 1\n"


@pytest.mark.parametrize(
    "code",
    [
        WRONG + "sys.exit(0)\n",
        WRONG + "os._exit(0)\n",
        WRONG + "raise SystemExit\n",
        "def f():\n    raise SystemExit(0)\n",
        "import sys\n\ndef f():\n    sys.exit()\n",
        WRONG + "import sys\nprint(sys.stdin.read())\nsys.exit(0)\n",  # echoes what it can read of the token
        WRONG + "import sys\nsys.stdout.flush()\nos.close(1)\nsys.exit(0)\n",
    ],
)
def test_an_exit_before_the_tests_ran_is_a_failure_with_its_reason(code: str) -> None:
    score = score_code(code, SAMPLE, SPEC, allow_code=True)
    assert not score.correct
    assert "exited before its tests ran" in (score.detail or "")


@pytest.mark.parametrize(
    "code",
    [
        RIGHT,
        RIGHT + "sys.stdout = open(os.devnull, 'w')\n",
        RIGHT + "sys.stdout.close()\nos.close(1)\n",
        RIGHT + "os.dup2(os.open(os.devnull, os.O_WRONLY), 1)\n",
        RIGHT + "print('x' * 100_000)\n",
    ],
)
def test_a_right_answer_passes_whatever_it_does_to_stdout(code: str) -> None:
    score = score_code(code, SAMPLE, SPEC, allow_code=True)
    assert score.correct, score.detail


def test_a_wrong_answer_that_finishes_still_fails_on_its_assertion() -> None:
    score = score_code(WRONG, SAMPLE, SPEC, allow_code=True)
    assert not score.correct and "AssertionError" in (score.detail or "")


def test_without_namespaces_the_token_proves_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "isolation", lambda: "limits")
    assert run_python("import sys\nprint(sys.stdin.readline().strip())\n", QUICK).proved
    assert not run_python("print('done')\n", QUICK).proved
    assert not score_code(WRONG + "sys.exit(0)\n", SAMPLE, SPEC, allow_code=True).correct
    assert score_code(RIGHT, SAMPLE, SPEC, allow_code=True).correct


def test_the_token_is_only_on_stdin_and_new_each_run() -> None:
    echo = "import sys\nline = sys.stdin.readline().strip()\nprint(line)\n"
    assert run_python(echo, QUICK).proved
    assert not run_python("print('done')\n", QUICK).proved
    # a program that reports everything it was given but stdin knows nothing to prove with
    spy = "import os, sys\nprint(sys.argv, dict(os.environ), open(__file__).read())\n"
    assert not run_python(spy, QUICK).proved
