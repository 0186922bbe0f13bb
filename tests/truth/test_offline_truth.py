"""Known truth, offline: every input form `qualeval score` reads, every scorer kind, every way the thinking comes
back. Each file gives exactly the accuracy it was built to give, or is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.truth import known
from tests.truth.known import RIGHT, N


def _score(qualeval, tmp_path: Path, kind: known.Kind, responses: Path, *flags: str):  # type: ignore[no-untyped-def]
    task = known.write_task(kind, tmp_path)
    out = tmp_path / "out"
    return qualeval("score", "--task", task, "--responses", responses, "--out", out, *kind.options, *flags), out


@pytest.mark.parametrize("name", sorted(known.KINDS))
@pytest.mark.parametrize("thinking", known.THINKING)
def test_every_kind_and_thinking_form_gives_the_known_accuracy(qualeval, tmp_path: Path, name: str, thinking: str):
    kind = known.KINDS[name]()
    responses = known.write_jsonl(tmp_path / "r.jsonl", known.qualeval_lines(kind, thinking))
    done, out = _score(qualeval, tmp_path, kind, responses, *known.split_flags(thinking))
    summary = done.summary(out, f"truth_{name}")
    assert summary["n"] == N
    assert summary["correct"] == round(known.known_accuracy(thinking) * N)
    assert summary["accuracy"] == pytest.approx(known.known_accuracy(thinking))
    if thinking.startswith("cut_"):
        # a cut in the thinking is that, never an answer read off the reasoning
        assert summary["statuses"].get("reasoning_truncated") == len(known.CUT)


@pytest.mark.parametrize("thinking", ["opened", "cut_opened"])
def test_a_template_opened_file_is_read_as_opened_without_being_told(qualeval, tmp_path: Path, thinking: str):
    """Lines that show only `</think>` say the template opened the block: a line cut off before it is reasoning
    cut off, not an answer, even where the user did not pass --thinking-opened."""
    kind = known.KINDS["numeric"]()
    responses = known.write_jsonl(tmp_path / "r.jsonl", known.qualeval_lines(kind, thinking))
    done, out = _score(qualeval, tmp_path, kind, responses)
    summary = done.summary(out, "truth_numeric")
    assert summary["correct"] == round(known.known_accuracy(thinking) * N)
    assert summary["statuses"].get("reasoning_truncated", 0) == (len(known.CUT) if thinking == "cut_opened" else 0)


@pytest.mark.parametrize(
    ("id_field", "text_field"),
    [("id", "response"), ("question_id", "completion"), ("idx", "generated_text"), ("sample_id", "output")],
)
def test_the_common_field_names_give_the_known_accuracy(qualeval, tmp_path: Path, id_field: str, text_field: str):
    kind = known.KINDS["numeric"]()
    responses = known.write_jsonl(tmp_path / "r.jsonl", known.named_lines(kind, id_field, text_field))
    done, out = _score(qualeval, tmp_path, kind, responses)
    assert done.summary(out, "truth_numeric")["correct"] == len(RIGHT)


def test_bare_numbers_are_the_samples_numbers(qualeval, tmp_path: Path):
    kind = known.KINDS["choice"]()
    responses = known.write_jsonl(tmp_path / "r.jsonl", known.qualeval_lines(kind, "field", id_of=lambda i: i))
    done, out = _score(qualeval, tmp_path, kind, responses)
    assert done.summary(out, "truth_choice")["correct"] == len(RIGHT)


def test_a_line_with_two_response_fields_is_refused(qualeval, tmp_path: Path):
    """`output` (an echo of the prompt) beside `response`: which is the answer is not ours to guess."""
    kind = known.KINDS["numeric"]()
    rows = known.named_lines(kind, "id", "response")
    for row in rows:
        row["output"] = "Item 0: how many stones are in pile 0?"
    done, _ = _score(qualeval, tmp_path, kind, known.write_jsonl(tmp_path / "r.jsonl", rows))
    line = done.refused()
    assert "output" in line and "response" in line


@pytest.mark.parametrize("name", ["numeric", "choice", "alias_match"])
def test_lm_eval_samples_with_several_filters_give_the_known_accuracy(qualeval, tmp_path: Path, name: str):
    """lm-eval logs each doc once per filter; the raw response is read once per doc, its filters are ignored."""
    kind = known.KINDS[name]()
    responses = known.write_jsonl(tmp_path / "samples_truth.jsonl", known.lm_eval_lines(kind))
    done, out = _score(qualeval, tmp_path, kind, responses, "--format", "lm-eval")
    summary = done.summary(out, f"truth_{name}")
    assert (summary["n"], summary["correct"]) == (N, len(RIGHT))


def test_lm_eval_samples_whose_filters_disagree_on_the_raw_response_are_refused(qualeval, tmp_path: Path):
    kind = known.KINDS["numeric"]()
    rows = known.lm_eval_lines(kind)
    rows[N + 3]["resps"] = [["Answer: 999"]]  # the second filter's copy of doc 3 holds another response
    done, _ = _score(qualeval, tmp_path, kind, known.write_jsonl(tmp_path / "s.jsonl", rows), "--format", "lm-eval")
    assert "3" in done.refused()


@pytest.mark.parametrize("thinking", ["field", "inline", "cut_field"])
def test_openai_batch_output_gives_the_known_accuracy(qualeval, tmp_path: Path, thinking: str):
    kind = known.KINDS["numeric"]()
    responses = known.write_jsonl(tmp_path / "batch_output.jsonl", known.batch_lines(kind, thinking))
    done, out = _score(qualeval, tmp_path, kind, responses)
    summary = done.summary(out, "truth_numeric")
    assert (summary["n"], summary["correct"]) == (N, round(known.known_accuracy(thinking) * N))


def test_batch_ids_that_are_not_the_samples_are_refused(qualeval, tmp_path: Path):
    """A custom_id of the user's own making ends in hex digits: matching its trailing digits to a sample number
    would score answers against other items' golds."""
    kind = known.KINDS["numeric"]()
    rows = known.batch_lines(kind, custom_id=lambda i: f"req-{(i * 7919):x}f1c6")
    done, _ = _score(qualeval, tmp_path, kind, known.write_jsonl(tmp_path / "b.jsonl", rows))
    assert "req-" in done.refused()


