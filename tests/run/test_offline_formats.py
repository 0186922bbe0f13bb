"""`qualeval score` on other tools' files: which sample each line answers, OpenAI Batch output, lm-eval logs with
several filters, CSV, and lines that hold two candidate texts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qualeval.errors import InputError
from qualeval.run.offline import ReadOptions, score_file, score_lines
from qualeval.tasks import load_task
from tests.conftest import DATA, GSM8K, SHARED, needs_gsm8k

OFFLINE = DATA / "offline"


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def score_cli(*args: str) -> tuple[int, str, str]:
    """`qualeval score` in process: exit code, stdout and stderr."""
    from qualeval.cli import app

    result = CliRunner().invoke(app, ["score", *args])
    return result.exit_code, result.stdout, result.stderr


def test_an_id_whose_digits_run_into_letters_is_refused_not_matched_by_its_last_digit(tmp_path: Path) -> None:
    # the file: OpenAI Batch request ids became knowledge_qa/test/6, /2...: right answers scored 0%, exit 0
    rows = [{"id": "batch_req_7d0c2f1c6", "response": "Answer: Paris"}, {"id": "batch_req_c2d4b7a2", "response": "x"}]
    path = write(tmp_path / "r.jsonl", rows)
    code, out, err = score_cli("--task", "knowledge_qa", "--responses", str(path), "--out", str(tmp_path / "o"))
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert "r.jsonl:1: id 'batch_req_7d0c2f1c6' is not a sample of task knowledge_qa" in " ".join(err.split())
    for match_by in ("id", "number"):  # no number of its own, even when told to match by number
        with pytest.raises(InputError, match="id 'batch_req_7d0c2f1c6' is not a sample"):
            score_file(load_task("knowledge_qa"), path, read=ReadOptions(match_by=match_by))
    flattened = [{**row, "custom_id": f"knowledge_qa/test/{n}"} for n, row in enumerate(rows)]  # the user's own ids
    items, _ = score_file(load_task("knowledge_qa"), write(tmp_path / "f.jsonl", flattened))
    assert [(i.id, i.correct) for i in items] == [("knowledge_qa/test/0", True), ("knowledge_qa/test/1", False)]


def test_an_id_ending_in_a_number_names_that_sample_only_when_the_user_says_so(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", [{"id": "request-1", "output": "Answer: Tokyo"}])
    with pytest.raises(InputError, match=r"r.jsonl:1: id 'request-1' is not an id of task knowledge_qa.*--match-by"):
        score_file(load_task("knowledge_qa"), path)
    said: list[str] = []
    items, _ = score_file(load_task("knowledge_qa"), path, read=ReadOptions(match_by="number"), note=said.append)
    assert [(i.id, i.correct) for i in items] == [("knowledge_qa/test/1", True)]
    assert "ids matched to samples by their number ('request-1' is knowledge_qa/test/1)" in said[0]


@pytest.mark.parametrize("key", ["3", 3, "knowledge_qa/test/3", "KNOWLEDGE_QA-3"])
def test_ids_that_plainly_are_the_samples_number_match_without_being_told(tmp_path: Path, key: object) -> None:
    path = write(tmp_path / "r.jsonl", [{"id": key, "content": "Answer: Ottawa"}])
    items, _ = score_file(load_task("knowledge_qa"), path)
    assert [(i.id, i.correct) for i in items] == [("knowledge_qa/test/3", True)]


def test_an_id_map_names_each_sample(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", [{"id": "q-a", "output": "Answer: Paris"}, {"id": "q-b", "output": "Kyoto"}])
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps({"q-a": "knowledge_qa/test/0", "q-b": "1"}))
    items, _ = score_file(load_task("knowledge_qa"), path, read=ReadOptions(id_map=ids))
    assert [(i.id, i.correct) for i in items] == [("knowledge_qa/test/0", True), ("knowledge_qa/test/1", False)]
    ids.write_text(json.dumps({"q-a": "knowledge_qa/test/0"}))
    with pytest.raises(InputError, match=r"r.jsonl:2: id 'q-b' is not in the --id-map file"):
        score_file(load_task("knowledge_qa"), path, read=ReadOptions(id_map=ids))
    ids.write_text(json.dumps({"q-a": "knowledge_qa/test/0", "q-b": "nope"}))
    with pytest.raises(InputError, match=r"r.jsonl:2: --id-map gives 'nope' for id 'q-b': it is not a sample"):
        score_file(load_task("knowledge_qa"), path, read=ReadOptions(id_map=ids))
    ids.write_text("[1, 2]")
    with pytest.raises(InputError, match=r"--id-map .*ids.json: must be a JSON object"):
        score_file(load_task("knowledge_qa"), path, read=ReadOptions(id_map=ids))


def test_an_id_map_names_the_samples_of_lines_that_carry_their_target(tmp_path: Path) -> None:
    rows = [{"id": "q-a", "content": "Answer: Paris", "target": "Paris"}, {"id": "q-b", "content": "5", "target": "5"}]
    path = write(tmp_path / "r.jsonl", rows)
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps({"q-a": "knowledge_qa/test/0", "q-b": "knowledge_qa/test/1"}))
    items, summary = score_file(load_task("knowledge_qa"), path, read=ReadOptions(id_map=ids))
    assert [i.id for i in items] == ["knowledge_qa/test/0", "knowledge_qa/test/1"]  # the map's, not the file's
    assert "None" not in summary.breakdowns["topic"]  # the named samples' own values: what breakdowns group by
    ids.write_text(json.dumps({"q-a": "knowledge_qa/test/0"}))
    with pytest.raises(InputError, match=r"r.jsonl:2: id 'q-b' is not in the --id-map file"):
        score_file(load_task("knowledge_qa"), path, read=ReadOptions(id_map=ids))
    ids.write_text(json.dumps({"q-a": "knowledge_qa/test/0", "q-b": "knowledge_qa/test/0"}))
    with pytest.raises(InputError, match=r"r.jsonl:2: id 'q-b' names sample knowledge_qa/test/0, which appears twice"):
        score_file(load_task("knowledge_qa"), path, read=ReadOptions(id_map=ids))
    ids.write_text(json.dumps({"q-a": "gsm8k/test/3", "q-b": "gsm8k/test/4"}))  # no dataset at hand: the map's ids
    write(path, [{**row, "target": "5"} for row in rows])
    items, _ = score_file(load_task("gsm8k"), path, read=ReadOptions(id_map=ids))
    assert [i.id for i in items] == ["gsm8k/test/3", "gsm8k/test/4"]


def test_a_line_with_two_candidate_texts_is_refused_naming_both(tmp_path: Path) -> None:
    # ZeroEval-like files echo the prompt under `output`; reading it instead of `response` scored 0%, exit 0
    rows = [{"id": "0", "output": "Question 1 of 5: the capital of France?", "response": "Answer: Paris"}]
    path = write(tmp_path / "r.jsonl", rows)
    with pytest.raises(InputError, match=r"r.jsonl:1: the line has both 'output' and 'response'.*--text-field"):
        score_file(load_task("knowledge_qa"), path)
    said: list[str] = []
    items, _ = score_file(load_task("knowledge_qa"), path, read=ReadOptions(text_field="response"), note=said.append)
    assert items[0].correct and said == ["r.jsonl: read the response text from 'response' and the ids from 'id'"]
    with pytest.raises(InputError, match=r"r.jsonl:1: --text-field answer: no such field \(the line has id, output"):
        score_file(load_task("knowledge_qa"), path, read=ReadOptions(text_field="answer"))


def test_openai_batch_output_reads_custom_ids_messages_and_endpoint_errors(tmp_path: Path) -> None:
    path = OFFLINE / "batch_knowledge_qa.jsonl"  # custom_id request-1.. numbered from 1, as OpenAI's docs do
    with pytest.raises(InputError, match=r"batch_knowledge_qa.jsonl:1: id 'request-1' is not an id of task"):
        score_file(load_task("knowledge_qa"), path)
    said: list[str] = []
    read = ReadOptions(id_map=OFFLINE / "batch_knowledge_qa_ids.json")
    items, summary, scored = score_lines(load_task("knowledge_qa"), path, read=read, note=said.append)
    assert [(i.id, i.status, i.correct) for i in items] == [
        ("knowledge_qa/test/0", "ok", True),
        ("knowledge_qa/test/1", "ok", False),
        ("knowledge_qa/test/2", "transport_error", None),  # never answered: neither right nor wrong
        ("knowledge_qa/test/3", "transport_error", None),
        ("knowledge_qa/test/4", "ok", True),
    ]
    assert (summary.n, summary.correct, summary.endpoint_errors) == (3, 2, 2)  # errors are not wrong answers
    assert "HTTP 400: This model's maximum context length is 8192 tokens." in summary.error_reasons
    assert items[2].error and "completion window expired" in items[2].error
    assert scored[0].done.reasoning.startswith("Lyon?") and scored[0].done.reasoning_source == "field:reasoning_content"
    assert "read as OpenAI Batch output" in said[0] and "2 requests failed at the endpoint" in said[0]


def test_a_batch_files_header_counts_every_item_then_those_with_a_response(tmp_path: Path) -> None:
    """Not "3 items (5 responses)": the header counts the 5 items asked, then the 3 the accuracy is over."""
    batch, ids = OFFLINE / "batch_knowledge_qa.jsonl", OFFLINE / "batch_knowledge_qa_ids.json"
    flags = ("--task", "knowledge_qa", "--responses", str(batch), "--id-map", str(ids), "--out", str(tmp_path / "o"))
    _, out, _ = score_cli(*flags)
    assert "knowledge_qa: 5 items, 3 with a response (2 lost to endpoint errors)" in out
    assert "responses)" not in out


def test_a_batch_line_of_another_endpoint_is_one_error(tmp_path: Path) -> None:
    line = {"custom_id": "0", "response": {"status_code": 200, "body": {"output": [{"type": "message"}]}}}
    path = write(tmp_path / "b.jsonl", [line])
    with pytest.raises(InputError, match=r"b.jsonl:1: field 'response.body.choices\[0\].message': not there"):
        score_file(load_task("knowledge_qa"), path)


@needs_gsm8k
def test_openai_batch_output_through_the_cli(tmp_path: Path) -> None:
    batch = OFFLINE / "batch_gsm8k.jsonl"
    code, _, err = score_cli(
        "--task", "gsm8k", "--responses", str(batch), "--data", str(SHARED / "gsm8k"), "--out", str(tmp_path / "o")
    )
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["tasks"]["gsm8k"]["summary"]
    assert (summary["n"], summary["correct"]) == (5, 5)


def test_an_lm_eval_log_holds_each_doc_once_per_filter_and_is_read_once(tmp_path: Path) -> None:
    path = OFFLINE / "samples_gsm8k_filters.jsonl"  # strict-match and flexible-extract lines for each doc
    said: list[str] = []
    items, _ = score_file(load_task("gsm8k"), path, note=said.append)
    assert [(i.id, i.correct) for i in items] == [(f"gsm8k/test/{n}", True) for n in range(3)]
    assert "3 lines repeated a doc's response under another filter" in said[0]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[3]["resps"] = [["A different sample: 4 bolts."]]
    changed = write(tmp_path / "samples.jsonl", rows)
    with pytest.raises(InputError, match=r"samples.jsonl:4: doc 1 has another response than on .*samples.jsonl:3"):
        score_file(load_task("gsm8k"), changed, read=ReadOptions(fmt="lm-eval"))
    twice = write(tmp_path / "twice.jsonl", rows[:2] + rows[:1])  # a log joined to itself: doc 0 read twice
    with pytest.raises(InputError, match=r"twice.jsonl:3: doc 0 appears twice under filter 'strict-match' \(first on "
                       r".*twice.jsonl:1\)"):  # fmt: skip
        score_file(load_task("gsm8k"), twice)
    rows[3]["resps"] = [[["-4.25", "False"]]]  # a log-likelihood request's scores, not text
    with pytest.raises(InputError, match=r"ll.jsonl:4: field 'resps': no generated text"):
        score_file(load_task("gsm8k"), write(tmp_path / "ll.jsonl", rows))


def test_csv_reads_the_same_fields_as_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('id,response,reasoning\n0,Answer: Paris,\n1,"Kyoto, I think.\nAnswer: Kyoto",Tokyo?\n2,,\n')
    said: list[str] = []
    items, _ = score_file(load_task("knowledge_qa"), path, note=said.append)
    assert [(i.id, i.status, i.correct) for i in items] == [
        ("knowledge_qa/test/0", "ok", True),
        ("knowledge_qa/test/1", "ok", False),
        ("knowledge_qa/test/2", "empty_content", False),
    ]
    assert said == ["r.csv: read the response text from 'response' and the ids from 'id'"]
    path.write_text("id,answer\n0,Paris\n")
    with pytest.raises(InputError, match=r"r.csv: no response text in the header: .*\(the header has answer, id\)"):
        score_file(load_task("knowledge_qa"), path)
    path.write_text("id,response\n0,Answer: Paris\n1\n")
    with pytest.raises(InputError, match=r"r.csv:3: 1 cells, but the header has 2"):
        score_file(load_task("knowledge_qa"), path)
    path.write_text('id,response\n0,"Answer: Paris\n1,Answer: Tokyo\n')  # an unclosed quote
    with pytest.raises(InputError, match=r"r.csv:3: not valid CSV"):
        score_file(load_task("knowledge_qa"), path)


def test_the_offline_report_names_what_it_is_not_a_class(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", [{"id": "0", "content": "Answer: Paris"}])
    code, _, err = score_cli("--task", "knowledge_qa", "--responses", str(path), "--out", str(tmp_path / "o"))
    assert code == 0, err
    for name in ("report.md", "report.html"):
        text = (tmp_path / "o" / name).read_text()
        assert "JudgedLine" not in text and "Scored offline" in text and str(path) in text


def test_an_lm_eval_response_that_writes_back_a_few_shot_example_of_its_prompt_is_an_echo(tmp_path: Path) -> None:
    """lm-eval's log holds the prompt it sent (`arguments.gen_args_0.arg_0`, few-shot examples included): a response
    that writes one of those examples back is an echo of it, not an answer, whatever that example's answer was."""
    row = json.loads((OFFLINE / "samples_gsm8k_filters.jsonl").read_text().splitlines()[0])  # gold 18
    shot = (
        "Question: A baker makes 24 rolls in the morning and sells 6 of them before noon to the people waiting "
        "outside the shop. How many rolls does the baker have left at noon?\nAnswer: The baker had 24 rolls and "
        "sold 6 of them, so 24 - 6 = 18 rolls are left at noon.\n#### 18"
    )
    question = row["arguments"]["gen_args_0"]["arg_0"]
    row["arguments"]["gen_args_0"]["arg_0"] = f"{shot}\n\n{question}"
    row["resps"] = [[shot]]
    items, _ = score_file(load_task("gsm8k"), write(tmp_path / "echo.jsonl", [row]), read=ReadOptions(fmt="lm-eval"))
    assert (items[0].status, items[0].correct) == ("echoed", False)
    row["resps"] = [["Janet keeps 16 - 3 - 4 = 9 eggs and sells them for 9 * 2 = $18.\n#### 18"]]
    items, _ = score_file(load_task("gsm8k"), write(tmp_path / "own.jsonl", [row]), read=ReadOptions(fmt="lm-eval"))
    assert (items[0].status, items[0].correct) == ("ok", True)  # its own working, beside no example, is read


