"""What the protocol around a question does to the answer, on a reference server that reacts to it as real models
were seen to: a constraint from the first token on a prompt that asks for working costs accuracy, and a follow-up
that shows a copyable placeholder gets it copied. The default protocol avoids both: live accuracy equals the
accuracy of the same responses' content read alone."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from qualeval.reasoning.completion import Completion
from qualeval.records import ClientConfig, Record, RunConfig
from qualeval.records.store import RunStore
from qualeval.run.driver import execute
from qualeval.run.levels import RequestSettings
from qualeval.run.pipeline import run_one
from qualeval.scoring.followup import followup_prompt
from qualeval.scoring.verdict import decide
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.sim.protocol import restated
from qualeval.tasks import build_samples, load_task
from qualeval.tasks.sample import Sample
from qualeval.wire.client import ChatClient
from qualeval.wire.models import ChatRequest, Message

PLACEHOLDER = re.compile(r"<[a-z_ ]+>|\{[a-z_]+\}")


def _sim(**behaviour: float) -> SimConfig:
    return SimConfig(
        port=0,
        tasks=("word_problems", "knowledge_qa"),
        behaviour=Behaviour(reasoning_tokens=20, accuracy=0.9, trap_rate=0.0, **behaviour),  # type: ignore[arg-type]
        latency=Latency(burst=True),
    )


def _run(url: str, out: Path, task: str, **options: object) -> list[Record]:
    config = RunConfig(
        base_url=url,
        model="sim",
        tasks=[task],
        out=out,
        warmup=0,
        concurrency=[8],
        **options,  # type: ignore[arg-type]
    )
    asyncio.run(execute(config))
    return list(RunStore(out).records())


def _content_only(records: list[Record], task: str) -> float:
    """The accuracy of the same responses' content read by the ladder alone, as `qualeval score` reads it."""
    loaded = load_task(task)
    right = 0
    for r in records:
        sample = Sample(id=r.sample_id, task=r.task, messages=(), gold=r.gold, aliases=r.aliases, choices=r.choices)
        done = Completion(content=r.content, reasoning=r.reasoning, status=r.status)  # type: ignore[arg-type]
        right += decide(loaded, sample, done).score.correct
    return right / len(records)


def _accuracy(records: list[Record]) -> float:
    return sum(r.score.correct for r in records) / len(records)


def test_a_constraint_from_the_first_token_costs_the_working_a_prompt_asks_for() -> None:
    """The harm exists on this server: word_problems asks for steps; with thinking off a number regex from the
    first token leaves none, and accuracy falls."""
    task = load_task("word_problems")
    samples = build_samples(task)
    with running_server(_sim(working_harm=0.6)) as url:
        off = RequestSettings(thinking=False)

        async def go(mode: str) -> list[Record]:  # run_one takes the mode as given: no protection from harm
            config = ClientConfig(base_url=url, api_key=None, thinking_switch="chat_template_kwargs")
            async with ChatClient(config) as c:
                return list(
                    await asyncio.gather(
                        *(
                            run_one(c, task, s, model="sim", mode=mode, style="structured_outputs", settings=off)  # type: ignore[arg-type]
                            for s in samples
                        )
                    )
                )

        free, forced = asyncio.run(go("off")), asyncio.run(go("single"))
    assert all(r.extraction.rung == "constraint" for r in forced if r.content.strip())
    assert _accuracy(forced) <= _accuracy(free) - 0.3


def test_without_a_reasoning_channel_the_default_keeps_the_working(tmp_path: Path) -> None:
    """The same server, thinking off, --constraint auto: word_problems is read from its content (and confirmed by
    a follow-up), so live accuracy is the content-only accuracy and no harm is done."""
    with running_server(_sim(working_harm=0.6)) as url:
        records = _run(url, tmp_path / "auto", "word_problems", thinking=False, thinking_switch="chat_template_kwargs")
        free = _run(url, tmp_path / "off", "word_problems", thinking=False, thinking_switch="chat_template_kwargs",
                    constraint="off")  # fmt: skip
    assert {r.constraint.mode for r in records} == {"followup"}
    assert "structured_outputs" not in records[0].request.model_dump(
        mode="json"
    )  # the main request went out unconstrained
    assert _accuracy(records) == _content_only(records, "word_problems") == _accuracy(free)


