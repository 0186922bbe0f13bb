"""A rescore judges a stored record as the live run judged it, from the run directory alone."""

from __future__ import annotations

import json
from pathlib import Path

from qualeval.records import Manifest, Record, RunConfig, TaskEntry
from qualeval.records.store import RunStore
from qualeval.run.rescore import rescore, sample_of
from qualeval.tasks import load_task
from tests.test_records import OLD_RECORD


def _record(question: str, gold: str, content: str) -> Record:
    row = json.loads(OLD_RECORD)
    row["request"]["messages"] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": question}]
    return Record.model_validate({**row, "gold": gold, "content": content})


def test_a_rescore_reads_the_question_the_record_sent(tmp_path: Path) -> None:
    record = _record("Which city is the capital of Mexico?", "Mexico City", "Answer: Mexico")
    assert [(m.role, m.content) for m in sample_of(record).messages] == [
        ("system", "Be brief."),
        ("user", "Which city is the capital of Mexico?"),
    ]
    config = RunConfig(base_url="http://127.0.0.1:1/v1", model="sim", tasks=["knowledge_qa"], out=tmp_path)
    task = load_task("knowledge_qa")  # alias_match: an alias the question itself holds is no answer
    store = RunStore(tmp_path)
    store.open(Manifest(fingerprint="f", config=config, tasks={"knowledge_qa": TaskEntry(spec=task.spec)}))
    store.append(record.model_dump_json().encode())
    store.close()
    _, out = rescore(tmp_path)
    (again,) = list(out.records())
    assert again.score.correct is False, again.score.detail  # "Mexico" is in the question: it names no city
