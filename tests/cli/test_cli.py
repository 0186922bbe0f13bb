"""The command line: serve-sim, probe, and one-line errors with the documented exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GSM8K, needs_gsm8k, sim_process


def qualeval(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(
    ("flavour", "source", "switch", "enforced"),
    [
        (
            "vllm",
            "field:reasoning",
            "chat_template_kwargs",
            {
                "response_format.json",
                "structured_outputs.choice",
                "structured_outputs.regex",
                "structured_outputs.json",
            },
        ),
        (
            "vllm-0.10",
            "field:reasoning_content",
            "chat_template_kwargs",
            {"response_format.json", "guided.choice", "guided.regex", "guided.json"},
        ),
        (
            "sglang",
            "field:reasoning_content",
            "chat_template_kwargs",
            {"response_format.json", "sglang.regex"},
        ),
        ("deepseek", "field:reasoning_content", "deepseek", set()),
        ("ollama", "field:reasoning", "reasoning_effort", {"response_format.json"}),
        ("inline-think", "inline:paired", "chat_template_kwargs", {"response_format.json"}),
    ],
)
@needs_gsm8k
def test_probe_reports_what_the_server_honours(flavour: str, source: str, switch: str, enforced: set[str]) -> None:
    with sim_process("--flavor", flavour, "--answers", str(GSM8K)) as url:
        done = qualeval("probe", "--base-url", url, "--model", "sim", "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["simulated"] is True
    assert result["reasoning_source"] == source
    assert result["streaming_usage"] is True
    works = {name for name, verdict in result["thinking_switch"].items() if verdict == "works"}
    assert works == {switch}
    got = {mode for mode, check in result["structured_outputs"].items() if check["verdict"] == "enforced"}
    assert got == enforced


def test_probe_sees_constraints_ignored_with_the_switch() -> None:
    with sim_process("--flavor", "vllm", "--ignore-constraints") as url:
        done = qualeval("probe", "--base-url", url, "--format", "json")
    verdicts = {c["verdict"] for c in json.loads(done.stdout)["structured_outputs"].values()}
    assert verdicts == {"ignored"}


def test_probe_table_and_json_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "probe.json"
    with sim_process("--flavor", "vllm-0.13") as url:
        done = qualeval("probe", "--base-url", url, "--json", str(out))
    assert done.returncode == 0
    assert "SIMULATED" in done.stdout and "reasoning fields seen" in done.stdout
    assert json.loads(out.read_text())["reasoning_fields"] == ["reasoning", "reasoning_content"]


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["serve-sim", "--flavor", "nope"], 2, "unknown flavour 'nope'"),
        (["serve-sim", "--accuracy", "1.5"], 2, "--accuracy must be between 0 and 1"),
        (["serve-sim", "--faults", "429=lots"], 2, "--faults: '429=lots' is not NAME=RATE"),
        (["serve-sim", "--faults", "meteor=0.1"], 2, "unknown fault 'meteor'"),
        (["serve-sim", "--answers", "/nonexistent/key.jsonl"], 2, "/nonexistent/key.jsonl: cannot read answer key"),
        (["serve-sim", "--port", "70000"], 2, "--port must be between 0 and 65535"),
        (["probe", "--base-url", "ftp://example"], 2, "base URL must start with http:// or https://"),
        (["tasks", "show", "gsm8k", "--data", "/nonexistent"], 2, "--data /nonexistent: no such file or folder"),
        (
            ["tasks", "show", "gsm8k", "--data", "gsm8k=/nonexistent"],
            2,
            "--data gsm8k=/nonexistent: no such file or folder: /nonexistent",
        ),
        (
            ["run", "--base-url", "http://127.0.0.1:9/v1", "--base-url", "notaurl", "--model", "m"],
            2,
            "a replica's URL (--endpoint, or --base-url given again) must start with http:// or https://, "
            "got 'notaurl'",
        ),
        (["probe", "--base-url", "http://127.0.0.1:9/v1", "--format", "xml"], 2, "--format must be 'table' or 'json'"),
        (["probe", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"], 3, "127.0.0.1:9"),
        (["probe", "--base-url", "http://127.0.0.1:9/v1", "--timeout", "0"], 2, "--timeout: must be positive"),
        (
            ["probe", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "-3"],
            2,
            "--max-retries: must be at least 0",
        ),
        (["probe", "--base-url", "http://127.0.0.1:9/v1", "--max-tokens", "0"], 2, "--max-tokens: must be at least 1"),
        (
            [
                "run",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "--task",
                "knowledge_qa",
                "--max-retries",
                "-1",
            ],
            2,
            "--max-retries: must be at least 0",
        ),
    ],
)
def test_bad_input_gets_one_line_and_an_exit_code(args: list[str], code: int, words: str) -> None:
    done = qualeval(*args)
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert words in " ".join(done.stderr.split()), done.stderr


def test_bad_answer_key_line_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    key = tmp_path / "key.jsonl"
    key.write_text('{"question": "a", "answer": "1"}\n{"question": "b"}\n')
    done = qualeval("serve-sim", "--answers", str(key))
    assert done.returncode == 2
    assert f"{key}:2: needs a question field and an answer field" in " ".join(done.stderr.split())


def test_port_in_use_is_a_clean_error() -> None:
    with sim_process() as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        done = qualeval("serve-sim", "--port", port)
    assert done.returncode == 2 and "cannot listen on 127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_and_flavour_list() -> None:
    assert "serve-sim" in qualeval("--help").stdout
    listing = qualeval("serve-sim", "--list-flavors").stdout
    for name in ("vllm-qwen3-leak", "llamacpp", "harmony", "think-close-only"):
        assert name in listing


def test_tasks_list_and_show() -> None:
    listing = qualeval("tasks", "list")
    assert listing.returncode == 0
    for name in ("gsm8k", "mmlu", "knowledge_qa", "syllogisms", "neubaroco", "triviaqa", "nq_open"):
        assert name in listing.stdout
    shown = qualeval("tasks", "show", "knowledge_qa", "--index", "2", "--format", "json")
    sample = json.loads(shown.stdout)
    assert sample["id"] == "knowledge_qa/test/2" and sample["gold"] == "Canberra"
    text = qualeval("tasks", "show", "examples/planet_facts.yaml")
    assert "You are a careful astronomy tutor." in text.stdout and "gold: 8" in text.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["tasks", "show", "nope"], "unknown task 'nope'"),
        (["tasks", "show", "knowledge_qa", "--index", "999"], "--index 999: task knowledge_qa has only"),
        (["tasks", "show", "mmlu:astrology"], "no subject or group 'astrology'"),
        (["tasks", "show", "gsm8k", "--data", "/nonexistent"], "/nonexistent: no such file or folder"),
    ],
)
def test_tasks_errors(args: list[str], words: str) -> None:
    done = qualeval(*args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert words in " ".join(done.stderr.split()), done.stderr


def test_serve_sim_takes_a_task_as_its_answer_key() -> None:
    with sim_process("--task", "knowledge_qa", "--accuracy", "1") as url:
        import httpx

        body = {
            "model": "sim",
            "messages": [
                {
                    "role": "user",
                    "content": json.loads(qualeval("tasks", "show", "knowledge_qa", "--format", "json").stdout)[
                        "messages"
                    ][-1]["content"],
                }
            ],
        }
        reply = httpx.post(f"{url}/chat/completions", json=body, timeout=30).json()
    assert reply["choices"][0]["message"]["content"].strip().endswith("Answer: Paris")


def test_probe_result_hands_its_enforced_styles_to_the_runner() -> None:
    with sim_process("--flavor", "sglang") as url:
        done = qualeval("probe", "--base-url", url, "--format", "json")
    from qualeval.records import ProbeResult

    assert ProbeResult.model_validate_json(done.stdout).styles() == ["sglang", "response_format"]


def test_cli_habits_brackets_unlisted_models_and_where_compare_writes(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app
    from qualeval.sim import Latency, SimConfig, running_server

    runner = CliRunner()
    bad = runner.invoke(app, ["run", "--task", "lm_eval:x", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                              "--out", str(tmp_path / "r"), "--no-probe", "--temperature", "3"])  # fmt: skip
    assert bad.exit_code == 2 and "--temperature: " in bad.output and "between 0 and 2" in bad.output
    # llama-server answers any model name with the model it loaded: the case the warning is for
    flavour = SimConfig(flavour="llamacpp", port=0, tasks=("word_problems",), latency=Latency(burst=True))
    with running_server(flavour) as url:
        runs = []
        for name in ("a", "b"):
            out = tmp_path / name
            done = runner.invoke(app, ["run", "--tasks", "word_problems", "--model", "not-served", "--base-url", url,
                                       "--out", str(out), "--limit", "3", "--no-probe"])  # fmt: skip
            assert done.exit_code == 0, done.output
            assert "warning: model 'not-served' is not among the server's models (sim)" in done.output
            runs.append(out)
    compared = runner.invoke(app, ["compare", str(runs[0]), str(runs[1])])
    assert compared.exit_code == 0, compared.output
    assert (runs[1] / "compare" / "compare.html").exists() and not (tmp_path / "compare").exists()


def test_an_error_keeps_its_square_brackets() -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app

    done = CliRunner().invoke(app, ["tasks", "show", "lm_eval:definitely_not_a_task_[x]"])
    assert done.exit_code == 2 and "[x]" in done.output


def test_serve_sim_options_are_sim_configs() -> None:
    """serve-sim's defaults read into the very config SimConfig() is, and a new SimConfig field is a decision."""
    import dataclasses

    from qualeval.cli.serve_sim import SIM_OPTIONS, sim_config, sim_parameters
    from qualeval.sim import SimConfig

    defaults = {p.name: p.default for p in sim_parameters()}
    assert sim_config(defaults) == SimConfig(task_data={})
    flagged = {o.target.partition(".")[0] for o in SIM_OPTIONS if o.target}
    unflagged = {f.name for f in dataclasses.fields(SimConfig)} - flagged
    # fault timings and a chat-template setting: the command has never offered them
    assert unflagged == {"slow_headers_s", "stall_s", "thinking_opened"}


