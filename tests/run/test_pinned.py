"""What a run resolves once and keeps: the constraint mode and convention, and the thinking switch.

Resolved from the flags and the probe's measured verdicts before the first request, pinned in the manifest and
its fingerprint, and reused on resume whatever the probe says then (or whether it runs at all).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from qualeval.errors import InputError
from qualeval.records import Manifest, ModeResult, ProbeResult, RunConfig
from qualeval.run.pinned import refuse_conflicts, resolve, resolve_switch
from tests.conftest import sim_process


def qualeval(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=timeout)


def run(
    url: str, out: Path, *extra: str, task: str = "knowledge_qa", limit: int = 6
) -> subprocess.CompletedProcess[str]:
    return qualeval(
        "run", "--base-url", url, "--model", "sim", "--task", task, "--limit", str(limit), "--out", str(out), *extra
    )


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "manifest.json").read_text())


def one_error_line(done: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_resume_with_no_probe_reuses_the_pinned_constraint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        first = run(url, out)
        assert first.returncode == 0, first.stderr
        before = manifest(out)
        probe = before["server"]["probe"]
        kept = (out / "records.jsonl").read_text().splitlines()[:3]
        (out / "records.jsonl").write_text("\n".join(kept) + "\n")  # as if killed half-way
        again = run(url, out, "--no-probe")
        assert again.returncode == 0, again.stderr
    rows = records(out)
    assert len(rows) == 6
    assert {(r["constraint"]["mode"], r["constraint"]["style"]) for r in rows} == {("single", "structured_outputs")}
    after = manifest(out)
    assert after["server"]["probe"] == probe and len(after["resumed"]) == 1  # never nulled by --no-probe
    pinned = after["pinned"]
    assert (pinned["constraint"], pinned["constraint_style"]) == ("single", "structured_outputs")
    assert pinned == before["pinned"]


def test_resume_with_a_conflicting_constraint_flag_is_refused_by_name(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        assert run(url, out).returncode == 0
        before = (out / "records.jsonl").read_bytes()
        conflict = run(url, out, "--constraint", "off")
    one_error_line(conflict, 2, "--constraint", "single", "structured_outputs", str(out))
    assert (out / "records.jsonl").read_bytes() == before


def test_the_pinned_resolution_is_part_of_the_fingerprint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        assert run(url, out).returncode == 0
        data = manifest(out)
        data["pinned"]["constraint_style"] = "response_format"  # an edited pin no longer matches its run
        (out / "manifest.json").write_text(json.dumps(data))
        edited = run(url, out, "--no-probe")
    one_error_line(edited, 2, str(out))


def test_single_or_followup_without_a_usable_convention_is_an_error_before_any_request(tmp_path: Path) -> None:
    with sim_process("--flavor", "deepseek", "--task", "knowledge_qa", "--burst") as url:  # enforces nothing
        single = run(url, tmp_path / "a", "--constraint", "single")
        followup = run(url, tmp_path / "b", "--constraint", "followup")
        blind = run(url, tmp_path / "c", "--constraint", "single", "--no-probe")
    one_error_line(single, 2, "--constraint single", "--constraint-style")
    one_error_line(followup, 2, "--constraint followup")
    one_error_line(blind, 2, "--constraint single", "--no-probe")
    for name in "abc":
        assert not (tmp_path / name / "records.jsonl").exists() or not records(tmp_path / name)


def test_auto_never_constrains_from_the_first_token_where_reasoning_is_inline(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--flavor", "inline-think", "--task", "knowledge_qa", "--burst") as url:
        done = run(url, out)
    assert done.returncode == 0, done.stderr
    rows = records(out)
    assert all(r["constraint"]["mode"] == "followup" for r in rows)
    assert all(r["reasoning"] and r["reasoning_source"] == "inline:paired" for r in rows)  # thinking kept
    assert all("response_format" not in r["request"] for r in rows)  # the main request goes out unconstrained
    pinned = manifest(out)["pinned"]
    assert pinned["constraint"] == "followup" and any("inline:paired" in n for n in pinned["notes"])
    said = [line for line in done.stderr.splitlines() if "followup" in line]
    assert len(said) == 1 and "inline:paired" in said[0]


def test_the_probe_keeps_its_own_budget_whatever_the_run_uses(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sim_process("--task", "knowledge_qa", "--burst", "--reasoning-tokens", "60") as url:
        done = run(url, out, "--max-tokens", "24")  # far too small for the probe's own checks
    assert done.returncode == 0, done.stderr
    data = manifest(out)
    verdicts = {mode: check["verdict"] for mode, check in data["server"]["probe"]["structured_outputs"].items()}
    assert verdicts["structured_outputs.choice"] == "enforced"
    assert data["pinned"]["constraint"] == "single"


def test_no_thinking_uses_the_switch_the_probe_measured(tmp_path: Path) -> None:
    with sim_process("--flavor", "openai", "--task", "knowledge_qa", "--burst") as url:
        measured = run(url, tmp_path / "a", "--no-thinking")
        forced = run(url, tmp_path / "b", "--no-thinking", "--thinking-switch", "chat_template_kwargs")
        blind = run(url, tmp_path / "c", "--no-thinking", "--no-probe")
    assert measured.returncode == 0, measured.stderr
    rows = records(tmp_path / "a")
    assert all(r["status"] == "ok" and "chat_template_kwargs" not in r["request"] for r in rows)
    assert all(r["request"]["reasoning_effort"] == "none" for r in rows)
    assert manifest(tmp_path / "a")["pinned"]["thinking_switch"] == "reasoning_effort"
    # forced: sent as asked, and OpenAI refuses it (every request failed: exit 3)
    assert forced.returncode == 3 and all("chat_template_kwargs" in r["request"] for r in records(tmp_path / "b"))
    one_error_line(blind, 2, "--no-thinking", "--thinking-switch")


def test_no_thinking_on_vllm_keeps_chat_template_kwargs(tmp_path: Path) -> None:
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        done = run(url, tmp_path / "a", "--no-thinking", limit=3)
    assert done.returncode == 0, done.stderr
    rows = records(tmp_path / "a")
    assert all(r["request"]["chat_template_kwargs"] == {"enable_thinking": False} and not r["reasoning"] for r in rows)
    assert manifest(tmp_path / "a")["pinned"]["thinking_switch"] == "chat_template_kwargs"


def _found(switches: dict[str, str], source: str = "field:reasoning", enforced: tuple[str, ...] = ()) -> ProbeResult:
    return ProbeResult(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        simulated=True,
        reasoning_source=source,
        thinking_switch=switches,
        structured_outputs={m: ModeResult(verdict="enforced") for m in enforced},
    )


def test_the_thinking_switch_comes_from_the_probe_verdicts() -> None:
    openai = _found({"chat_template_kwargs": "rejected: HTTP 400", "reasoning_effort": "works", "thinking": "rejected"})
    assert resolve_switch("auto", openai, False) == ("reasoning_effort", None)
    assert resolve_switch("auto", openai, None) == ("none", None)  # nothing asked: nothing sent
    assert resolve_switch("chat_template_kwargs", openai, False) == ("chat_template_kwargs", None)  # forced
    stubborn = _found({name: "ignored (still reasons)" for name in ("chat_template_kwargs", "reasoning_effort")})
    with pytest.raises(InputError, match="--no-thinking: no thinking switch worked"):
        resolve_switch("auto", stubborn, False)
    assert resolve_switch("auto", stubborn, True)[0] == "none"
    plain = _found({"chat_template_kwargs": "no reasoning seen either way"})
    switch, note = resolve_switch("auto", plain, False)
    assert switch == "none" and note and "no reasoning" in note
    with pytest.raises(InputError, match="--thinking-switch"):
        resolve_switch("auto", None, True)


def test_a_followup_gets_the_switch_that_turns_thinking_off() -> None:
    inline = _found({"chat_template_kwargs": "works"}, "inline:paired", ("response_format.json",))
    config = RunConfig(base_url="http://x/v1", model="m", tasks=["t"], out=Path("o"))
    pinned = resolve(config, inline, None)
    assert (pinned.constraint, pinned.constraint_style, pinned.thinking_switch) == (
        "followup",
        "response_format",
        "chat_template_kwargs",
    )
    assert len(pinned.notes) == 1 and "inline:paired" in pinned.notes[0]


def test_a_thinking_pair_with_no_switch_to_send_is_refused() -> None:
    """With no thinking switch sent, thinking=on and thinking=off are the same request: the pair compares nothing."""
    config = RunConfig(base_url="http://x/v1", model="m", tasks=["t"], out=Path("o"), thinking_pair=True)
    plain = _found({"chat_template_kwargs": "no reasoning seen either way"})
    with pytest.raises(InputError, match=r"--thinking-pair.*same request"):
        resolve(config, plain, False)
    forced = config.model_copy(update={"thinking_switch": "none"})
    with pytest.raises(InputError, match=r"--thinking-pair.*--thinking-switch none"):
        resolve(forced, _found({"chat_template_kwargs": "works"}), False)
    assert resolve(config, _found({"chat_template_kwargs": "works"}), False).thinking_switch == "chat_template_kwargs"


def test_a_changed_task_list_is_refused_by_its_flag(tmp_path: Path) -> None:
    def config(tasks: list[str], concurrency: int) -> RunConfig:
        return RunConfig(base_url="http://x/v1", model="m", tasks=tasks, out=tmp_path, concurrency=[concurrency])

    old = Manifest(config=config(["gsm8k"], 4))
    refuse_conflicts(tmp_path, old, config(["gsm8k"], 16))  # concurrency may change
    with pytest.raises(InputError, match="--task \\['gsm8k'\\]"):
        refuse_conflicts(tmp_path, old, config(["mmlu"], 4))
