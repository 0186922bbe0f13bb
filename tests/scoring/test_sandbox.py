"""HumanEval's code scoring: the canonical solutions pass, hostile programs are contained, code comes from the
answer only, a model's code runs only where the user allowed it (a run, `score`, `rescore`), and pass@k is
unbiased."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

import qualeval
from qualeval.errors import InputError
from qualeval.figures.accuracy import Repeat, pass_at_k, repeated
from qualeval.reasoning.completion import Completion
from qualeval.records import ClientConfig
from qualeval.run.pipeline import run_one
from qualeval.scoring.code import answer_code
from qualeval.scoring.sandbox import Limits, isolation, run_python
from qualeval.scoring.verdict import decide
from qualeval.sim import Behaviour
from qualeval.tasks import build_samples, load_task
from qualeval.tasks.sample import Sample
from qualeval.wire.client import ChatClient
from tests.conftest import SHARED, fast_sim, sim_url

HUMANEVAL = SHARED / "humaneval" / "HumanEval.jsonl"
needs_data = pytest.mark.skipif(not HUMANEVAL.exists(), reason="shared HumanEval missing")
isolated = pytest.mark.skipif(isolation() != "namespaces", reason="network and file-system isolation need root")
QUICK = Limits(timeout=2, memory_mb=256)


@needs_data
def test_all_164_canonical_solutions_pass() -> None:
    task = load_task("humaneval")
    samples = build_samples(task, data=HUMANEVAL)
    assert len(samples) == 164
    failed = [
        s.id
        for s in samples
        if not decide(task, s, Completion(content=f"```python\n{s.gold}\n```"), allow_code=True).score.correct
    ]
    assert failed == []


@needs_data
def test_code_is_read_from_the_answer_never_the_reasoning() -> None:
    task = load_task("humaneval")
    sample = build_samples(task, data=HUMANEVAL, limit=1)[0]
    right = f"```python\n{sample.gold}\n```"
    verdict = decide(task, sample, Completion(reasoning=right, content="I could not finish."), allow_code=True)
    assert not verdict.score.correct
    wrong = "```python\nraise SystemExit(1)\n```"
    verdict = decide(task, sample, Completion(reasoning=wrong, content=right), allow_code=True)
    assert verdict.score.correct and verdict.extraction.rung == "code"
    # a body that continues the prompt, unfenced, is a program too
    body = sample.gold[len(sample.meta["prompt"]) :]
    assert decide(task, sample, Completion(content=body), allow_code=True).score.correct


def test_code_execution_is_refused_without_permission() -> None:
    task = load_task("humaneval")
    sample = task_sample()
    answer = Completion(content="```python\ndef f():\n    return 1\n```")
    with pytest.raises(InputError, match="--allow-code-execution"):
        decide(task, sample, answer)  # refused by default: the permission is never assumed
    with pytest.raises(InputError, match="--allow-code-execution"):
        decide(task, sample, answer, allow_code=False)
    assert decide(task, sample, answer, allow_code=True).score.correct
    with pytest.raises(InputError, match="--allow-code-execution"):
        decide(task, sample, answer)  # the call that allowed it left nothing behind


def task_sample() -> Sample:
    return Sample(
        id="humaneval/test/x",
        task="humaneval",
        messages=(),
        gold="def f():\n    return 1\n",
        meta={
            "entry_point": "f",
            "prompt": 'def f():\n    """One."""\n',
            "test": "def check(c):\n    assert c() == 1\n",
        },
    )


def cli(*args: str) -> tuple[int, str]:
    """A qualeval command in process: exit code and everything it printed."""
    from typer.testing import CliRunner

    from qualeval.cli import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


@needs_data
def test_score_runs_the_answers_code_only_with_the_flag(tmp_path: Path) -> None:
    first, second = (json.loads(line) for line in HUMANEVAL.read_text().splitlines()[:2])
    right = f"```python\n{first['prompt']}{first['canonical_solution']}```"
    wrong = f"```python\ndef {second['entry_point']}(*args):\n    return None\n```"
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps({"id": str(i), "content": c}) + "\n" for i, c in enumerate((right, wrong))))
    flags = ("score", "--task", "humaneval", "--responses", str(responses), "--data", str(HUMANEVAL))
    code, out = cli(*flags, "--out", str(tmp_path / "refused"))
    assert code == 2 and "--allow-code-execution" in out and "Traceback" not in out
    assert not (tmp_path / "refused" / "items.jsonl").exists()
    code, out = cli(*flags, "--out", str(tmp_path / "scored"), "--allow-code-execution")
    assert code == 0, out
    items = [json.loads(line) for line in (tmp_path / "scored" / "items.jsonl").read_text().splitlines()]
    assert [(i["method"], i["correct"]) for i in items] == [("code", True), ("code", False)]


@needs_data
def test_a_run_and_its_rescore_each_need_their_own_permission(tmp_path: Path) -> None:
    right = Behaviour(accuracy=1.0, reasoning_tokens=30, trap_rate=0.0)
    options: dict[str, Any] = {"data": {"humaneval": str(HUMANEVAL)}, "limit": 2, "probe": False, "warmup": 0}
    with sim_url(fast_sim(tasks=("humaneval",), task_data=HUMANEVAL, behaviour=right)) as url:
        with pytest.raises(InputError, match="--allow-code-execution"):
            qualeval.evaluate("sim", ["humaneval"], base_url=url, out=tmp_path / "refused", **options)
        assert not (tmp_path / "refused" / "records.jsonl").exists()  # refused before any request
        with pytest.raises(InputError, match="--allow-code-execution"):
            asyncio.run(_unallowed_samples(url))
        run = qualeval.evaluate(
            "sim", ["humaneval"], base_url=url, out=tmp_path / "run", allow_code_execution=True, **options
        )
    assert len(run.records) == 2 and all(r.score.correct and r.extraction.rung == "code" for r in run.records)
    code, out = cli("rescore", str(run.root))  # the run was allowed; this rescore was not
    assert code == 2 and "--allow-code-execution" in out and "Traceback" not in out
    assert not (run.root / "rescore").exists()  # refused before anything is written: no partial rescore
    code, out = cli("rescore", str(run.root), "--allow-code-execution")
    assert code == 0, out
    rows = [json.loads(line) for line in (run.root / "rescore" / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["score"]["correct"] and r["extraction"]["rung"] == "code" for r in rows)


async def _unallowed_samples(url: str) -> None:
    """The live pipeline on its own, without the run's checks in front of it: it does not assume permission."""
    task = load_task("humaneval")
    samples = build_samples(task, data=HUMANEVAL, limit=1)
    async with ChatClient(ClientConfig(base_url=url, api_key=None, max_retries=0)) as client:
        await run_one(client, task, samples[0], model="sim", mode="off", style=None)