def test_printed_paths_are_never_broken_across_lines(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app

    out = tmp_path / ("a-run-directory-whose-name-alone-is-wider-than-a-terminal-" * 2) / "demo"
    done = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    for name in ("report.html", "report.md", "records.jsonl"):
        assert any(str(out / name) in line for line in lines), name


def test_probe_sim_ignores_openai_base_url_in_the_environment() -> None:
    """OPENAI_BASE_URL is a default, read in one place; it is not a second --base-url beside --sim."""
    from typer.testing import CliRunner

    from qualeval.cli import app

    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    done = CliRunner().invoke(app, ["probe", "--sim", "vllm", "--format", "json"], env=env)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["simulated"] is True
    both = CliRunner().invoke(app, ["probe", "--sim", "vllm", "--base-url", "http://127.0.0.1:9/v1"], env=env)
    assert both.exit_code == 2 and "not both" in both.output


# --- usage errors: one `error:` line and exit 2 for every command, as the README promises (issue 20) ------------

USAGE_ERRORS = [
    (["score", "--bogus"], "error: no such option: --bogus"),
    (["run", "--concurrency"], "error: option '--concurrency' requires an argument"),
    (["run", "--stream=maybe"], "error: option '--stream' does not take a value"),
    (["tasks", "show", "gsm8k", "--index", "x"], "error: invalid value for '--index'"),
    (["probe", "--timeout", "soon"], "error: invalid value for '--timeout'"),
    (["serve-sim", "--port", "abc"], "error: invalid value for '--port'"),
    (["score", "--task", "gsm8k"], "error: missing option '--responses'"),
    (["merge"], "error: missing argument"),
    (["compare", "a", "b", "c", "d"], "error: invalid value: A B, or A A2 B"),
    (["scor"], "error: no such command 'scor'"),
    (["tasks", "shwo"], "error: no such command 'shwo'"),
    (["--bogus"], "error: no such option: --bogus"),
    (["probe", "--format", "xml"], "error: --format must be 'table' or 'json'"),  # a bad choice, checked by us
]


@pytest.mark.parametrize(("args", "words"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_usage_errors_are_one_plain_line(args: list[str], words: str) -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app

    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    shown = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(shown) == 1 and shown[0].startswith(words), done.stderr  # no usage text, no boxed panel
    assert done.stdout == ""


def test_usage_errors_through_the_installed_command_and_help_is_untouched() -> None:
    done = qualeval("score", "--task", "gsm8k", "--bogus")
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no such option: --bogus"), done.stderr
    assert lines[0].endswith("qualeval score --help)")  # where the flags are listed
    shown = qualeval("score", "--help")  # help is not an error: typer still draws it, panels and all
    assert shown.returncode == 0 and "╭─ Options" in shown.stdout and "--responses" in shown.stdout


# --- --data TASK=PATH keyed by what --task says, or by the task's name (issue 20) --------------------------------


def _data_task(tmp_path: Path) -> tuple[Path, Path]:
    task = tmp_path / "mytask.yaml"
    task.write_text("name: mytask\nscorer: exact\ndata_files: {test: d.jsonl}\n")
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"question": f"{n}+1?", "answer": str(n + 1)}) + "\n" for n in range(3)))
    return task, data


