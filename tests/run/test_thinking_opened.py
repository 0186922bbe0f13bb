"""A chat template that opens the thinking block (Qwen3.5, QwQ, DeepSeek-R1-0528): the model writes only `</think>`,
so a response cut off before it is thinking, never an answer. The probe sees that and the run applies it, pinned
and printed; `qualeval score --thinking-opened` reads the same text the same way."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from qualeval.cli.output import shown_warnings
from qualeval.errors import InputError
from qualeval.records import ProbeResult, Record, RunConfig
from qualeval.records.store import RunStore
from qualeval.run.driver import execute
from qualeval.run.offline import SplitOptions, decide_lines
from qualeval.run.pinned import resolve_opened
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.tasks import load_task

TASK = "word_problems"


def _sim(flavour: str) -> SimConfig:
    # thinking of about 60 tokens against a budget of 40 below: many responses are cut inside the thinking
    behaviour = Behaviour(reasoning_tokens=60, accuracy=0.9, trap_rate=0.3)
    return SimConfig(flavour=flavour, port=0, tasks=(TASK,), behaviour=behaviour, latency=Latency(burst=True))


def _run(url: str, out: Path, **options: object) -> list[Record]:
    config = RunConfig(
        base_url=url, model="sim", tasks=[TASK], out=out, warmup=0, concurrency=[8], limit=16, max_tokens=40,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip
    with shown_warnings():  # as the CLI shows a library warning
        asyncio.run(execute(config))
    return list(RunStore(out).records())


def _pinned(out: Path) -> dict[str, object]:
    return json.loads((out / "manifest.json").read_text())["pinned"]


def test_a_close_only_server_is_read_as_opened_and_a_cut_in_the_thinking_is_reasoning_truncated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_server(_sim("think-close-only")) as url:
        found = _run(url, tmp_path / "found")
        told = _run(url, tmp_path / "told", thinking_opened=True)
    assert _pinned(tmp_path / "found")["thinking_opened"] is True
    assert "note: --thinking-opened applied" in capsys.readouterr().err
    # cut before the template's block closed: thinking, with nothing read off it; cut after it: the answer began
    inside = [r for r in found if r.finish_reason == "length" and r.reasoning_source != "inline:close-only"]
    assert inside
    assert {(r.status, r.extraction.rung, r.content) for r in inside} == {("reasoning_truncated", "none", "")}
    # what the probe detected reads every response exactly as the flag does
    outcome = {(r.sample_id, r.status, r.extraction.value) for r in told}
    assert {(r.sample_id, r.status, r.extraction.value) for r in found} == outcome


def test_offline_scoring_with_thinking_opened_agrees_with_the_run(tmp_path: Path) -> None:
    with running_server(_sim("think-close-only")) as url:
        records = _run(url, tmp_path / "run")
    lines = tmp_path / "lines.jsonl"
    with lines.open("w") as out:
        for r in records:  # the text as the server sent it: the template's block closed, or cut off
            raw = f"{r.reasoning}</think>{r.content}" if r.reasoning_source == "inline:close-only" else r.reasoning
            out.write(json.dumps({"id": r.sample_id, "content": raw, "finish_reason": r.finish_reason}) + "\n")
    judged = decide_lines(load_task(TASK), lines, split=SplitOptions(opened=True))
    assert any(j.done.status == "reasoning_truncated" for j in judged)
    offline = {(j.sample.id, j.done.status, j.verdict.extraction.value) for j in judged}
    assert offline == {(r.sample_id, r.status, r.extraction.value) for r in records}


def test_a_server_that_never_thinks_keeps_its_plain_answers(tmp_path: Path) -> None:
    with running_server(_sim("plain")) as url:
        records = _run(url, tmp_path / "plain")
    assert _pinned(tmp_path / "plain").get("thinking_opened") is False
    assert records and all(r.content and not r.reasoning for r in records)
    assert {r.status for r in records} <= {"ok", "answer_truncated"}


def test_a_stream_that_drops_the_closing_marker_is_refused_naming_the_flag(tmp_path: Path) -> None:
    """vLLM's qwen3 parser <= 0.16 under a template that opens the block: `A</think>B` whole, `AB` streamed."""
    with running_server(_sim("vllm-qwen3-leak")) as url:
        with pytest.raises(InputError, match=r"--thinking-opened.*--no-stream"):
            _run(url, tmp_path / "streamed")
        records = _run(url, tmp_path / "whole", stream=False)
    assert not (tmp_path / "streamed" / "records.jsonl").exists() or not _lines(tmp_path / "streamed")
    assert _pinned(tmp_path / "whole")["thinking_opened"] is True
    inside = [r for r in records if r.finish_reason == "length" and r.reasoning_source != "inline:close-only"]
    assert inside and all(r.status == "reasoning_truncated" for r in inside)


def _lines(path: Path) -> list[str]:
    return (path / "records.jsonl").read_text().splitlines()


@pytest.mark.parametrize(
    ("stream", "whole", "streamed", "opened"),
    [
        (True, "inline:close-only", "inline:close-only", True),
        (False, "inline:close-only", "inline:close-only", True),
        (True, "field:reasoning", "field:reasoning", False),
        (True, "none", "none", False),
        (False, "inline:close-only", "none", True),
    ],
)
def test_what_the_probe_saw_where_the_run_reads_decides(
    stream: bool, whole: str, streamed: str, opened: bool, tmp_path: Path
) -> None:
    found = ProbeResult(
        base_url="http://x/v1", model="m", simulated=True, reasoning_source=whole, stream_reasoning_source=streamed
    )
    config = RunConfig(base_url="http://x/v1", model="m", tasks=["gsm8k"], out=tmp_path, stream=stream)
    assert resolve_opened(config, found)[0] is opened
    assert resolve_opened(config.model_copy(update={"thinking_opened": True}), found) == (False, None)


def test_the_users_no_thinking_opened_wins_and_the_note_says_what_the_reading_rests_on(tmp_path: Path) -> None:
    def probe(whole: str, streamed: str) -> ProbeResult:
        return ProbeResult(
            base_url="http://x/v1", model="m", simulated=True, reasoning_source=whole, stream_reasoning_source=streamed
        )

    both = probe("inline:close-only", "inline:close-only")
    config = RunConfig(base_url="http://x/v1", model="m", tasks=["gsm8k"], out=tmp_path, stream=True)
    opened, note = resolve_opened(config, both)
    assert opened is True and note is not None and "both probe replies (streamed and not)" in note
    said_no = RunConfig(base_url="http://x/v1", model="m", tasks=["gsm8k"], out=tmp_path, thinking_opened=False)
    assert resolve_opened(said_no, both) == (False, None)  # --no-thinking-opened: the user's word, not the probe's
    opened, note = resolve_opened(config, probe("none", "inline:close-only"))
    assert opened is True and note is not None and "the probe's one streamed reply showed" in note
    opened, note = resolve_opened(config, probe("inline:paired", "inline:close-only"))  # the model's own <think>
    assert opened is False and note is not None and "not applied" in note and "inline:paired" in note
