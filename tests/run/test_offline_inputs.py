"""`qualeval score` on inputs that used to be read silently wrong: lm-eval logs of other documents or with several
responses per doc, finish reasons of other spellings, unreadable targets, a BOM and JSON arrays."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.run.offline import ReadOptions, score_file
from qualeval.tasks import load_task
from tests.conftest import DATA, GSM8K, SHARED, needs_gsm8k

LOG = DATA / "offline" / "samples_gsm8k_filters.jsonl"


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def log_rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in LOG.read_text().splitlines()]


@needs_gsm8k
def test_an_lm_eval_log_whose_doc_ids_are_shifted_is_refused_when_the_dataset_is_at_hand(tmp_path: Path) -> None:
    rows = log_rows()
    items, _ = score_file(load_task("gsm8k"), write(tmp_path / "a.jsonl", rows), data=GSM8K)
    assert [i.id for i in items] == [f"gsm8k/test/{n}" for n in range(3)]
    for row in rows:
        row["doc_id"] = int(str(row["doc_id"])) + 1  # each right answer would be filed under the next question
    with pytest.raises(InputError, match=r"b.jsonl:1: doc_id 1: the log's document is not document 1 of task gsm8k"):
        score_file(load_task("gsm8k"), write(tmp_path / "b.jsonl", rows), data=GSM8K)


def test_an_lm_eval_log_named_for_another_task_is_refused_without_the_dataset(tmp_path: Path) -> None:
    said: list[str] = []
    score_file(
        load_task("gsm8k"),
        write(tmp_path / "samples_gsm8k_2024-05-01T12-34-56.123456.jsonl", log_rows()),
        note=said.append,
    )
    assert "unchecked (--data checks them)" in said[0]
    other = write(tmp_path / "samples_gsm8k_cot_2024-05-01T12-34-56.123456.jsonl", log_rows())
    with pytest.raises(InputError, match=r"lm-eval's log of task gsm8k_cot, not gsm8k: score it with --task"):
        score_file(load_task("gsm8k"), other)


def test_an_lm_eval_doc_with_several_responses_is_refused_not_read_as_its_first(tmp_path: Path) -> None:
    rows = log_rows()
    rows[0]["resps"] = [["It is $18.\n#### 18", "It is $17.\n#### 17"]]  # lm-eval's repeats: 2 answers of doc 0
    with pytest.raises(InputError, match=r"r.jsonl:1: field 'resps': the doc holds 2 responses"):
        score_file(load_task("gsm8k"), write(tmp_path / "r.jsonl", rows), read=ReadOptions(fmt="lm-eval"))
    rows[0]["resps"] = [["#### 18"], ["#### 17"]]
    with pytest.raises(InputError, match=r"r.jsonl:1: field 'resps': the doc holds 2 requests"):
        score_file(load_task("gsm8k"), write(tmp_path / "r.jsonl", rows), read=ReadOptions(fmt="lm-eval"))


def test_finish_reasons_are_read_in_any_spelling_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    rows = [
        {"id": "knowledge_qa/test/0", "content": "Answer: Paris", "finish_reason": "LENGTH"},
        {"id": "knowledge_qa/test/1", "content": "Answer: Tokyo", "finish_reason": "MAX_TOKENS"},
        {"id": "knowledge_qa/test/2", "content": "Answer: Canberra", "finish_reason": "STOP"},
    ]
    items, _ = score_file(load_task("knowledge_qa"), write(tmp_path / "r.jsonl", rows))
    assert [i.status for i in items] == ["answer_truncated", "answer_truncated", "ok"]
    # a generation that ended in an error is an endpoint error, not an answer scored wrong
    rows[2]["finish_reason"] = "ERROR"
    items, _ = score_file(load_task("knowledge_qa"), write(tmp_path / "r.jsonl", rows))
    assert items[2].status == "transport_error" and "aborted" in (items[2].error or "")
    rows[2]["finish_reason"] = "weird"
    with pytest.raises(InputError, match=r"r.jsonl:3: field 'finish_reason': 'weird' is no finish reason qualeval"):
        score_file(load_task("knowledge_qa"), write(tmp_path / "r.jsonl", rows))


def test_offline_endpoint_errors_list_every_reason_and_say_what_is_true_offline(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app

    failed = {"status_code": 500, "body": {"error": {"message": "boom"}}}
    answer = {"status_code": 200, "body": {"choices": [{"message": {"content": "Answer: Canberra"}}]}}
    rows = [
        {"custom_id": "knowledge_qa/test/0", "response": failed},
        {"custom_id": "knowledge_qa/test/1", "error": {"message": "rate limited"}},
        {"custom_id": "knowledge_qa/test/2", "response": answer},
    ]
    out = tmp_path / "o"
    args = ["score", "--task", "knowledge_qa", "--responses", str(write(tmp_path / "b.jsonl", rows)), "--out", str(out)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.stderr
    assert "2 requests, 2 items unanswered: 1× HTTP 500: boom; 1× rate limited" in result.stdout
    for name in ("report.md", "report.html"):
        text = (out / name).read_text()
        assert "1× HTTP 500: boom; 1× rate limited" in text and "Rerunning" not in text
        assert "Scored offline, nothing was sent: to count them, make those requests again" in text


@pytest.mark.parametrize(
    ("target", "said"), [("", "field 'target': empty"), ("five", "field 'target': 'five' is not a")]
)
def test_a_target_no_answer_could_match_is_refused_naming_the_line(tmp_path: Path, target: str, said: str) -> None:
    rows = [{"id": "a", "content": "The answer is 5", "target": "5"}, {"id": "b", "content": "5", "target": target}]
    with pytest.raises(InputError, match=rf"r.jsonl:2: {said}"):
        score_file(load_task("gsm8k"), write(tmp_path / "r.jsonl", rows))


def test_a_numeric_tasks_gold_that_is_not_one_number_is_refused_naming_the_item(tmp_path: Path) -> None:
    data = write(tmp_path / "d.jsonl", [{"question": "2 + 3?", "answer": "It is 2 + 3 = 5.\n#### 5"}])
    rows = [{"id": "0", "content": "The answer is 5"}]
    items, _ = score_file(load_task("gsm8k"), write(tmp_path / "r.jsonl", rows), data=data)
    assert [(i.gold, i.correct) for i in items] == [("5", True)]
    write(data, [{"question": "2 + 3?", "answer": "It is 2 + 3 = 5.\n#### five"}])
    with pytest.raises(
        InputError, match=r"r.jsonl:1: id '0' names gsm8k/test/0, whose gold \(its doc_to_target\) '.*' is not a number"
    ):
        score_file(load_task("gsm8k"), tmp_path / "r.jsonl", data=data)


def test_a_utf8_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "knowledge_qa/test/0", "content": "Answer: Paris"}\n')
    items, _ = score_file(load_task("knowledge_qa"), path)
    assert [(i.id, i.correct) for i in items] == [("knowledge_qa/test/0", True)]


def test_a_file_that_is_one_json_array_is_read_record_by_record(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('[\n {"id": "0", "content": "Answer: Paris"},\n {"id": "1",\n  "content": "Answer: Kyoto"}\n]\n')
    said: list[str] = []
    items, _ = score_file(load_task("knowledge_qa"), path, note=said.append)
    assert [(i.id, i.correct) for i in items] == [("knowledge_qa/test/0", True), ("knowledge_qa/test/1", False)]
    assert "the file is one JSON array" in said[0]
    path.write_text('[\n {"id": "0", "content": "Answer: Paris"},\n "Answer: Kyoto"\n]\n')
    with pytest.raises(InputError, match=r"r.json:3: each record of the JSON array must be a JSON object"):
        score_file(load_task("knowledge_qa"), path)
    path.write_text('[\n {"id": "0", "content": "Answer: Paris"},\n {"id": "1"\n]\n')
    with pytest.raises(InputError, match=r"r.json:3: not valid JSON \(the file starts with '\['"):
        score_file(load_task("knowledge_qa"), path)


def test_the_reports_say_how_many_answers_cut_off_by_the_budget_are_counted_correct(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app

    rows = [
        {"id": "knowledge_qa/test/0", "content": "Answer: Paris. It has been the capital", "finish_reason": "length"},
        {"id": "knowledge_qa/test/1", "content": "Answer: Kyoto, which", "finish_reason": "length"},
        {"id": "knowledge_qa/test/2", "content": "Answer: Canberra", "finish_reason": "stop"},
    ]
    items, summary = score_file(load_task("knowledge_qa"), write(tmp_path / "r.jsonl", rows))
    assert [(i.status, i.correct) for i in items] == [("answer_truncated", True), ("answer_truncated", False),
                                                       ("ok", True)]  # fmt: skip
    assert summary.truncated_correct == 1
    out = tmp_path / "o"
    args = ["score", "--task", "knowledge_qa", "--responses", str(tmp_path / "r.jsonl"), "--out", str(out)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    said = "1 of the 2 answers cut off by the budget (answer_truncated) is counted correct: it states"
    assert said in result.stdout
    for name in ("report.md", "report.html"):
        assert said in (out / name).read_text()


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("E", "'E' names none of the 4 options: expected an option's letter (A-D) or its text"),
        (1, "1 names none of the 4 options: a number is not read here (whether it counts from 0 or 1 is not known)"),
        ("b)", "'b)' names none of the 4 options"),
    ],
)
def test_a_multiple_choice_target_that_names_no_option_is_refused(tmp_path: Path, target: object, said: str) -> None:
    rows = [{"id": "q1", "content": "Answer: B", "target": "b", "choices": ["a", "b", "c", "d"]}]
    items, _ = score_file(load_task("mmlu"), write(tmp_path / "r.jsonl", rows))
    assert [i.correct for i in items] == [True]
    rows.append({"id": "q2", "content": "Answer: B", "target": target, "choices": ["a", "b", "c", "d"]})
    with pytest.raises(InputError, match=rf"r.jsonl:2: field 'target': {re.escape(said)}"):
        score_file(load_task("mmlu"), write(tmp_path / "r.jsonl", rows))


def test_a_multiple_choice_target_that_is_an_options_text_is_that_option(tmp_path: Path) -> None:
    rows = [
        {"id": "q1", "content": "Answer: B", "target": "Paris", "choices": ["London", "Paris"]},
        {"id": "q2", "content": "Answer: B", "target": "7", "choices": ["3", "7", "1", "0"]},
        {"id": "q3", "content": "Answer: A", "target": "B", "choices": ["B", "C"]},  # the others are texts
    ]
    items, _ = score_file(load_task("mmlu"), write(tmp_path / "r.jsonl", rows))
    assert [(i.gold, i.correct) for i in items] == [("B", True), ("B", True), ("A", True)]
    with pytest.raises(InputError, match=r"r.jsonl:1: field 'target': 'B' is both the letter of option B and the "
                       r"text of option A, and no other target says which"):  # fmt: skip
        score_file(load_task("mmlu"), write(tmp_path / "r.jsonl", rows[2:]))


def test_a_text_labelled_choice_task_takes_its_options_texts_and_its_fixed_options(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "content": "Answer: entailment", "target": "entailment"},
        {"id": "b", "content": "Answer: neutral", "target": "C", "choices": ["entailment", "contradiction", "neutral"]},
    ]
    items, _ = score_file(load_task("neubaroco"), write(tmp_path / "r.jsonl", rows))
    assert [(i.gold, i.correct) for i in items] == [("entailment", True), ("neutral", True)]


MMLU = SHARED / "mmlu"


@pytest.mark.skipif(not MMLU.exists(), reason="../shared/data/mmlu missing")
def test_an_lm_eval_log_of_another_subject_is_refused_and_a_many_subject_task_is_not(tmp_path: Path) -> None:
    import csv

    with (MMLU / "test" / "anatomy_test.csv").open() as f:
        question, a, b, c, d, answer = next(csv.reader(f))
    doc = {"question": question, "A": a, "B": b, "C": c, "D": d, "answer": answer}
    row = {"doc_id": 0, "doc": doc, "resps": [[f"Answer: {answer}"]], "filtered_resps": [answer]}
    path = write(tmp_path / "log.jsonl", [row])
    items, _ = score_file(load_task("mmlu:anatomy"), path, data=MMLU)
    assert [i.correct for i in items] == [True]
    with pytest.raises(InputError, match=r"log.jsonl:1: doc_id 0: the log's document is not document 0 of task mmlu"):
        score_file(load_task("mmlu:abstract_algebra"), path, data=MMLU)
    items, _ = score_file(load_task("mmlu"), path, data=MMLU)  # doc 0 of every subject: no one to check against
    assert [i.correct for i in items] == [True]


def test_an_lm_eval_logs_choice_target_that_reads_two_ways_is_read_as_its_other_docs_are(tmp_path: Path) -> None:
    def row(n: int, options: list[str], answer: str) -> dict[str, object]:
        doc = {"question": f"Question {n}?", **dict(zip("ABCD", options, strict=True)), "answer": answer}
        return {"doc_id": n, "doc": doc, "resps": [["Answer: B"]], "filtered_resps": ["B"]}

    ambiguous = row(0, ["A", "~A", "B", "~B"], "B")  # MMLU formal_logic: the letter B (~A), or the option 'B'?
    rows = [ambiguous, row(1, ["red", "blue", "green", "grey"], "B")]
    items, _ = score_file(load_task("mmlu"), write(tmp_path / "log.jsonl", rows))
    assert [(i.gold, i.correct) for i in items] == [("B", True), ("B", True)]  # the other doc's answer is a letter
    with pytest.raises(InputError, match=r"document 0: 'B' is both the letter of option B and the text of option C"):
        score_file(load_task("mmlu"), write(tmp_path / "log.jsonl", rows[:1]))