def test_one_task_commands_take_task_equals_path_as_run_does(tmp_path: Path) -> None:
    task, data = _data_task(tmp_path)
    for key in (str(task), "mytask"):
        done = qualeval("tasks", "show", str(task), "--data", f"{key}={data}", "--index", "2", "--format", "json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["gold"] == "3"
    wrong = qualeval("tasks", "show", str(task), "--data", f"gsm8k={data}")
    assert wrong.returncode == 2 and wrong.stderr.splitlines() == [
        f"error: --data gsm8k={data}: 'gsm8k' is not this task (its keys: {task}, mytask; or PATH alone)"
    ]
    responses = tmp_path / "r.jsonl"
    responses.write_text('{"id": 0, "content": "1"}\n{"id": 1, "content": "2"}\n')
    scored = qualeval("score", "--task", str(task), "--responses", str(responses), "--data", f"mytask={data}",
                      "--out", str(tmp_path / "s"))  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert json.loads((tmp_path / "s" / "summary.json").read_text())["tasks"]["mytask"]["summary"]["correct"] == 2


def test_run_data_is_keyed_by_what_task_says(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app
    from qualeval.sim import Latency, SimConfig, running_server

    task, data = _data_task(tmp_path)
    runner = CliRunner()
    # keyed with the task's questions: a run none of whose questions the server knows exits 3
    with running_server(SimConfig(port=0, tasks=(str(task),), task_data=data, latency=Latency(burst=True))) as url:
        common = ["run", "--model", "sim", "--base-url", url, "--no-probe"]
        for key in (str(task), "mytask"):  # what --task said (a path: dots and slashes), and the task's own name
            out = tmp_path / f"run-{len(key)}"
            done = runner.invoke(app, [*common, "--task", str(task), "--data", f"{key}={data}", "--out", str(out)])
            assert done.exit_code == 0, done.output
            assert len((out / "records.jsonl").read_text().splitlines()) == 3
        typo = runner.invoke(
            app, [*common, "--task", str(task), "--data", f"mytsk={data}", "--out", str(tmp_path / "t")]
        )
    assert typo.exit_code == 2
    assert typo.stderr.splitlines() == [
        f"error: {task}: no --data given and the task has no dataset_path to load from the hub; --data mytsk={data} "
        f"names no task of this run (its keys: {task}, mytask)"
    ]


@needs_gsm8k
def test_an_lm_eval_task_takes_data_under_its_lm_eval_name(tmp_path: Path) -> None:
    pytest.importorskip("lm_eval")
    from typer.testing import CliRunner

    from qualeval.cli import app
    from qualeval.sim import Latency, SimConfig, running_server

    with running_server(SimConfig(port=0, answers=GSM8K, latency=Latency(burst=True))) as url:  # it knows them
        done = CliRunner().invoke(app, ["run", "--model", "sim", "--base-url", url, "--no-probe", "--task",
                                        "lm_eval:gsm8k", "--data", f"lm_eval:gsm8k={GSM8K.parent}", "--limit", "2",
                                        "--out", str(tmp_path / "o")])  # fmt: skip
    assert done.exit_code == 0, done.output
    records = [json.loads(line) for line in (tmp_path / "o" / "records.jsonl").read_text().splitlines()]
    assert [r["sample_id"] for r in records] == ["gsm8k/test/0", "gsm8k/test/1"]


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("jitter", -1.0, "--jitter must be between 0 and 1"),
        ("jitter", 2.0, "--jitter must be between 0 and 1"),
        ("max_running", -1, "--max-running must be a finite number of at least 0"),
        ("max_model_len", 0, "--max-model-len must be at least 1"),
        ("kv_tokens", 0, "--kv-tokens must be at least 1"),
        ("ttft_ms", float("nan"), "--ttft-ms must be a finite number"),
        ("decode_ms", float("inf"), "--decode-ms must be a finite number"),
        ("effort_gain", -0.5, "--effort-gain must be a finite number"),
        ("retry_after", -1.0, "--retry-after must be a finite number"),
        ("faults", "429=0.6,500=0.6", "--faults: the rates add up to 1.2"),
    ],
)
def test_serve_sim_refuses_a_value_outside_its_flags_range(name: str, value: object, words: str) -> None:
    from qualeval.cli.serve_sim import sim_config, sim_parameters
    from qualeval.errors import InputError

    values = {p.name: p.default for p in sim_parameters()}
    with pytest.raises(InputError, match=re.escape(words)):
        sim_config({**values, name: value})


def test_the_reference_server_docs_list_every_flag_and_no_other() -> None:
    from qualeval.cli.serve_sim import SIM_OPTIONS

    text = (Path(__file__).parents[2] / "docs" / "reference-server.md").read_text()
    table = text.partition("## Flags")[2].partition("\n## ")[0]
    documented = set(re.findall(r"^\| `(--[a-z-]+)`", table, re.M))
    documented |= set(re.findall(r"^\| `--[a-z-]+`, `(--[a-z-]+)`", table, re.M))
    real = {flag for o in SIM_OPTIONS for flag in (o.flags or (f"--{o.name.replace('_', '-')}",))}
    assert documented == real
