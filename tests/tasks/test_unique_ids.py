"""Two documents under one sample id are refused, naming the id and both documents: records, resumes and
comparisons pair by id, so the second would be taken for the first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.tasks import build_samples, load_task

TASK = """\
name: dup
SOURCE
doc_to_text: "{{ question }}"
doc_to_target: answer
doc_to_id: qid
answer: {type: text}
scorer: {kind: exact}
"""


def test_two_inline_documents_with_one_id_are_refused_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    rows = "[{qid: q1, question: a, answer: x}, {qid: q2, question: b, answer: y}, {qid: q1, question: c, answer: z}]"
    path.write_text(TASK.replace("SOURCE", f"samples: {rows}"), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        build_samples(load_task(str(path)))
    assert str(caught.value) == (
        f"{path}: field 'doc_to_id': document 0 of split 'test' and document 2 of split 'test' have the same id "
        "'dup/test/q1': give each document its own id"
    )


def test_two_documents_of_a_data_file_with_one_id_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(TASK.replace("SOURCE", "dataset_path: someone/dup"), encoding="utf-8")
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"qid": 7, "question": q, "answer": "x"}) + "\n" for q in "ab"))
    with pytest.raises(InputError, match=rf"document 0 of split 'test' and document 1 of split 'test' of {data} "
                       r"have the same id 'dup/test/7'"):  # fmt: skip
        build_samples(load_task(str(path)), data=data)
    assert len(build_samples(load_task(str(path)), data=data, limit=1)) == 1