def test_the_fenced_block_that_defines_the_function_wins() -> None:
    content = (
        "Example:\n```\nprint(1)\n```\nThen:\n```python\ndef g():\n    pass\n```\n"
        "```python\ndef f(x):\n    return x\n```"
    )
    assert answer_code(content, "f") == "def f(x):\n    return x\n"
    assert answer_code("```python\ndef f(x):\n    return x", "f") == "def f(x):\n    return x"  # cut off
    assert answer_code("", "f") is None


def test_an_infinite_loop_ends_at_the_limit() -> None:
    assert run_python("while True:\n    pass\n", QUICK).status == "timeout"


def test_a_fork_bomb_is_contained_and_leaves_nothing_running() -> None:
    marker = f"qv-bomb-{uuid.uuid4().hex}"
    bomb = f"import os\n# {marker}\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    assert run_python(bomb, QUICK).status == "timeout"
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, marker)]
    assert left == []
    assert run_python("print('next')", QUICK).status == "passed"  # and the run goes on


def _cmdline_has(proc: Path, marker: str) -> bool:
    try:
        return marker in (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def test_a_memory_hog_fails_without_taking_the_machine() -> None:
    run = run_python("block = bytearray(2 * 1024 ** 3)\nprint('allocated')\n", QUICK)
    assert run.status == "failed" and "MemoryError" in run.output and "allocated" not in run.output


def test_the_environment_holds_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-do-not-leak")
    run = run_python("import os\nprint(dict(os.environ))\nprint(os.listdir('.'))\n", QUICK)
    assert run.status == "passed" and "sk-canary" not in run.output and "OPENAI_API_KEY" not in run.output
    assert run.output.strip().endswith("[]")  # an empty working directory


@isolated
def test_a_write_outside_its_directory_does_not_land(tmp_path: Path) -> None:
    outside = tmp_path / "escaped.txt"
    shared_tmp = Path("/tmp") / f"qv-escape-{uuid.uuid4().hex}"
    program = (
        f"for target in ({str(outside)!r}, {str(shared_tmp)!r}, '/root/qv-escape.txt'):\n"
        "    try:\n        open(target, 'w').write('escaped')\n        print('wrote', target)\n"
        "    except OSError as exc:\n        print('refused', target, exc.errno)\n"
    )
    run = run_python(program, QUICK)
    assert run.status == "passed", run.output
    assert not outside.exists() and not shared_tmp.exists() and not Path("/root/qv-escape.txt").exists()


@isolated
def test_a_network_call_reaches_nothing() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(3)
    port = listener.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(listener.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    program = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('CONNECTED')\n"
    run = run_python(program, QUICK)
    thread.join()
    listener.close()
    assert run.status == "failed" and "CONNECTED" not in run.output and accepted == []


def test_unbiased_pass_at_k() -> None:
    assert pass_at_k(10, 0, 1) == 0.0 and pass_at_k(10, 10, 5) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2)
    tries = [Repeat("a", c, str(i)) for i, c in enumerate([True, False, False, False])]
    tries += [Repeat("b", False, str(i)) for i in range(4)]
    result = repeated(tries, 4)
    assert result.pass_at == {1: pytest.approx(0.125), 2: pytest.approx(0.25), 4: pytest.approx(0.5)}
    assert os.environ.get("OPENAI_API_KEY") != "sk-canary-do-not-leak"
