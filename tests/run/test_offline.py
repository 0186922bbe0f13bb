"""`qualeval score`: responses from elsewhere, judged offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.records import RunSummary
from qualeval.run.offline import ReadOptions, score_file
from qualeval.tasks import load_task
from tests.conftest import GSM8K, SHARED, needs_gsm8k


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@needs_gsm8k
def test_scoring_all_of_gsm8k_through_the_cli(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in GSM8K.read_text().splitlines()]
    responses = []
    for i, row in enumerate(rows):
        gold = row["answer"].rsplit("####", 1)[1].strip()
        wrong = i % 4 == 0
        answer = str(int(gold.replace(",", "")) + 1) if wrong else gold
        responses.append(
            {
                "id": f"gsm8k/test/{i}",
                "reasoning": f"maybe {i * 7} or 3",
                "finish_reason": "stop",
                "content": f"So it is {answer}.\n#### {answer}",
            }
        )
    path = write(tmp_path / "r.jsonl", responses)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "qualeval",
            "score",
            "--task",
            "gsm8k",
            "--responses",
            str(path),
            "--data",
            str(SHARED / "gsm8k"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    items = [json.loads(line) for line in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    assert len(items) == 1319 and set(items[0]) >= {"id", "status", "extracted", "method", "correct"}
    written = (tmp_path / "out" / "summary.json").read_text()
    assert list(RunSummary.model_validate_json(written).tasks) == ["gsm8k"]  # the shape a run writes
    summary = json.loads(written)["tasks"]["gsm8k"]["summary"]
    assert summary["correct"] == 1319 - len(range(0, 1319, 4))
    assert summary["rungs"] == {"anchor": 1319}


def test_target_overrides_the_gold_and_needs_no_dataset(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.jsonl",
        [
            {"id": "a", "content": "<think>13 then 9</think>\n\nThe answer is 18.", "target": "18"},
            {"id": "b", "content": "", "reasoning": "thinking about 7", "finish_reason": "length", "target": 7},
            {"id": "c", "content": "#### 1,800", "target": "1800"},
        ],
    )
    items, summary = score_file(load_task("gsm8k"), path)
    assert [(i.status, i.extracted, i.correct) for i in items] == [
        ("ok", "18", True),
        ("reasoning_truncated", None, False),
        ("ok", "1800", True),
    ]
    assert summary.statuses == {"ok": 2, "reasoning_truncated": 1}
    _, rescued = score_file(load_task("gsm8k"), path, rescue=True)
    assert (rescued.rescued, rescued.rescue_correct, rescued.correct) == (1, 1, 2)


@needs_gsm8k
def test_short_ids_and_the_lm_eval_log_format(tmp_path: Path) -> None:
    short = write(tmp_path / "short.jsonl", [{"id": "0", "content": "#### 18"}, {"id": 1, "content": "#### 3"}])
    items, _ = score_file(load_task("gsm8k"), short, data=SHARED / "gsm8k")
    assert [i.id for i in items] == ["gsm8k/test/0", "gsm8k/test/1"] and all(i.correct for i in items)
    doc = json.loads(GSM8K.read_text().splitlines()[0])
    log = write(
        tmp_path / "samples_gsm8k.jsonl",
        [
            {
                "doc_id": 0,
                "doc": doc,
                "target": doc["answer"],
                "arguments": [["Question: ...", {}]],
                "resps": [["Janet has 16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\n#### 18"]],
                "filtered_resps": ["18"],
            },
            {
                "doc_id": 5,
                "doc": doc,
                "target": doc["answer"],
                "resps": [["She uses 3 and 4 eggs: 7 total"]],
                "filtered_resps": ["7"],
            },
        ],
    )
    items, _ = score_file(load_task("gsm8k"), log, read=ReadOptions(fmt="lm-eval"))
    assert [(i.id, i.correct, i.method) for i in items] == [
        ("gsm8k/test/0", True, "anchor"),
        ("gsm8k/test/5", False, "last"),
    ]


@pytest.mark.parametrize(
    ("lines", "fmt", "words"),
    [
        (['{"id": "a", "content": "x", "target": "1"}', "not json"], "qualeval", "r.jsonl:2: not valid JSON"),
        (['{"content": "x"}'], "qualeval", "r.jsonl:1: no id on the line: none of custom_id, id, sample_id, doc_id"),
        (['{"id": "a", "content": 5, "target": "1"}'], "qualeval", "r.jsonl:1: field 'content'"),
        (['{"id": "a", "output": ["x"], "target": "1"}'], "qualeval", "r.jsonl:1: field 'output'"),
        (['{"idx": {"n": 1}, "output": "x", "target": "1"}'], "qualeval", "r.jsonl:1: field 'idx'"),
        (
            ['{"id": "a", "content": "1", "target": "1"}', '{"id": "a", "content": "1", "target": "1"}'],
            "qualeval",
            "r.jsonl:2: id 'a' appears twice (first on line 1)",
        ),
        (
            ['{"id": 1, "answer": "18", "question": "q"}'],
            "qualeval",
            "r.jsonl:1: no response text on the line: none of content, output, response, completion, generated_text, "
            "generation, text (the line has answer, id, question)",
        ),
        (
            ['{"id": "a", "output": "1", "target": "1"}', '{"id": "b", "content": "2", "target": "2"}'],
            "qualeval",
            "r.jsonl:2: no 'output' field (the file's response text, as on its first line); a response with no text "
            'is "output": null',
        ),
        (
            ['{"doc_id": "a", "output": "1", "target": "1"}', '{"id": "b", "output": "2", "target": "2"}'],
            "qualeval",
            "r.jsonl:2: no 'doc_id' field (the file's id, as on its first line)",
        ),
        (["[1]"], "qualeval", "r.jsonl:1: each record of the JSON array must be a JSON object"),
        ([], "qualeval", "r.jsonl: no responses in the file"),
        (['{"id": "a", "content": "x"}'], "lm-eval", "r.jsonl:1: not an lm-eval sample log line"),
    ],
)
def test_bad_response_files(tmp_path: Path, lines: list[str], fmt: str, words: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        score_file(load_task("knowledge_qa"), path, read=ReadOptions(fmt=fmt))  # type: ignore[arg-type]
    assert words in str(err.value)


def test_unknown_id_names_the_line_and_the_id_shape(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", [{"id": "knowledge_qa/test/9999", "content": "Paris"}])
    with pytest.raises(
        InputError,
        match=r"r.jsonl:1: id 'knowledge_qa/test/9999' is not a sample of task "
        r"knowledge_qa \(ids look like 'knowledge_qa/test/0'\)",
    ):
        score_file(load_task("knowledge_qa"), path)


def test_score_cli_errors(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "qualeval",
            "score",
            "--task",
            "gsm8k",
            "--responses",
            str(tmp_path / "absent.jsonl"),
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "absent.jsonl: cannot read responses" in done.stderr
    assert "Traceback" not in done.stderr


def score_cli(*args: str) -> tuple[int, str]:
    """`qualeval score` in process: exit code and everything it printed."""
    from typer.testing import CliRunner

    from qualeval.cli import app

    result = CliRunner().invoke(app, ["score", *args])
    return result.exit_code, result.output


def test_a_choice_task_with_no_choices_anywhere_is_an_error_not_zero_percent(tmp_path: Path) -> None:
    task = tmp_path / "mc.yaml"
    task.write_text(
        "name: mc\nsamples: [{q: x, options: [a, b], answer: A}]\ndoc_to_text: '{{ q }}'\ndoc_to_choice: options\n"
        "answer: {type: choice}\nscorer: choice\n"
    )
    bare = write(tmp_path / "r.jsonl", [{"id": "1", "content": "The answer is (B).", "target": "B"}])
    code, out = score_cli("--task", str(task), "--responses", str(bare), "--out", str(tmp_path / "o"))
    assert code == 2 and "r.jsonl:1: task mc is multiple choice but item '1' has no choices" in out
    assert "Traceback" not in out
    given = write(
        tmp_path / "c.jsonl",
        [
            {"id": "1", "content": "The answer is (B).", "target": "B", "choices": ["cats", "dogs"]},
            {"id": "2", "content": "I pick dogs.\n\nAnswer: A", "target": "B", "choices": ["cats", "dogs"]},
        ],
    )
    items, summary = score_file(load_task(str(task)), given)
    assert [(i.extracted, i.correct) for i in items] == [("B", True), ("A", False)] and summary.accuracy == 0.5


def test_choices_come_from_the_data_when_the_line_gives_only_the_target(tmp_path: Path) -> None:
    task = tmp_path / "mc.yaml"
    task.write_text(
        "name: mc\nsamples: [{q: x, options: [red, green, blue], answer: C}]\ndoc_to_text: '{{ q }}'\n"
        "doc_to_choice: options\nanswer: {type: choice}\nscorer: choice\n"
    )
    data = write(tmp_path / "data.jsonl", [{"q": "sky?", "options": ["red", "green", "blue"], "answer": "C"}])
    lines = write(tmp_path / "r.jsonl", [{"id": "0", "content": "Answer: (C)", "target": "C"}])
    items, _ = score_file(load_task(str(task)), lines, data=data)
    assert (items[0].extracted, items[0].correct) == ("C", True)


def test_offline_split_follows_the_live_rules(tmp_path: Path) -> None:
    lines = write(
        tmp_path / "r.jsonl",
        [
            {"id": "a", "content": "<think>16 - 3 - 4 = 9 and 9 * 2", "target": "18"},  # no finish reason
            {"id": "b", "content": "9 eggs at $2 each, 21 in all?</think>\n\n#### 18", "target": "18"},
            {"id": "c", "content": "[[THINKING]] 7 or 99 [[/THINKING]] Answer: 18", "target": "18"},
        ],
    )
    items, _ = score_file(load_task("gsm8k"), lines)
    assert items[0].status == "reasoning_truncated"  # cut inside the thinking, not "empty"
    fmt = tmp_path / "brackets.yaml"
    fmt.write_text("name: brackets\nstart: '[[THINKING]]'\nend: '[[/THINKING]]'\n")
    code, out = score_cli(
        "--task", "gsm8k", "--responses", str(lines), "--out", str(tmp_path / "o"),
        "--thinking-opened", "--reasoning-format", str(fmt),
    )  # fmt: skip
    assert code == 0, out
    rows = [json.loads(line) for line in (tmp_path / "o" / "items.jsonl").read_text().splitlines()]
    assert [(r["status"], r["extracted"]) for r in rows] == [
        ("reasoning_truncated", None),  # the template opened the block: all of it is reasoning
        ("ok", "18"),
        ("ok", "18"),
    ]
    assert (tmp_path / "o" / "report.html").stat().st_size > 0 and (tmp_path / "o" / "report.md").exists()
    code, out = score_cli("--task", "gsm8k", "--responses", str(lines), "--out", str(tmp_path / "p"), "--no-thinking")
    rows = [json.loads(line) for line in (tmp_path / "p" / "items.jsonl").read_text().splitlines()]
    assert code == 0 and rows[1]["extracted"] == "18" and rows[0]["status"] == "ok"


def test_score_with_a_model_judge_on_the_reference_server(tmp_path: Path) -> None:
    from qualeval.sim import Latency, SimConfig, running_server

    lines = write(
        tmp_path / "r.jsonl",
        [
            {"id": "1", "content": "Answer: da Vinci, Leonardo", "target": "Leonardo da Vinci"},
            {"id": "2", "content": "Answer: Vermeer", "target": "Rembrandt"},
            {"id": "3", "content": "Answer: Picasso", "target": "Picasso"},
        ],
    )
    with running_server(SimConfig(port=0, latency=Latency(burst=True))) as url:
        code, out = score_cli(
            "--task", "knowledge_qa", "--responses", str(lines), "--out", str(tmp_path / "o"),
            "--judge-base-url", url, "--judge-model", "sim",
        )  # fmt: skip
    assert code == 0, out
    rows = [json.loads(line) for line in (tmp_path / "o" / "items.jsonl").read_text().splitlines()]
    assert [(r["correct"], r["method"], (r["grade"] or {}).get("verdict")) for r in rows] == [
        (True, "judge", "correct"),
        (False, "anchor", "incorrect"),
        (True, "anchor", None),
    ]
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["tasks"]["knowledge_qa"]["summary"]
    assert summary["accuracy_without_judge"] == pytest.approx(1 / 3)
    assert (
        "a model judge accepted 1 answers the rules rejected; by the rules alone, accuracy 33.3%"
        in (tmp_path / "o" / "report.md").read_text()
    )
    assert "by the rules alone (a model judge accepted 1)" in out
    code, out = score_cli("--task", "knowledge_qa", "--responses", str(lines), "--out", str(tmp_path / "x"),
                          "--judge-model", "sim")  # fmt: skip
    assert code == 2 and "--judge-base-url and --judge-model go together" in out


@pytest.mark.parametrize(
    ("id_field", "text_field"),
    [("id", "output"), ("idx", "response"), ("doc_id", "completion"), ("question_id", "generated_text")],
)
def test_the_text_and_id_under_other_tools_names_are_read_and_said(
    tmp_path: Path, id_field: str, text_field: str
) -> None:
    lines = write(
        tmp_path / "r.jsonl",
        [
            {id_field: "a", text_field: "So 18.\n#### 18", "target": "18"},
            {id_field: "b", text_field: "#### 5", "target": "7"},
            {id_field: "c", text_field: None, "target": "7"},  # null: the model wrote nothing, said so
        ],
    )
    code, out = score_cli("--task", "gsm8k", "--responses", str(lines), "--out", str(tmp_path / "o"))
    assert code == 0, out
    rows = [json.loads(line) for line in (tmp_path / "o" / "items.jsonl").read_text().splitlines()]
    assert [(r["id"], r["status"], r["correct"]) for r in rows] == [
        ("a", "ok", True),
        ("b", "ok", False),
        ("c", "empty_content", False),
    ]
    said = " ".join(out.split())
    assert f"note: r.jsonl: read the response text from '{text_field}' and the ids from '{id_field}'" in said


def test_content_is_read_before_the_other_names(tmp_path: Path) -> None:
    # a line carrying qualeval's own field and another tool's: the documented one wins, and the note says so
    lines = write(tmp_path / "r.jsonl", [{"id": "a", "content": "#### 18", "output": "#### 3", "target": "18"}])
    said: list[str] = []
    items, _ = score_file(load_task("gsm8k"), lines, note=said.append)
    assert items[0].correct and said == ["r.jsonl: read the response text from 'content' and the ids from 'id'"]


@needs_gsm8k
def test_ids_of_another_tool_match_by_their_number_only_if_the_question_agrees(tmp_path: Path) -> None:
    docs = [json.loads(line) for line in GSM8K.read_text().splitlines()[:2]]
    right = write(
        tmp_path / "r.jsonl",
        [{"id": f"gsm8k-main-test-#{i}", "question": d["question"], "output": "#### 18"} for i, d in enumerate(docs)],
    )
    said: list[str] = []
    items, _ = score_file(load_task("gsm8k"), right, data=SHARED / "gsm8k", note=said.append)
    assert [(i.id, i.correct) for i in items] == [("gsm8k/test/0", True), ("gsm8k/test/1", False)]
    assert said[0].endswith("ids matched to samples by their number ('gsm8k-main-test-#0' is gsm8k/test/0)")
    swapped = write(
        tmp_path / "s.jsonl", [{"id": "gsm8k-main-test-#1", "question": docs[0]["question"], "output": "1"}]
    )
    with pytest.raises(InputError, match=r"s.jsonl:1: id 'gsm8k-main-test-#1' ends in the number of sample "):
        score_file(load_task("gsm8k"), swapped, data=SHARED / "gsm8k")


ZEROEVAL = SHARED / "model_outputs" / "zeroeval_gsm"


@pytest.mark.skipif(not (ZEROEVAL / "gemma-2-9b-it.jsonl").exists() or not GSM8K.exists(), reason="data missing")
def test_a_real_zeroeval_file_scores_its_published_accuracy(tmp_path: Path) -> None:
    """ZeroEval's own GSM8K outputs, as published: text under `output`, ids `gsm8k-main-test-#N`. Before the text
    was looked for under other names this was 0/1319 with exit 0."""
    code, out = score_cli(
        "--task", "gsm8k", "--responses", str(ZEROEVAL / "gemma-2-9b-it.jsonl"), "--data", f"gsm8k={SHARED / 'gsm8k'}",
        "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert code == 0, out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["tasks"]["gsm8k"]["summary"]
    published = next(
        r for r in json.loads((ZEROEVAL / "gsm.summary.json").read_text()) if r["Model"] == "gemma-2-9b-it"
    )
    assert (summary["n"], summary["correct"]) == (1319, 1153)  # ZeroEval's own parser: 87.41%
    assert round(100 * summary["correct"] / summary["n"], 2) == float(published["Acc"])
    assert "read the response text from 'output' and the ids from 'id'" in " ".join(out.split())


def test_the_offline_report_leaves_out_what_was_never_timed(tmp_path: Path) -> None:
    """No request was sent, so no speed, load level or speed-beside-quality section: one line says why."""
    from qualeval.report.markdown import OFFLINE

    lines = write(
        tmp_path / "r.jsonl",
        [
            {"id": "a", "content": "The answer is 18.", "target": "18"},
            {"id": "b", "content": "", "reasoning": "thinking about 7", "finish_reason": "length", "target": 7},
        ],
    )
    code, out = score_cli("--task", "gsm8k", "--responses", str(lines), "--out", str(tmp_path / "o"))
    assert code == 0, out
    md = (tmp_path / "o" / "report.md").read_text()
    assert md.count(OFFLINE) == 1 and "## Accuracy" in md and "reasoning_truncated 1" in md
    for section in ("## Speed", "by load level", "speed and quality together", "## Serving", "TTFT"):
        assert section not in md
    assert "truncated: 0" not in md  # the one cut off is in the statuses, not a zero that was never measured
    html = (tmp_path / "o" / "report.html").read_text()
    assert html.count(OFFLINE) == 1 and 'id="accuracy"' in html and 'id="items"' in html
    for section in ('id="speed"', 'id="load"', 'id="linked"', 'class="serving"', "<h2>Breakdowns</h2>"):
        assert section not in html
    assert f"responses from <b>{lines}</b>" in html and "started ?" not in html


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:  # a port nothing listens on once the socket closes
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_model_judge_is_warned_of_not_silent(tmp_path: Path) -> None:
    # the hunt: exit 0, no warning, only items.jsonl said the judge could not be reached
    lines = write(
        tmp_path / "r.jsonl", [{"id": "1", "content": "Answer: da Vinci, Leonardo", "target": "Leonardo da Vinci"}]
    )
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code, out = score_cli(
        "--task", "knowledge_qa", "--responses", str(lines), "--out", str(tmp_path / "o"),
        "--judge-base-url", url, "--judge-model", "sim",
    )  # fmt: skip
    assert code == 0, out
    warned = [line for line in out.splitlines() if line.startswith("warning: the model judge sim")]
    assert len(warned) == 1 and f"at {url} failed 1 of 1 grades" in warned[0]
