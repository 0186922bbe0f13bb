"""The Python API: pinned public names, options that agree across the CLI, config files and `evaluate`, and
`evaluate` from inside a running event loop (Jupyter)."""

from __future__ import annotations

import asyncio
import inspect
import re
from pathlib import Path

import pytest
import yaml

import qualeval
from qualeval.errors import InputError
from qualeval.records import RunConfig
from qualeval.run.options import load_config
from qualeval.sim import Behaviour, Latency, SimConfig, running_server

PUBLIC = {
    "ChatClient",
    "ChatRequest",
    "ChatResponse",
    "ClientConfig",
    "Completion",
    "Message",
    "Record",
    "RunConfig",
    "RunResult",
    "Sample",
    "Timing",
    "Usage",
    "__version__",
    "evaluate",
    "evaluate_async",
    "load_task",
    "open_run",
    "score_file",
}


def test_the_public_api_is_pinned() -> None:
    assert set(qualeval.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(qualeval, name) is not None


def test_every_run_option_is_a_flag_a_config_key_and_an_evaluate_keyword(tmp_path: Path) -> None:
    from typer.main import get_command

    from qualeval.cli import app

    run = get_command(app).commands["run"]  # type: ignore[attr-defined]
    flags = {p.name for p in run.params} - {"config", "help"}
    options = set(RunConfig.model_fields)
    assert flags == options
    from qualeval.run.keywords import RunOptions

    # evaluate's keywords: its own named ones and RunOptions's, each declared with a type a checker reads
    named = set(inspect.signature(qualeval.evaluate).parameters) - {"config", "progress", "on_record", "options"}
    keywords = named | RunOptions.__optional_keys__
    assert keywords == options and not named & RunOptions.__optional_keys__
    assert "Unpack[RunOptions]" in str(inspect.signature(qualeval.evaluate).parameters["options"].annotation)
    assert all(f" {name}" in (qualeval.evaluate.__doc__ or "") for name in RunOptions.__optional_keys__)
    profile = tmp_path / "p.yaml"  # every option is also a key of a profile file
    profile.write_text(yaml.safe_dump({name: None for name in options}))
    with pytest.raises(InputError) as err:  # values are checked, but no key is unknown
        load_config(profile, {})
    assert "unknown option" not in str(err.value)


def test_options_shared_with_the_client_are_declared_once() -> None:
    """A run's and the probe's client options are ClientConfig's fields: the same type, default and help, or a
    difference that says why; `score` and `probe` take their flags from the declaration, as `run` does."""
    from typer.main import get_command

    from qualeval.cli import app
    from qualeval.cli.evaluate import _SCORE_HELP, SCORE_OPTIONS
    from qualeval.records import ClientConfig
    from qualeval.run.probing import ProbeOptions

    client = ClientConfig.model_fields
    for model in (RunConfig, ProbeOptions):
        for name in set(model.model_fields) & set(client):
            field, declared = model.model_fields[name], client[name]
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            if extra.get("differs"):  # e.g. a run never falls back to OpenAI's URL
                continue
            assert (field.annotation, field.description) == (declared.annotation, declared.description), name
            assert field.get_default(call_default_factory=True) == declared.get_default(call_default_factory=True)
    assert {"timeout", "max_retries", "thinking_opened", "max_tokens_field"} <= set(RunConfig.model_fields)
    commands = get_command(app).commands  # type: ignore[attr-defined]
    run, score, probe = ({p.name: p for p in commands[c].params} for c in ("run", "score", "probe"))
    for name in SCORE_OPTIONS:
        assert score[name].opts == run[name].opts and score[name].secondary_opts == run[name].secondary_opts
        assert name in _SCORE_HELP or score[name].help == run[name].help, name
    # score's own: one task's data (a PATH, or TASK=PATH), and a folder for items.jsonl rather than a run directory
    assert set(score) & set(RunConfig.model_fields) - set(SCORE_OPTIONS) == {"data", "out"}
    assert set(ProbeOptions.model_fields) <= set(probe) and probe["max_tokens"].opts == ["--max-tokens"]
    assert "(default: 2048)" in (probe["max_tokens"].help or "")


def test_flags_take_the_forms_people_type() -> None:
    config = load_config(
        None,
        {
            "tasks": ["gsm8k,mmlu:stem", "knowledge_qa"],
            "model": "m",
            "base_url": "http://127.0.0.1:1/v1",
            "out": "o",
            "data": ["gsm8k=/d/gsm8k", "/d/all"],
            "slo": ["ttft_ms=500,tpot_ms=50"],
            "concurrency": ["1,4", "16"],
        },
    )
    assert config.tasks == ["gsm8k", "mmlu:stem", "knowledge_qa"] and config.concurrency == [1, 4, 16]
    assert config.data == {"gsm8k": Path("/d/gsm8k"), "*": Path("/d/all")} and config.slo["tpot_ms"] == 50
    base = {"tasks": "gsm8k", "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": "o"}
    assert load_config(None, {**base, "data": "/d"}).data == {"*": Path("/d")}
    with pytest.raises(InputError, match=r"--temperature: .*between 0 and 2"):
        load_config(None, {**base, "temperature": -1})
    with pytest.raises(InputError, match="unknown reasoning format 'nope'"):
        load_config(None, {**base, "reasoning_format": "nope"})
    assert "api_key" not in load_config(None, {**base, "api_key": "sk-canary"}).model_dump(mode="json")


def test_evaluate_works_inside_a_running_event_loop_and_reads_back(tmp_path: Path) -> None:
    sim = SimConfig(
        port=0, tasks=("word_problems",), behaviour=Behaviour(reasoning_tokens=10), latency=Latency(burst=True)
    )
    seen: list[str] = []
    with running_server(sim) as url:

        async def notebook_cell() -> qualeval.RunResult:  # as in Jupyter: a loop is already running
            return qualeval.evaluate(
                "sim",
                "word_problems",
                base_url=url,
                out=tmp_path / "run",
                limit=5,
                on_record=lambda r: seen.append(r.sample_id),
            )

        result = asyncio.run(notebook_cell())
        assert len(seen) == 5 and result.summary.tasks["word_problems"].summary.n == 5
        again = asyncio.run(
            qualeval.evaluate_async("sim", ["word_problems"], base_url=url, out=tmp_path / "run", limit=5)
        )  # resumed: nothing left to send
        assert again.summary.records == 5
    opened = qualeval.open_run(tmp_path / "run")
    assert opened.summary.tasks["word_problems"].summary.n == 5 and len(opened.records) == 5
    frame = opened.to_pandas()
    assert {"prompt", "content", "reasoning", "subject"} <= set(frame.columns)
    assert frame["prompt"].str.len().min() > 0
    with pytest.raises(InputError, match=r"no summary\.json here"):
        qualeval.open_run(tmp_path)
    with pytest.raises(InputError, match=r"unknown option 'concurency'.*did you mean 'concurrency'"):
        qualeval.evaluate("sim", "word_problems", base_url=url, out=tmp_path / "x", concurency=4)
    with pytest.raises(InputError, match="did you mean 'context_lengths'"):  # the flag's name, not the keyword's
        qualeval.evaluate("sim", "word_problems", base_url=url, out=tmp_path / "x", context_length=[0])


def test_the_library_warns_through_python_warnings_and_the_cli_shows_them_as_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import warnings

    from typer.testing import CliRunner

    from qualeval.cli import app
    from qualeval.cli.output import shown_warnings
    from qualeval.errors import EndpointError, QualevalNote, QualevalWarning

    unread = "--data gsm8k=x.jsonl: no task 'gsm8k' in this run"
    nowhere = "http://127.0.0.1:1/v1"  # nothing listens: the run stops at the endpoint, after its checks
    with pytest.warns(QualevalWarning, match=unread), pytest.raises(EndpointError):
        qualeval.evaluate("m", "knowledge_qa", base_url=nowhere, out=tmp_path / "api", data={"gsm8k": "x.jsonl"})
    flags = ["--model", "m", "--base-url", nowhere, "--task", "knowledge_qa", "--data", "gsm8k=x.jsonl"]
    done = CliRunner().invoke(app, ["run", *flags, "--out", str(tmp_path / "cli")])
    assert done.exit_code == 3
    assert next(line for line in done.output.splitlines() if unread in line).startswith(f"warning: {unread}")
    shown_before = warnings.showwarning
    with shown_warnings():
        warnings.warn("thinking switched by chat_template_kwargs", QualevalNote, stacklevel=1)
    assert "note: thinking switched by chat_template_kwargs" in capsys.readouterr().err
    assert warnings.showwarning is shown_before  # the CLI's scope leaves no global state behind


def test_evaluate_warns_when_requests_fail_at_the_endpoint(tmp_path: Path) -> None:
    from qualeval.errors import QualevalWarning

    sim = SimConfig(port=0, tasks=("knowledge_qa",), latency=Latency(burst=True), faults={"500": 0.5})
    with running_server(sim) as url, pytest.warns(QualevalWarning, match=r"\d+ requests ended in an endpoint error"):
        result = qualeval.evaluate(
            "sim", "knowledge_qa", base_url=url, out=tmp_path / "run", limit=12, max_retries=0, probe=False
        )
    assert result.endpoint_errors > 0


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("limit", True, "--limit: True is a boolean, not a number"),
        ("warmup", False, "--warmup: False is a boolean, not a number"),
        ("fail_under", True, "--fail-under: True is a boolean, not a number"),
        ("concurrency", [1, True], "--concurrency: True is a boolean, not a number"),
        ("thinking", "no", "--thinking: 'no' is not a boolean"),
        ("thinking", 0, "--thinking: 0 is not a boolean"),
        ("probe", "off", "--probe: 'off' is not a boolean"),
    ],
)
def test_a_wrongly_typed_option_is_refused_not_read_as_another_setting(
    tmp_path: Path, option: str, value: object, said: str
) -> None:
    with pytest.raises(InputError, match=f"^{re.escape(said)}"):
        qualeval.evaluate("m", "knowledge_qa", base_url="http://127.0.0.1:1/v1", out=tmp_path, **{option: value})
    profile = tmp_path / "profile.yaml"
    profile.write_text(yaml.safe_dump({option: value}))
    with pytest.raises(InputError, match=f"^{re.escape(str(profile))}: {re.escape(said)}"):
        load_config(profile, {"tasks": "gsm8k", "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": "o"})


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("limit", "5"),
        ("temperature", "0.7"),
        ("fail_under", "0.5"),
        ("samples_per_item", "3"),
        ("concurrency", ["4"]),
        ("concurrency", "4"),  # ran at [4]: text is no number in a list option either
        ("concurrency", "4,16"),  # the flag's text, ran as [4, 16]
        ("max_tokens", "512,2048"),
    ],
)
def test_text_for_a_number_is_refused_not_converted(tmp_path: Path, option: str, value: object) -> None:
    # evaluate(limit="5") ran 5 items: a keyword or a profile's value is typed; only the flags arrive as text
    said = f"--{option.replace('_', '-')}: {value!r} is text"
    with pytest.raises(InputError, match=f"^{re.escape(said)}"):
        qualeval.evaluate("m", "knowledge_qa", base_url="http://127.0.0.1:1/v1", out=tmp_path, **{option: value})
    profile = tmp_path / "profile.yaml"
    profile.write_text(yaml.safe_dump({option: value}))
    with pytest.raises(InputError, match=f"^{re.escape(str(profile))}: {re.escape(said)}"):
        load_config(profile, {"tasks": "gsm8k", "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": "o"})
    flags = {"tasks": "gsm8k", "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": "o", option: value}
    assert load_config(None, flags)  # the command line's text still parses


