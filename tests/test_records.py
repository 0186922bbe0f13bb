"""Every file a run writes reads back into its type in qualeval.records, whole, and older files still load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import qualeval
from qualeval.cli.commands import compare_and_write
from qualeval.errors import InputError
from qualeval.records import (
    Comparison,
    FollowupRecord,
    Manifest,
    Record,
    RunSummary,
    Score,
    SentBody,
    SeriesPoint,
    ServerTimings,
)
from qualeval.records.store import RunStore
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.tasks import load_task

TYPES: dict[str, type[BaseModel]] = {
    "records.jsonl": Record,
    "summary.json": RunSummary,
    "manifest.json": Manifest,
    "timeseries.jsonl": SeriesPoint,
    "compare.json": Comparison,
}


def _documents(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.suffix == ".jsonl" else [path.read_text()]


def _given(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _given(v) for k, v in value.items() if v is not None}
    return [_given(v) for v in value] if isinstance(value, list) else value


def test_every_file_a_run_writes_reads_back_into_its_type_whole(tmp_path: Path) -> None:
    sim = SimConfig(
        port=0, tasks=("word_problems",), behaviour=Behaviour(reasoning_tokens=10), latency=Latency(burst=True)
    )
    with running_server(sim) as url:  # with the probe, so the manifest carries its result too
        # compare refuses a run against itself, and runs of repeated samples (each sample would count as an item)
        for out, samples in (("run", 2), ("one", 1), ("again", 1)):
            qualeval.evaluate(
                "sim", "word_problems", base_url=url, out=tmp_path / out, limit=4, samples_per_item=samples
            )
    compare_and_write(tmp_path / "one", tmp_path / "again", tmp_path / "compare", seed=0)
    written = [p for folder in ("run", "compare") for p in sorted((tmp_path / folder).glob("*.json*"))]
    assert {p.name for p in written} == set(TYPES)  # a new file a run writes needs its type here
    for path in written:
        for document in _documents(path):
            typed = TYPES[path.name].model_validate_json(document)
            # nothing dropped, nothing changed: the type holds every key the file has (an absent key and a null
            # are the same value)
            assert _given(json.loads(typed.model_dump_json())) == _given(json.loads(document)), path.name
            if path.name == "records.jsonl":  # a record, its request body included, is written back as it was
                assert typed.model_dump_json() == document
    manifest = Manifest.model_validate_json((tmp_path / "run" / "manifest.json").read_text())
    assert manifest.server is not None and manifest.server.probe is not None and manifest.server.probe.simulated
    assert sorted(r.repeat for r in RunStore(tmp_path / "run").records()) == [0, 0, 0, 0, 1, 1, 1, 1]


# a record line as qualeval wrote it before `attempt` (which of K samples) was renamed `repeat`, so that it could
# not be mistaken for `attempts` (the HTTP tries of the request): the second sample of its item, sent twice
OLD_RECORD = (
    '{"sample_id": "knowledge_qa/test/0", "task": "knowledge_qa", "attempt": 1, "level": "c=1", "warmup": false, '
    '"session": "2026-11-30T15:45:45+00:00", "sent_at": 1796053545.7631702, "retried": ["429"], "final": true, '
    '"request": {"model": "sim", "messages": [{"role": "user", "content": "What is the capital of France?"}], '
    '"max_tokens": 4096, "temperature": 0.0, "stream": true}, '
    '"reasoning": "Okay, let me work through this carefully.", "content": "{\\"answer\\":\\"Paris\\"}", '
    '"reasoning_source": "field:reasoning", "status": "ok", "finish_reason": "stop", '
    '"usage": {"prompt_tokens": 30, "completion_tokens": 216, "reasoning_tokens": 206, "answer_tokens": 10, '
    '"reasoning_estimated": false, "completion_estimated": false}, '
    '"timing": {"first_byte": 1.06, "ttft": 5.54, "first_reasoning": 5.54, "first_content": 63.66, "end": 65.95, '
    '"itl": null, "decode_rate": 3558.97, "queued": 0.007}, "attempts": 2, '
    '"constraint": {"mode": "single", "kind": "json", "style": "structured_outputs", "held": true, "followup": null}, '
    '"extraction": {"value": "Paris", "rung": "constraint", "raw": "Paris"}, '
    '"score": {"correct": true, "detail": "matches \'Paris\'", "f1": 1.0, "measures": null}, "naive_correct": null, '
    '"rescue": null, "rescue_correct": null, "gold": "Paris", "choices": [], "aliases": [], '
    '"meta": {"topic": "capital"}, "error": null, "server_timings": null, "grade": null, "endpoint": null}'
)


def test_a_record_written_before_the_rename_still_loads(tmp_path: Path) -> None:
    record = Record.model_validate_json(OLD_RECORD)
    assert (record.repeat, record.attempts) == (1, 2)  # the sample's index and the HTTP tries, each its own
    written = json.loads(record.model_dump_json())
    assert (written["repeat"], written["attempts"]) == (1, 2) and "attempt" not in written
    assert Record.model_validate(written) == record
    store = RunStore(tmp_path)  # a run written before the rename resumes: what it recorded is not sent again
    store.open(Manifest(fingerprint="f"))
    store.append(OLD_RECORD.encode())
    store.close()
    again = RunStore(tmp_path)
    assert again.open(Manifest(fingerprint="f")) == {("knowledge_qa/test/0", 1, "c=1")}
    again.close()
    assert [(r.repeat, r.attempts) for r in again.records()] == [(1, 2)]
    assert again.records_path.read_bytes().decode() == OLD_RECORD + "\n"  # read, never rewritten


def test_server_timings_keep_the_keys_llama_cpp_sent() -> None:
    """An older build sends no cache_n, a speculative one adds draft_n, a newer one a field of its own."""
    sent = {"prompt_n": 84, "prompt_ms": 292.377, "predicted_n": 47, "predicted_ms": 391.773, "draft_n": 3, "new": 1}
    timings = ServerTimings.model_validate(sent)
    assert (timings.prompt_n, timings.predicted_ms, timings.cache_n) == (84, 391.773, None)
    assert json.loads(timings.model_dump_json()) == sent


def test_a_run_directory_rescores_with_its_task_and_format_files_gone(tmp_path: Path) -> None:
    from qualeval.run.rescoring import rescore

    task = tmp_path / "mine.yaml"
    task.write_text((Path(qualeval.__file__).parents[1] / "tasks" / "word_problems.yaml").read_text())
    fmt = tmp_path / "brackets.yaml"
    fmt.write_text("name: brackets\nstart: '[[THINKING]]'\nend: '[[/THINKING]]'\n")
    sim = SimConfig(port=0, tasks=("word_problems",), latency=Latency(burst=True))
    with running_server(sim) as url:
        run = qualeval.evaluate(
            "sim", str(task), base_url=url, out=tmp_path / "run", limit=3, reasoning_format=[str(fmt)], probe=False
        )
    manifest = RunStore(tmp_path / "run").manifest()
    assert manifest is not None and manifest.config is not None and manifest.config.reasoning_format == [str(fmt)]
    assert manifest.tasks["word_problems"].spec == load_task(str(task)).spec  # the task as its file said
    task.unlink()
    fmt.unlink()
    summary, _ = rescore(tmp_path / "run")  # offline: the manifest holds all it needs
    rescored, first = summary.tasks["word_problems"].summary, run.summary.tasks["word_problems"].summary
    assert summary.rescored and rescored.n == 3 and rescored.correct == first.correct


def test_a_manifest_whose_configuration_does_not_load_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"fingerprint": "f", "config": {"tasks": ["gsm8k"]}}))
    with pytest.raises(InputError, match=r"manifest.json: field 'config' does not load \(--model is needed\)"):
        RunStore(tmp_path).manifest()
    (tmp_path / "manifest.json").write_text(json.dumps({"fingerprint": "f", "tasks": {"t": {"spec": {"x": 1}}}}))
    with pytest.raises(InputError, match=r"field 'tasks\.t\.spec\.name' does not load"):
        RunStore(tmp_path).manifest()


# a record line as qualeval wrote it while the request body was a dict: its keys in the order they were sent, not in
# SentBody's (a server's own keys before reasoning_effort, which SentBody types), an int temperature, a null and a
# list of parts as content, and a follow-up whose body starts with its messages
BODY_RECORD = (
    '{"sample_id":"knowledge_qa/test/0","task":"knowledge_qa","repeat":0,"level":"c=1","warmup":false,'
    '"session":"","sent_at":null,"retried":[],"final":true,"request":{"model":"sim",'
    '"messages":[{"role":"system","content":null},{"role":"user","content":[{"type":"text",'
    '"text":"What is the capital of France?"}]}],"max_tokens":4096,"temperature":0,"seed":7,"stream":true,'
    '"stream_options":{"include_usage":true},"chat_template_kwargs":{"enable_thinking":true},'
    '"thinking_token_budget":512,"reasoning_effort":"low"},"reasoning":"r","content":"Paris",'
    '"reasoning_source":"field:reasoning","status":"ok","finish_reason":"stop","usage":{"prompt_tokens":null,'
    '"completion_tokens":null,"reasoning_tokens":null,"answer_tokens":null,"reasoning_estimated":false,'
    '"completion_estimated":false},"timing":{"first_byte":null,"ttft":null,"first_reasoning":null,'
    '"first_content":null,"end":null,"itl":null,"decode_rate":null,"queued":null},"attempts":1,'
    '"constraint":{"mode":"followup","kind":null,"style":null,"held":null,"valid":null,"agreement":null,'
    '"followup":{"request":{"messages":[{"role":"user","content":"Response: Paris"}],"model":"sim",'
    '"max_tokens":256,"response_format":{"type":"json_object"}},"content":"Paris","status":"ok","error":null,'
    '"timing":{"first_byte":null,"ttft":null,"first_reasoning":null,"first_content":null,"end":null,'
    '"itl":null,"decode_rate":null,"queued":null},"usage":{"prompt_tokens":null,"completion_tokens":null,'
    '"reasoning_tokens":null,"answer_tokens":null,"reasoning_estimated":false,"completion_estimated":false},'
    '"attempts":1}},"extraction":{"value":"Paris","rung":"anchor","raw":null},"score":{"correct":true,'
    '"detail":"","f1":null,"measures":null},"naive_correct":null,"rescue":null,"rescue_correct":null,'
    '"gold":"Paris","choices":[],"aliases":[],"meta":{},"error":null,"server_timings":null,"grade":null,'
    '"endpoint":null}'
)


def test_a_record_written_before_the_body_was_typed_is_written_back_whole() -> None:
    record = Record.model_validate_json(BODY_RECORD)
    assert json.loads(record.model_dump_json()) == json.loads(BODY_RECORD)  # every key and value, none padded in
    body = record.request
    typed = (body.model, body.max_tokens, body.temperature, body.seed, body.reasoning_effort)
    assert typed == ("sim", 4096, 0, 7, "low")
    assert isinstance(body.temperature, int) and body.budget() == 4096  # written back as 0, never 0.0
    assert (body.messages[0].role, body.messages[0].content) == ("system", None)
    assert body.prompt() == str([{"type": "text", "text": "What is the capital of France?"}])
    assert body.model_extra == {"chat_template_kwargs": {"enable_thinking": True}, "thinking_token_budget": 512}
    assert body.model_dump(mode="json") == json.loads(BODY_RECORD)["request"]
    follow = record.constraint.followup
    assert follow is not None and follow.request.prompt() == "Response: Paris"
    assert set(follow.request.model_dump(mode="json")) == {"messages", "model", "max_tokens", "response_format"}
    assert Record.model_validate(json.loads(record.model_dump_json())) == record


def test_a_sent_body_holds_the_keys_that_were_sent_and_no_others() -> None:
    sent = {"model": "m", "messages": [{"role": "user", "content": "q", "name": "u"}], "max_completion_tokens": 9}
    body = SentBody.model_validate(sent)
    assert (
        body.model_dump(mode="json") == sent and json.loads(body.model_dump_json()) == sent
    )  # nothing padded with nulls
    assert (body.budget(), body.prompt(), body.messages[0].model_extra) == (9, "q", {"name": "u"})
    assert body.stream is None and "stream" not in body.model_dump(mode="json")  # unset is not sent, and not written
    assert json.loads(SentBody(model="m", stream=False).model_dump_json()) == {"model": "m", "stream": False}
    assert body.model_copy(update={"seed": 3}).model_dump(mode="json") == {
        **sent,
        "seed": 3,
    }  # a key set afterwards is sent
    assert body.prompt() == "q" and SentBody().prompt() is None and SentBody().budget() is None


def test_offline_scoring_sends_no_body_and_records_an_empty_one() -> None:
    """`qualeval score` sent nothing: `{}`, as it was written before the body was typed, reads and writes back."""
    assert SentBody.model_validate_json("{}").model_dump_json() == "{}" == SentBody().model_dump_json()
    assert json.loads(FollowupRecord().model_dump_json())["request"] == {}


def _shaped_lines(latency: float) -> list[str]:
    """Three of a workload's synthetic prompts placed in a 6000-token context, as qualeval wrote them before
    `scored` and `shape` were a record's own fields: both sat in `meta`, beside the task's values."""
    lines = []
    for i in range(3):
        line = json.loads(OLD_RECORD)
        line["sample_id"] = f"knowledge_qa/test/{i}@6000"
        line["timing"]["ttft"] = latency
        shape = {"prompt_tokens": 90, "template_tokens": 7, "context_tokens": 6000}
        line["meta"] = {"topic": "capital", "scored": False, **shape}
        lines.append(json.dumps(line))
    return lines


def _old_run(root: Path, latency: float) -> Path:
    root.mkdir()
    config = {"tasks": ["knowledge_qa"], "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": str(root)}
    (root / "manifest.json").write_text(json.dumps({"fingerprint": "x", "config": config}))
    (root / "records.jsonl").write_text("".join(line + "\n" for line in _shaped_lines(latency)))
    return root


def test_a_record_that_kept_its_shape_in_meta_loads_it_typed_and_reads_the_same(tmp_path: Path) -> None:
    from qualeval.figures.compare import compare_runs
    from qualeval.records import ContextShaping, Shape, ShapedWorkload, Shaping, WorkloadPrompts
    from qualeval.serving.figures import Served, collect

    record = Record.model_validate_json(_shaped_lines(50.0)[0])
    assert record.meta == {"topic": "capital"}  # the task's own values, and only those
    assert record.scored is False
    assert record.shape == Shape(prompt_tokens=90, template_tokens=7, context_tokens=6000)
    written = json.loads(record.model_dump_json())  # written back in the new layout, compactly
    assert (written["meta"], written["scored"], written["shape"]) == (
        {"topic": "capital"},
        False,
        {"prompt_tokens": 90, "template_tokens": 7, "context_tokens": 6000},
    )
    assert Record.model_validate(written) == record
    # llama-benchy's rule reads the shape as it read meta: the server's 30 tokens are far off the 90 - 7 expected
    assert Served.of(record).benchy_prompt_tokens == 83 and Served.of(record).prompt_tokens == 90
    old = _old_run(tmp_path / "a", latency=50.0)
    records = list(RunStore(old).records())
    assert [r.shape for r in records] == [record.shape] * 3 and not any(r.scored for r in records)
    workload = ShapedWorkload(name="benchy-pp1024-tg1024", style="llama-benchy", prompts=WorkloadPrompts())
    shaping = Shaping(workload=workload, context=ContextShaping(lengths=[6000], depth=0.5))
    figures = collect(records, shaping)
    assert figures is not None and figures.workload is not None and figures.context is not None
    level = figures.workload.levels["c=1"].llama_benchy
    assert level.prompt_tokens is not None and level.prompt_tokens.mean == 83
    assert figures.workload.targets.requests == 3 and figures.workload.targets.prompt_off_target == 0
    at = figures.context.tasks["knowledge_qa"]["6000"]
    assert at.prompt_tokens is not None and at.prompt_tokens["mean"] == 90
    # compared on speed alone: a synthetic prompt has no right answer, in the old layout as in the new
    compared = compare_runs(old, _old_run(tmp_path / "b", latency=100.0)).tasks["knowledge_qa"]
    assert not compared.scored and compared.accuracy_a is None and compared.ratios["ttft"].ratio == 2.0


@pytest.mark.parametrize("status", ["transport_error", "unknown_question"])
def test_a_record_with_no_answer_of_the_models_is_neither_right_nor_wrong_in_the_frame(status: str) -> None:
    fields = dict(sample_id="t/test/0", task="t", request={}, reasoning="", content="", reasoning_source="none")
    record = Record.model_validate(
        {
            **fields,
            "status": status,
            "finish_reason": None,
            "usage": {},
            "timing": {},
            "attempts": 1,
            "constraint": {"mode": "off"},
            "extraction": {"value": None, "rung": "none"},
            "score": {"correct": False},
            "gold": "Paris",
            "meta": {},
        }
    )
    assert record.frame_row()["correct"] is None
    answered = Record.model_validate({**record.model_dump(), "status": "ok", "score": {"correct": False}})
    assert answered.frame_row()["correct"] is False


def _line(**changes: Any) -> str:
    line = json.loads(OLD_RECORD)
    line.update(changes)
    return json.dumps(line)


def test_a_record_in_no_accuracy_stores_correct_null_and_an_older_false_reads_as_it() -> None:
    """A summer of `score.correct` in records.jsonl must not count an endpoint error or a synthetic prompt as a
    wrong answer: null there, in every record written, older runs' false read as null; every figure counts the
    same, since none counted them."""
    failed = _line(status="transport_error", score={"correct": False, "detail": "not scored: transport_error"})
    synthetic = _line(scored=False, score={"correct": False, "detail": "not scored: synthetic"})
    wrong = _line(score={"correct": False, "detail": "no alias matches"})
    for line, correct in ((failed, None), (synthetic, None), (wrong, False)):
        record = Record.model_validate_json(line)
        assert record.score.correct is correct and record.right is False
        assert json.loads(record.model_dump_json())["score"]["correct"] is correct
        assert record.outcome().correct is False and record.timed().correct is False  # the figures' views
    rejudged = Record.model_validate_json(failed).model_copy(update={"score": Score(correct=False)})  # a rescore's
    assert json.loads(rejudged.model_dump_json())["score"]["correct"] is None


def test_a_run_written_with_false_for_its_endpoint_errors_compares_and_summarises_the_same(tmp_path: Path) -> None:
    from qualeval.figures.compare import compare_runs

    def run(name: str, lines: list[str]) -> Path:
        root = tmp_path / name
        root.mkdir()
        config = {"tasks": ["knowledge_qa"], "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": str(root)}
        (root / "manifest.json").write_text(json.dumps({"fingerprint": "x", "config": config}))
        (root / "records.jsonl").write_text("".join(line + "\n" for line in lines))
        return root

    right = {"correct": True, "detail": ""}
    failed = {"correct": False, "detail": "not scored: transport_error"}
    a = [_line(sample_id=f"knowledge_qa/test/{i}", score=right) for i in range(3)]
    b = [*a[:2], _line(sample_id="knowledge_qa/test/2", status="transport_error", score=failed)]
    compared = compare_runs(run("a", a), run("b", b)).tasks["knowledge_qa"]
    assert (compared.accuracy_a, compared.accuracy_b, compared.a_right_b_wrong) == (1.0, 1.0, 0)
