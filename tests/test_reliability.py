"""Reliability and security: faults, crashes, bad input, secrets, untrusted model output."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from tests.conftest import GSM8K, ROOT, SHARED, chromium_dom, sim_process

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def qualeval(*args: str, env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qualeval", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1] if path.exists() else []


def test_a_thousand_items_through_every_fault(tmp_path: Path) -> None:
    faults = "429=0.05,500=0.015,503=0.015,drop=0.01,malformed=0.01,stall=0.004"
    with sim_process(
        "--task", "syllogisms", "--burst", "--faults", faults, "--retry-after", "0.01", "--reasoning-tokens", "12"
    ) as url:
        done = qualeval(
            "run",
            "--base-url",
            url,
            "--model",
            "sim",
            "--task",
            "syllogisms",
            "--limit",
            "1000",
            "--concurrency",
            "32",
            "--timeout",
            "2",
            "--max-retries",
            "8",
            "--no-probe",
            "--out",
            str(tmp_path / "run"),
        )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in lines(tmp_path / "run" / "records.jsonl")]
    ids = Counter(r["sample_id"] for r in records)
    assert len(ids) == 1000 and set(ids.values()) == {1}  # exactly one final record per item
    retried = [r for r in records if r["retried"]]
    assert len(retried) >= 60
    for r in retried:  # a retried error is never what got scored
        assert r["status"] != "transport_error" or (r["extraction"]["value"] is None and not r["score"]["correct"])
        if r["status"] == "ok":
            assert r["content"] and r["extraction"]["value"] in ("yes", "no")
    faults = json.loads((tmp_path / "run" / "summary.json").read_text())["tasks"]["syllogisms"]["faults"]
    assert {"429", "500", "503", "connection", "protocol", "timeout"} <= set(faults)
    assert faults["429"] > faults["500"] > 0
    assert "failed attempts by fault" in done.stderr


def started_sending(out: Path, session: int, proc: subprocess.Popen[bytes], deadline_s: float = 180) -> None:
    """Wait until session number `session` (0 = the first) of the run in `out` has written its manifest."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            manifest = json.loads((out / "manifest.json").read_text())
        except (OSError, ValueError):  # not there yet, or being replaced this very moment
            manifest = None
        if manifest is not None and len(manifest.get("resumed", [])) == session:
            return
        time.sleep(0.02)
    assert proc.poll() is not None or time.monotonic() < deadline, "the run never wrote its manifest"


def test_killed_again_and_again_then_resumed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    rng = random.Random(4)
    with sim_process(
        "--task", "syllogisms", "--ttft-ms", "3", "--decode-ms", "0.3", "--reasoning-tokens", "30", "--jitter", "0"
    ) as url:
        command = [
            sys.executable,
            "-m",
            "qualeval",
            "run",
            "--base-url",
            url,
            "--model",
            "sim",
            "--task",
            "syllogisms",
            "--limit",
            "300",
            "--concurrency",
            "8",
            "--no-probe",
            "--out",
            str(out),
        ]
        for session in range(4):
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # kill while it sends, not while Python is still importing (seconds on a busy machine): only once
            # this session has written its manifest, then at a random moment
            started_sending(out, session, proc)
            time.sleep(rng.uniform(0.0, 0.4))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    raw = (out / "records.jsonl").read_bytes()
    assert raw.endswith(b"\n")
    records = [json.loads(line) for line in raw.split(b"\n")[:-1]]  # every line whole: no torn lines remain
    keys = [(r["sample_id"], r["repeat"], r["level"]) for r in records]
    assert len(keys) == 300 and len(set(keys)) == 300
    assert len(json.loads((out / "manifest.json").read_text())["resumed"]) >= 1


CANARY = "sk-qualeval-canary-5d41402abc4b2a76"