MATH_L5 = SHARED / "model_outputs" / "zeroeval_math_l5" / "Qwen2.5-7B-Instruct.jsonl"


@needs_gsm8k
@pytest.mark.skipif(not MATH_L5.exists(), reason="data missing")
def test_a_bare_number_id_whose_line_asks_another_question_is_refused(tmp_path: Path) -> None:
    """ZeroEval's MATH outputs carry ids 0, 1...: scored as GSM8K they matched gsm8k/test/0... by the short id,
    although each line's `problem` is not that sample's question (0/20, exit 0)."""
    path = tmp_path / "m.jsonl"
    path.write_text("".join(MATH_L5.read_text().splitlines(keepends=True)[:3]))
    with pytest.raises(InputError, match=r"m.jsonl:1: id '0' names sample gsm8k/test/0, but the line's question"):
        score_file(load_task("gsm8k"), path, data=SHARED / "gsm8k")
    out = tmp_path / "o"
    code, _, err = score_cli(
        "--task", "gsm8k", "--responses", str(path), "--data", str(SHARED / "gsm8k"), "--out", str(out)
    )
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert not (out / "summary.json").exists()


@needs_gsm8k
def test_a_full_id_whose_line_asks_its_own_question_still_matches(tmp_path: Path) -> None:
    doc = json.loads(GSM8K.read_text().splitlines()[5])
    path = write(tmp_path / "r.jsonl", [{"id": "gsm8k/test/5", "question": doc["question"], "output": "#### 1"}])
    items, _ = score_file(load_task("gsm8k"), path, data=SHARED / "gsm8k")
    assert [i.id for i in items] == ["gsm8k/test/5"]