def test_a_copyable_placeholder_is_copied_but_never_reaches_the_score(tmp_path: Path) -> None:
    """knowledge_qa's prompt says 'Answer: <answer>'. Asked inside the conversation for its final answer, this
    server copies the placeholder back every time; the follow-up qualeval sends shows none, and what it gets back
    agrees with the content."""
    sample = build_samples(load_task("knowledge_qa"), limit=1)[0]
    assert PLACEHOLDER.search(sample.messages[-1].content)  # the trap is there
    old_style = (
        *sample.messages,
        Message(role="assistant", content="Answer: Paris"),
        Message(role="user", content="Now give only your final answer, with nothing else."),
    )
    with running_server(_sim(placeholder_copy=1.0)) as url:

        async def ask() -> str:
            async with ChatClient(ClientConfig(base_url=url, api_key=None)) as c:
                got = await c.chat(ChatRequest(model="sim", messages=old_style, thinking=False))
                return got.completion.content

        copied = asyncio.run(ask())
        records = _run(url, tmp_path / "run", "knowledge_qa", constraint="followup",
                       constraint_style="structured_outputs", limit=40)  # fmt: skip
    assert PLACEHOLDER.search(copied), copied
    for r in records:
        assert r.constraint.followup is not None
        shown = r.constraint.followup.request.messages[0].content
        assert not PLACEHOLDER.search(shown), shown
    answered = [r for r in records if r.content.strip()]
    assert {r.constraint.agreement for r in answered} == {"agrees"}
    assert _accuracy(records) == _content_only(records, "knowledge_qa")


def test_the_followup_prompt_shows_the_question_the_options_and_the_response_only() -> None:
    mmlu_like = Sample(
        id="x",
        task="t",
        messages=(Message(role="user", content='Q?\n\nA. x\nB. y\n\nAnswer as "Answer: X".'),),
        question="Which one?",
        gold="B",
        choices=("red", "blue"),
    )
    text = followup_prompt(mmlu_like, "I think it is blue, so B.", load_task("mmlu:anatomy").spec.answer)
    assert (
        "Question:\nWhich one?" in text and "A. red\nB. blue" in text and "Response:\nI think it is blue, so B." in text
    )
    assert "Answer as" not in text and "letter of the option" in text
    assert restated(text) is None  # the simulated model finds no answer line of its own kind in this response


def test_a_template_that_opens_the_block_does_not_turn_the_runs_probe_against_it(tmp_path: Path) -> None:
    """--thinking-opened tells the splitter the template opens the thinking block. The probe reads the endpoint on
    its own (close-only blocks included), as `qualeval probe` does: told the flag, it read every answer without a
    block as unfinished thinking, found no constraint enforced and no thinking switch working."""
    sim = SimConfig(flavour="think-close-only", port=0, tasks=("knowledge_qa",), latency=Latency(burst=True))
    with running_server(sim) as url:
        records = _run(url, tmp_path / "off", "knowledge_qa", thinking_opened=True, thinking=False, limit=4)
        on = _run(url, tmp_path / "on", "knowledge_qa", thinking_opened=True, limit=4)
    manifest = json.loads((tmp_path / "off" / "manifest.json").read_text())
    assert manifest["pinned"]["thinking_switch"] == "chat_template_kwargs"  # the switch the probe saw work
    assert manifest["pinned"]["constraint"] == "followup"  # response_format, found enforced
    assert all(r.status == "ok" and not r.reasoning for r in records)  # thinking off: an answer, no open block
    assert all(r.reasoning_source == "inline:close-only" and r.reasoning for r in on if r.status == "ok")


def test_a_harmony_followup_is_split_like_the_main_answer(tmp_path: Path) -> None:
    """gpt-oss answers the follow-up (thinking off) in its channels too: `<|channel|>final<|message|>{"answer":23}`
    is split as the main answer is, so the constraint holds where it agrees, rather than reading as broken."""
    sim = SimConfig(flavour="harmony", port=0, tasks=("word_problems",), latency=Latency(burst=True),
                    behaviour=Behaviour(reasoning_tokens=20, accuracy=0.9, trap_rate=0.0))  # fmt: skip
    with running_server(sim) as url:
        records = _run(url, tmp_path / "run", "word_problems", constraint="followup", limit=6)
    followed = [r for r in records if r.constraint.followup is not None]
    assert followed and all("<|" not in r.constraint.followup.content for r in followed)  # type: ignore[union-attr]
    assert {(r.constraint.agreement, r.constraint.held) for r in followed} == {("agrees", True)}