def test_a_batch_request_that_failed_is_an_endpoint_error_not_a_wrong_answer(qualeval, tmp_path: Path):
    kind = known.KINDS["numeric"]()
    rows = known.batch_lines(kind)
    wrong_item = min(set(range(N)) - RIGHT)
    rows[wrong_item]["response"] = {"status_code": 500, "request_id": "r", "body": {"error": {"message": "boom"}}}
    done, out = _score(qualeval, tmp_path, kind, known.write_jsonl(tmp_path / "b.jsonl", rows))
    summary = done.summary(out, "truth_numeric")
    assert (summary["n"], summary["correct"], summary["endpoint_errors"]) == (N - 1, len(RIGHT), 1)


def test_csv_gives_the_known_accuracy(qualeval, tmp_path: Path):
    kind = known.KINDS["alias_match"]()
    done, out = _score(qualeval, tmp_path, kind, known.write_csv(tmp_path / "answers.csv", kind))
    assert done.summary(out, "truth_alias_match")["correct"] == len(RIGHT)


def test_an_id_that_names_no_sample_is_refused(qualeval, tmp_path: Path):
    kind = known.KINDS["numeric"]()
    rows = known.qualeval_lines(kind, "none")
    rows[4]["id"] = "truth_numeric/test/99"
    done, _ = _score(qualeval, tmp_path, kind, known.write_jsonl(tmp_path / "r.jsonl", rows))
    assert "truth_numeric/test/99" in done.refused()