@pytest.mark.parametrize("key", ["knowledge_qa/test/00", "１", "03", "KNOWLEDGE_QA-007", "knowledge_qa/test/３"])
def test_an_id_that_is_not_the_exact_spelling_of_a_samples_is_refused(tmp_path: Path, key: str) -> None:
    path = write(tmp_path / "r.jsonl", [{"id": key, "content": "Answer: Paris"}])
    with pytest.raises(InputError, match=f"r.jsonl:1: id '{key}' is not a sample of task knowledge_qa"):
        score_file(load_task("knowledge_qa"), path)


@pytest.mark.parametrize("key", ["true", "false", "1.0", "1e0", "null", "[1]"])
def test_an_id_that_is_neither_a_string_nor_an_integer_is_refused(tmp_path: Path, key: str) -> None:
    # a JSON true or 1.0 was read as sample 1 and scored against that sample's gold
    path = tmp_path / "r.jsonl"
    path.write_text(f'{{"id": {key}, "content": "Answer: Tokyo"}}\n')
    code, out, err = score_cli("--task", "knowledge_qa", "--responses", str(path), "--out", str(tmp_path / "o"))
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert "r.jsonl:1: field 'id'" in err and "not a string or an integer" in err
    id_map = tmp_path / "map.json"
    id_map.write_text('{"a": true}')
    with pytest.raises(InputError, match="--id-map"):
        score_file(
            load_task("knowledge_qa"),
            write(tmp_path / "a.jsonl", [{"id": "a", "content": "x"}]),
            read=ReadOptions(id_map=id_map),
        )


def test_a_line_that_says_its_request_failed_is_an_endpoint_error_not_a_wrong_answer(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"id": "a", "content": "The answer is 4.", "target": "4"},
        {"id": "b", "content": "", "target": "7", "error": "HTTP 503: overloaded"},
        {"id": "c", "content": None, "target": "9", "status": "endpoint_error"},
        {"id": "d", "target": "2", "error": {"message": "context length exceeded"}},  # no text at all: it failed
        {"id": "e", "content": "The answer is 5.", "target": "5", "error": None, "status": "ok"},
    ]
    path = write(tmp_path / "r.jsonl", rows)
    _, _, err = score_cli("--task", "gsm8k", "--responses", str(path), "--out", str(tmp_path / "o"))
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["tasks"]["gsm8k"]["summary"]
    assert (summary["n"], summary["accuracy"], summary["endpoint_errors"]) == (2, 1.0, 3), err
    assert summary["statuses"] == {"ok": 2, "transport_error": 3}
    items = [json.loads(line) for line in (tmp_path / "o" / "items.jsonl").read_text().splitlines()]
    assert [i["correct"] for i in items] == [True, None, None, None, True]  # items.jsonl: errors are no verdict