def test_the_api_key_is_written_nowhere(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": CANARY}
    with sim_process("--task", "knowledge_qa", "--burst", "--api-key", CANARY) as url:
        done = qualeval(
            "run",
            "--base-url",
            url,
            "--model",
            "sim",
            "--task",
            "knowledge_qa",
            "--limit",
            "20",
            "--out",
            str(tmp_path / "run"),
            env=env,
        )
        assert done.returncode == 0, done.stderr
        rescored = qualeval("rescore", str(tmp_path / "run"), env=env)
        refused = qualeval(
            "run",
            "--base-url",
            url,
            "--model",
            "sim",
            "--task",
            "knowledge_qa",
            "--limit",
            "2",
            "--out",
            str(tmp_path / "refused"),
            env={"OPENAI_API_KEY": CANARY + "-wrong"},
        )
        probed = qualeval("probe", "--base-url", url, "--format", "json", env=env)
    assert refused.returncode == 3 and probed.returncode == 0
    outputs = [
        done.stdout,
        done.stderr,
        rescored.stdout,
        rescored.stderr,
        refused.stdout,
        refused.stderr,
        probed.stdout,
        probed.stderr,
    ]
    assert not any(CANARY in text for text in outputs)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 8
    for path in files:
        assert CANARY.encode() not in path.read_bytes(), path


HOSTILE = [
    ("What is the tag?", "<script>document.title='pwned';document.body.setAttribute('data-pwned','script')</script>"),
    ("What is the image?", "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"),
    ("What is the link?", "<a id=\"evil\" href=\"javascript:document.body.setAttribute('data-pwned','link')\">x</a>"),
    (
        "What closes the page?",
        "</pre></details></section><script>document.body.setAttribute('data-pwned','break')</script>",
    ),
]


def test_hostile_model_output_is_shown_as_text(tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    task = tmp_path / "hostile.yaml"
    samples = ", ".join(json.dumps({"question": q, "answer": a}) for q, a in HOSTILE)
    task.write_text(
        f'name: hostile\nsamples: [{samples}]\ndoc_to_text: "{{{{ question }}}}"\nscorer: exact\n'
        "prompt: {instruction: 'Answer: <answer>'}\n"
    )
    with sim_process("--task", str(task), "--burst", "--accuracy", "1") as url:
        done = qualeval("run", "--base-url", url, "--model", "sim", "--task", str(task), "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    report = tmp_path / "r" / "report.html"
    dom = chromium_dom(CHROMIUM, report, tmp_path / "profile")
    assert "pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]  # no script ran: the body was not touched
    assert "<title>qualeval report" in dom
    assert '<a id="evil"' not in dom and '<img src="x"' not in dom  # no such elements, only their text
    assert dom.count("&lt;script&gt;") >= 2  # the text is there, as text
    assert "4 shown" in dom  # while the page's own script did run


# --- bad input: every case one line on stderr, exit 2 (input) or 3 (endpoint), never a traceback --------------


def _write(tmp: Path, name: str, text: str | bytes) -> Path:
    path = tmp / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


VALID_TASK = 'name: t\nsamples: [{question: "2+2?", answer: "4"}]\nscorer: exact\n'

# (files to create, argv with {tmp} and {url}, exit code, words the message holds)
CATALOGUE: list[tuple[dict[str, str | bytes], list[str], int, str]] = [
    ({"t.yaml": "name: [oops\n"}, ["tasks", "show", "{tmp}/t.yaml"], 2, "invalid YAML"),
    ({"t.yaml": VALID_TASK + "colour: red\n"}, ["tasks", "show", "{tmp}/t.yaml"], 2, "field 'colour'"),
    ({"t.yaml": VALID_TASK + "num_fewshot: many\n"}, ["tasks", "show", "{tmp}/t.yaml"], 2, "field 'num_fewshot'"),
    (
        {"t.yaml": VALID_TASK.replace("scorer: exact", "scorer: fuzzy")},
        ["tasks", "show", "{tmp}/t.yaml"],
        2,
        "field 'scorer.kind'",
    ),
    ({"t.yaml": VALID_TASK + "x: !function utils.f\n"}, ["tasks", "show", "{tmp}/t.yaml"], 2, "cannot run code"),
    ({"t.yaml": b"name: caf\xe9\n"}, ["tasks", "show", "{tmp}/t.yaml"], 2, "not UTF-8"),
    (
        {"t.yaml": "name: t\nscorer: exact\ndata_files: {test: d.jsonl}\n", "d.jsonl": '{"q": 1}\n'},
        ["tasks", "show", "{tmp}/t.yaml", "--data", "{tmp}"],
        2,
        "'question' is undefined",
    ),
    (
        {"t.yaml": "name: t\nscorer: exact\ndata_files: {test: d.jsonl}\n", "d.jsonl": ""},
        ["tasks", "show", "{tmp}/t.yaml", "--data", "{tmp}"],
        2,
        "no documents",
    ),
    (
        {"t.yaml": "name: t\nscorer: exact\ndata_files: {test: d.jsonl}\n", "d.jsonl": b'{"question": "\xff"}\n'},
        ["tasks", "show", "{tmp}/t.yaml", "--data", "{tmp}"],
        2,
        "not UTF-8",
    ),
    (
        {
            "t.yaml": VALID_TASK.replace('"2+2?"', "\"{{ ''.__class__.__mro__ }}\"").replace(
                "scorer: exact", 'scorer: exact\ndoc_to_text: "{{ question.__class__.__mro__[1].__subclasses__() }}"'
            )
        },
        ["tasks", "show", "{tmp}/t.yaml"],
        2,
        "unsafe",
    ),
    ({}, ["tasks", "show", "nope"], 2, "unknown task 'nope'"),
    ({}, ["tasks", "show", "mmlu:astrology"], 2, "no subject or group"),
    ({}, ["tasks", "show", "lm_eval:{tmp}/missing.yaml"], 2, "cannot read lm-eval task"),
    ({}, ["tasks", "show", "knowledge_qa", "--index", "-1"], 2, "--index must not be negative"),
    ({}, ["tasks", "show", "gsm8k", "--data", "{tmp}/absent"], 2, "no such file or folder"),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--concurrency",
            "0",
        ],
        2,
        "--concurrency: every level must be at least 1",
    ),
    (
        {},
        ["run", "--base-url", "{url}", "--model", "m", "--task", "knowledge_qa", "--out", "{tmp}/o", "--limit", "0"],
        2,
        "--limit: must be at least 1",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--samples-per-item",
            "0",
        ],
        2,
        "--samples-per-item",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--fail-under",
            "85",
        ],
        2,
        "--fail-under: must be between 0 and 1",
    ),
    (
        {},
        ["run", "--base-url", "{url}", "--model", "m", "--task", "knowledge_qa", "--out", "{tmp}/o", "--timeout", "-1"],
        2,
        "--timeout: must be positive",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--request-rate",
            "0",
        ],
        2,
        "--request-rate",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--request-rate",
            "2",
            "--concurrency",
            "1,4",
        ],
        2,
        "not both",
    ),
    (
        {},
        ["run", "--base-url", "{url}", "--model", "m", "--task", "knowledge_qa", "--out", "{tmp}/o", "--slo", "ttft=5"],
        2,
        "unknown limit 'ttft'",
    ),
    (
        {},
        ["run", "--base-url", "{url}", "--model", "m", "--task", "knowledge_qa", "--out", "{tmp}/o", "--slo", "ttft=x"],
        2,
        "unknown limit 'ttft'",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--slo",
            "ttft_ms",
        ],
        2,
        "--slo: 'ttft_ms' is not NAME=MILLISECONDS",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--burstiness",
            "0",
        ],
        2,
        "--burstiness: must be positive",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--constraint",
            "always",
        ],
        2,
        "--constraint",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--constraint-style",
            "magic",
        ],
        2,
        "--constraint-style",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--max-tokens",
            "0",
        ],
        2,
        "--max-tokens: must be at least 1",
    ),
    (
        {},
        ["run", "--base-url", "{url}", "--model", "m", "--task", "knowledge_qa", "--out", "{tmp}/o", "--warmup", "-1"],
        2,
        "--warmup: must not be negative",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--limit",
            "5",
            "--warmup",
            "5",
        ],
        2,
        "--warmup 5: task knowledge_qa's 5 requests per level would all be warm-ups, so none would be measured",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--num-fewshot",
            "2",
        ],
        2,
        "no fewshot_split or fewshot_samples",
    ),
    ({}, ["run", "--base-url", "{url}", "--task", "knowledge_qa", "--out", "{tmp}/o"], 2, "--model is needed"),
    ({}, ["run", "--base-url", "{url}", "--model", "m", "--out", "{tmp}/o"], 2, "at least one --task"),
    ({}, ["run", "--base-url", "{url}", "--model", "m", "--task", "knowledge_qa"], 2, "--out is needed"),
    (
        {},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
        ],
        2,
        "the same task is given twice",
    ),
    (
        {"f": "x"},
        ["run", "--base-url", "{url}", "--model", "m", "--task", "knowledge_qa", "--out", "{tmp}/f"],
        2,
        "cannot create the run directory",
    ),
    ({}, ["run", "--config", "{tmp}/absent.yaml", "--out", "{tmp}/o"], 2, "cannot read config"),
    (
        {"c.yaml": "concurency: 3\n"},
        ["run", "--config", "{tmp}/c.yaml", "--out", "{tmp}/o"],
        2,
        "unknown option 'concurency'",
    ),
    ({"c.yaml": "limit: [1\n"}, ["run", "--config", "{tmp}/c.yaml", "--out", "{tmp}/o"], 2, "invalid YAML"),
    (
        {},
        ["run", "--base-url", "ftp://x", "--model", "m", "--task", "knowledge_qa", "--out", "{tmp}/o"],
        2,
        "must start with http:// or https://",
    ),
    (
        {},
        [
            "run",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--task",
            "knowledge_qa",
            "--out",
            "{tmp}/o",
            "--max-retries",
            "0",
        ],
        3,
        "cannot reach the endpoint",
    ),
    (
        {},
        ["score", "--task", "gsm8k", "--responses", "{tmp}/r.jsonl", "--out", "{tmp}/s", "--format", "xml"],
        2,
        "--format must be one of auto, qualeval, csv, lm-eval, openai-batch, got 'xml'",
    ),
    (
        {"r.jsonl": "{not json\n"},
        ["score", "--task", "knowledge_qa", "--responses", "{tmp}/r.jsonl", "--out", "{tmp}/s"],
        2,
        "r.jsonl:1: not valid JSON",
    ),
    # issue 20: response text under another tool's name is read, never scored as an empty answer unseen
    (
        {"r.jsonl": '{"id": 0, "answer": "18", "generator": "m"}\n'},
        ["score", "--task", "gsm8k", "--responses", "{tmp}/r.jsonl", "--out", "{tmp}/s"],
        2,
        "r.jsonl:1: no response text on the line: none of content, output, response",
    ),
    (
        {"r.jsonl": '{"id": "a", "output": "#### 1", "target": "1"}\n{"id": "b", "text": "#### 2", "target": "2"}\n'},
        ["score", "--task", "gsm8k", "--responses", "{tmp}/r.jsonl", "--out", "{tmp}/s"],
        2,
        "r.jsonl:2: no 'output' field (the file's response text, as on its first line)",
    ),
    (
        {"r.jsonl": '{"id": "a", "response": {"text": "1"}, "target": "1"}\n'},
        ["score", "--task", "gsm8k", "--responses", "{tmp}/r.jsonl", "--out", "{tmp}/s"],
        2,
        "r.jsonl:1: field 'response': Input should be a valid string",
    ),
    # issue 20: --data keyed by what --task says; a key that names no task is named with the keys there are
    (
        {"t.yaml": "name: t\nscorer: exact\ndata_files: {test: d.jsonl}\n", "d.jsonl": '{"question": "q"}\n'},
        [
            "run",
            "--base-url",
            "{url}",
            "--model",
            "m",
            "--task",
            "{tmp}/t.yaml",
            "--data",
            "tt={tmp}/d.jsonl",
            "--out",
            "{tmp}/o",
        ],
        2,
        "names no task of this run (its keys: {tmp}/t.yaml, t)",
    ),
    (
        {"t.yaml": "name: t\nscorer: exact\ndata_files: {test: d.jsonl}\n", "d.jsonl": '{"question": "q"}\n'},
        ["tasks", "show", "{tmp}/t.yaml", "--data", "gsm8k={tmp}/d.jsonl"],
        2,
        "'gsm8k' is not this task (its keys: {tmp}/t.yaml, t; or PATH alone)",
    ),
    (
        {"r.jsonl": '{"id": 0, "content": "1"}\n'},
        ["score", "--task", "gsm8k", "--responses", "{tmp}/r.jsonl", "--data", "mmlu={tmp}", "--out", "{tmp}/s"],
        2,
        "'mmlu' is not this task (its keys: gsm8k; or PATH alone)",
    ),
    # issue 20: usage errors are one line too, not click's usage text and a boxed panel
    ({}, ["score", "--bogus"], 2, "no such option: --bogus"),
    ({}, ["run", "--concurrency"], 2, "option '--concurrency' requires an argument"),
    ({}, ["tasks", "show", "gsm8k", "--index", "x"], 2, "invalid value for '--index'"),
    ({}, ["score", "--task", "gsm8k"], 2, "missing option '--responses'"),
    ({}, ["scor"], 2, "no such command 'scor'"),
    ({}, ["rescore", "{tmp}"], 2, "no manifest.json here"),
    ({}, ["compare", "{tmp}", "{tmp}"], 2, "no manifest.json here"),
    ({}, ["serve-sim", "--flavor", "tgi"], 2, "unknown flavour 'tgi'"),
    (
        {"p.yaml": "limit: 2\n".encode("utf-16")},
        ["run", "--config", "{tmp}/p.yaml", "--base-url", "{url}", "--model", "m", "--task", "knowledge_qa"],
        2,
        "{tmp}/p.yaml: the config file is not UTF-8 text",
    ),
    ({}, ["serve-sim", "--max-running", "-1"], 2, "--max-running must be a finite number of at least 0"),
    ({}, ["serve-sim", "--faults", "429"], 0, ""),  # a bare name means always: valid, and not run here
    ({}, ["probe", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"], 3, "127.0.0.1:9"),
]


@pytest.mark.parametrize(
    ("files", "argv", "code", "words"),
    [c for c in CATALOGUE if c[2] != 0],
    ids=[f"case{i}" for i, c in enumerate(CATALOGUE) if c[2] != 0],
)
def test_bad_input_catalogue(
    tmp_path: Path, files: dict[str, str | bytes], argv: list[str], code: int, words: str
) -> None:
    for name, text in files.items():
        _write(tmp_path, name, text)
    args = [a.replace("{tmp}", str(tmp_path)).replace("{url}", "http://127.0.0.1:9/v1") for a in argv]
    done = CliRunner().invoke(app, args)  # in process: one interpreter for the whole catalogue
    assert done.exit_code == code, (done.exit_code, done.stderr)
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception  # no traceback
    message = " ".join(done.stderr.split())
    assert words.replace("{tmp}", str(tmp_path)) in message, done.stderr
    assert message.startswith("error: ") and len([ln for ln in done.stderr.splitlines() if ln.strip()]) <= 3


def test_the_catalogue_is_large_enough() -> None:
    assert len([c for c in CATALOGUE if c[2] != 0]) + len(SERVER_CASES) >= 40


# failures the server causes: every request fails, so the run says so and exits 3
SERVER_CASES = [
    (("--faults", "context=1"), "maximum context length"),
    (("--faults", "html=1"), "expected a JSON chat completion, got text/html"),
    (("--faults", "empty-choices=1"), "no choices"),
    (("--api-key", "other"), "refused us"),
]


@pytest.mark.parametrize(("sim", "words"), SERVER_CASES, ids=["context", "html", "no-choices", "401"])
def test_server_side_failures_exit_3(tmp_path: Path, sim: tuple[str, ...], words: str) -> None:
    with sim_process("--task", "knowledge_qa", "--burst", *sim) as url:
        done = qualeval(
            "run",
            "--base-url",
            url,
            "--model",
            "sim",
            "--task",
            "knowledge_qa",
            "--limit",
            "3",
            "--max-retries",
            "1",
            "--no-probe",
            "--out",
            str(tmp_path / "o"),
            "--no-stream",
        )
    assert done.returncode == 3, done.stderr
    assert words in " ".join(done.stderr.split()) and "Traceback" not in done.stderr


@pytest.mark.skipif(not GSM8K.exists(), reason="shared data missing")
def test_a_prompt_too_long_for_the_context_is_a_recorded_failure(tmp_path: Path) -> None:
    with sim_process("--answers", str(GSM8K), "--burst", "--max-model-len", "4170") as url:
        done = qualeval(
            "run",
            "--base-url",
            url,
            "--model",
            "sim",
            "--task",
            "gsm8k",
            "--data",
            str(SHARED / "gsm8k"),
            "--limit",
            "4",
            "--max-tokens",
            "4096",
            "--no-probe",
            "--out",
            str(tmp_path / "o"),
        )
    records = [json.loads(line) for line in lines(tmp_path / "o" / "records.jsonl")]
    too_long = [r for r in records if r["status"] == "transport_error"]
    assert too_long and all("maximum context length" in r["error"] and r["attempts"] == 1 for r in too_long)
    assert done.returncode in (0, 3)


def test_readme_set_up_commands_are_the_ones_tested() -> None:
    readme = (ROOT / "README.md").read_text()
    assert 'pip install -e ".[test]"' in readme and "qualeval demo" in readme and "python -m pytest" in readme
    assert "python -m pytest" in (ROOT / ".ci" / "run").read_text()