def test_options_still_read_their_own_types_and_the_flags_text() -> None:
    from qualeval.records import ClientConfig

    base = {"tasks": "gsm8k", "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": "o"}
    config = load_config(None, {**base, "limit": 3, "thinking": False, "probe": False, "concurrency": ["1,4"]})
    assert (config.limit, config.thinking, config.probe, config.concurrency) == (3, False, False, [1, 4])
    assert load_config(None, {**base, "fail_under": 1, "timeout": 5}).fail_under == 1.0
    with pytest.raises(ValueError, match="'yes' is not a boolean"):
        ClientConfig(thinking_opened="yes")  # type: ignore[arg-type]


def test_a_profile_that_gives_an_option_twice_is_refused(tmp_path: Path) -> None:
    base = {"tasks": "gsm8k", "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": "o"}
    twice = tmp_path / "twice.yaml"
    twice.write_text("limit: 2\ntemperature: 0.6\nlimit: 1\n")
    with pytest.raises(InputError, match=f"^{re.escape(str(twice))}:3: key 'limit' is given twice"):
        load_config(twice, base)
    spelled = tmp_path / "spelled.yaml"
    spelled.write_text("max-tokens: 512\nmax_tokens: 1024\n")
    with pytest.raises(InputError, match="option 'max_tokens' is given twice \\(as max-tokens and max_tokens\\)"):
        load_config(spelled, base)
