"""A rescore judges a stored record as the live run judged it, from the run directory alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qualeval.errors import InputError, QualevalWarning
from qualeval.records import Manifest, Record, RunConfig, ScorerSpec, TaskEntry
from qualeval.records.store import RunStore
from qualeval.run.rescoring import rescore, sample_of
from qualeval.tasks import build_samples, load_task
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


TAGGED = """name: tagged
samples: [{question: "What is 6 times 7?", answer: "42"}]
answer: {type: number}
scorer: {kind: regex, pattern: 'PATTERN'}
"""


def _tagged_run(tmp_path: Path, file: Path) -> Path:
    """A run of the path task `file` whose one record answered right: `Answer: 42` (the run's file said RESULT)."""
    file.write_text(TAGGED.replace("PATTERN", r"RESULT:\s*{gold}\b"), encoding="utf-8")
    task = load_task(str(file))
    root = tmp_path / "run"
    config = RunConfig(base_url="http://127.0.0.1:1/v1", model="sim", tasks=[str(file)], out=root)
    store = RunStore(root)
    store.open(Manifest(fingerprint="f", config=config, tasks={"tagged": TaskEntry(file=str(file), spec=task.spec)}))
    record = _record("What is 6 times 7?", "42", "Six sevens.\n\nAnswer: 42")
    record = record.model_copy(update={"task": "tagged", "sample_id": "tagged/test/0"})  # the id a run writes
    store.append(record.model_dump_json().encode())
    store.close()
    return root


def test_a_rescore_reads_the_task_file_as_it_is_now_and_says_so(tmp_path: Path) -> None:
    file = tmp_path / "tagged.yaml"
    root = _tagged_run(tmp_path, file)
    file.write_text(TAGGED.replace("PATTERN", r"Answer:\s*{gold}\b"), encoding="utf-8")  # the pattern fixed
    said: list[str] = []
    summary, out = rescore(root, note=said.append)
    (again,) = list(out.records())
    assert again.score.correct is True and summary.tasks["tagged"].summary.accuracy == 1.0
    assert said == [f"tagged: rescored with the current {file}, samples (gold, choices, aliases, meta) included"]


def test_a_task_file_that_is_gone_falls_back_to_the_saved_spec_with_a_note(tmp_path: Path) -> None:
    file = tmp_path / "tagged.yaml"
    root = _tagged_run(tmp_path, file)
    file.unlink()
    said: list[str] = []
    _, out = rescore(root, note=said.append)
    (again,) = list(out.records())
    assert again.score.correct is False  # the spec the run used: RESULT, which the answer does not say
    assert len(said) == 1 and str(file) in said[0] and "saved in the run's manifest.json" in said[0]


def test_a_task_file_that_now_fails_to_load_is_its_error(tmp_path: Path) -> None:
    file = tmp_path / "tagged.yaml"
    root = _tagged_run(tmp_path, file)
    file.write_text(TAGGED.replace("PATTERN", r"Answer: ({gold}"), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        rescore(root)
    assert str(file) in str(caught.value) and "pattern" in str(caught.value)


def test_a_built_in_task_is_rescored_as_it_is_now(tmp_path: Path) -> None:
    current = load_task("knowledge_qa")
    old = current.spec.model_copy(update={"scorer": ScorerSpec(kind="exact")})  # what an older release shipped
    config = RunConfig(base_url="http://127.0.0.1:1/v1", model="sim", tasks=["knowledge_qa"], out=tmp_path)
    store = RunStore(tmp_path)
    entry = TaskEntry(file=str(current.path), spec=old)
    store.open(Manifest(fingerprint="f", config=config, tasks={"knowledge_qa": entry}))
    store.append(_record("What is the capital of France?", "Paris", "It is Paris.").model_dump_json().encode())
    store.close()
    said: list[str] = []
    _, out = rescore(tmp_path, note=said.append)
    (again,) = list(out.records())
    assert again.score.correct is True  # alias_match, as the built-in says now; exact match would refuse it
    assert said == ["knowledge_qa: rescored with the current built-in task"]


def test_qualeval_rescore_says_which_spec_judged_and_a_broken_file_is_one_error_line(tmp_path: Path) -> None:
    file = tmp_path / "tagged.yaml"
    root = _tagged_run(tmp_path, file)
    file.write_text(TAGGED.replace("PATTERN", r"Answer:\s*{gold}\b"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "qualeval", "rescore", str(root)], capture_output=True, text=True)
    assert done.returncode == 0 and f"note: tagged: rescored with the current {file}" in done.stderr
    file.write_text(TAGGED.replace("PATTERN", r"Answer: ({gold}"), encoding="utf-8")
    broken = subprocess.run([sys.executable, "-m", "qualeval", "rescore", str(root)], capture_output=True, text=True)
    lines = broken.stderr.strip().splitlines()
    assert broken.returncode == 2 and len(lines) == 1 and lines[0].startswith("error:") and "tagged.yaml" in lines[0]
    assert "Traceback" not in broken.stderr


COUNTS = """name: counts
SOURCE
doc_to_text: "{{ question }}"
doc_to_target: answer
answer: {type: number}
scorer: {kind: numeric}
"""
INLINE = 'samples: [{question: "Legs of a spider?", answer: 9}, {question: "Sides of a hexagon?", answer: 6}]'


def _counts_run(tmp_path: Path, source: str, data: Path | None = None) -> tuple[Path, Path]:
    """A run of the path task `counts` (its samples from `source`) whose records answered 8 and 6."""
    file = tmp_path / "counts.yaml"
    file.write_text(COUNTS.replace("SOURCE", source), encoding="utf-8")
    task = load_task(str(file))
    root = tmp_path / "run"
    given = {"*": data} if data else {}
    config = RunConfig(base_url="http://127.0.0.1:1/v1", model="sim", tasks=[str(file)], out=root, data=given)
    store = RunStore(root)
    entry = TaskEntry(file=str(file), spec=task.spec)
    store.open(Manifest(fingerprint="f", config=config, tasks={"counts": entry}, started="2026-01-02T03:04:05+00:00"))
    for sample, answer in zip(build_samples(task, data=data), ("8", "6"), strict=True):
        record = _record(sample.messages[-1].content, sample.gold, f"Answer: {answer}")
        store.append(record.model_copy(update={"task": "counts", "sample_id": sample.id}).model_dump_json().encode())
    store.close()
    return root, file


def test_an_edited_gold_in_the_task_file_judges_the_rescore(tmp_path: Path) -> None:
    root, file = _counts_run(tmp_path, INLINE)
    file.write_text(COUNTS.replace("SOURCE", INLINE.replace("answer: 9", "answer: 8")), encoding="utf-8")
    said: list[str] = []
    summary, out = rescore(root, note=said.append)
    spider, hexagon = list(out.records())
    assert (spider.gold, spider.score.correct) == ("8", True) and hexagon.score.correct is True
    assert summary.tasks["counts"].summary.accuracy == 1.0
    assert len(said) == 1 and said[0].startswith(f"counts: rescored with the current {file}")
    assert "samples" in said[0] and "could not" not in said[0]


def test_a_sample_the_task_file_no_longer_has_is_one_error_naming_it(tmp_path: Path) -> None:
    root, file = _counts_run(tmp_path, INLINE)
    file.write_text(COUNTS.replace("SOURCE", 'samples: [{question: "Legs of a spider?", answer: 8}]'), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "qualeval", "rescore", str(root)], capture_output=True, text=True)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1 and "counts/test/1" in errors[0], done.stderr
    assert "Traceback" not in done.stderr and not (root / "rescore" / "records.jsonl").exists()


def test_data_that_cannot_be_read_again_leaves_the_saved_gold_and_says_so(tmp_path: Path) -> None:
    data = tmp_path / "counts.jsonl"
    data.write_text('{"question": "Legs of a spider?", "answer": 9}\n{"question": "Hexagon?", "answer": 6}\n')
    root, _ = _counts_run(tmp_path, "dataset_path: nobody/counts", data=data)
    data.write_text('{"question": "Legs of a spider?", "answer": 8}\n{"question": "Hexagon?", "answer": 6}\n')
    _, out = rescore(root)
    assert [r.gold for r in out.records()] == ["8", "6"]  # read again through the run's --data
    data.unlink()
    said: list[str] = []
    _, out = rescore(root, note=said.append)
    assert [r.gold for r in out.records()] == ["9", "6"]
    assert len(said) == 1 and "could not be read again" in said[0] and str(data) in said[0]


def test_the_rescore_report_gives_the_run_start(tmp_path: Path) -> None:
    root, _ = _counts_run(tmp_path, INLINE)
    summary, _ = rescore(root)
    assert summary.started == "2026-01-02T03:04:05+00:00"


def test_a_sample_added_before_the_run_s_samples_is_refused_naming_the_records(tmp_path: Path) -> None:
    # ids are positions: a sample added at the top gives each record's id to the question before it, whose gold
    # would judge the record's answer
    root, file = _counts_run(tmp_path, INLINE)
    added = INLINE.replace("samples: [", 'samples: [{question: "Wheels of a tricycle?", answer: 3}, ')
    file.write_text(COUNTS.replace("SOURCE", added), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "qualeval", "rescore", str(root)], capture_output=True, text=True)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr
    assert "counts/test/0" in errors[0] and "counts/test/1" in errors[0] and "Traceback" not in done.stderr
    assert not (root / "rescore" / "records.jsonl").exists()


def test_an_edited_instruction_still_rescores_the_same_questions(tmp_path: Path) -> None:
    root, file = _counts_run(tmp_path, INLINE)
    instructed = COUNTS.replace("SOURCE", INLINE) + 'prompt: {instruction: "Reply with a number."}\n'
    file.write_text(instructed, encoding="utf-8")
    summary, out = rescore(root)
    assert [r.gold for r in out.records()] == ["9", "6"] and summary.tasks["counts"].summary.correct == 1


PLANETS = """name: planets
samples:
  - {question: "Which planet is closest to the Sun?", choices: [Venus, Mercury, Mars, Earth], answer: Mercury}
  - {question: "Plants take in?", choices: [Oxygen, Carbon dioxide, Nitrogen, Helium], answer: Carbon dioxide}
doc_to_text: "{{ question }}"
doc_to_choice: choices
doc_to_target: answer
answer: {type: choice, labels: letters}
scorer: choice
"""


@pytest.mark.parametrize("kept", [True, False], ids=["record-keeps-choices", "prompt-only"])
def test_reordered_options_are_refused_naming_the_records(tmp_path: Path, kept: bool) -> None:
    # the model answered "B" to the options as they were sent; the reordered file gives "B" to another option
    file = tmp_path / "planets.yaml"
    file.write_text(PLANETS, encoding="utf-8")
    task = load_task(str(file))
    root = tmp_path / "run"
    config = RunConfig(base_url="http://127.0.0.1:1/v1", model="sim", tasks=[str(file)], out=root)
    store = RunStore(root)
    store.open(Manifest(fingerprint="f", config=config, tasks={"planets": TaskEntry(file=str(file), spec=task.spec)}))
    for sample in build_samples(task):
        record = _record(sample.messages[-1].content, sample.gold, "Answer: B")
        update = {"task": "planets", "sample_id": sample.id, "choices": sample.choices if kept else ()}
        store.append(record.model_copy(update=update).model_dump_json().encode())
    store.close()
    assert rescore(root)[0].tasks["planets"].summary.correct == 2  # the file as the run used it
    swapped = PLANETS.replace("[Venus, Mercury,", "[Mercury, Venus,").replace(
        "[Oxygen, Carbon dioxide,", "[Carbon dioxide, Oxygen,"
    )
    file.write_text(swapped, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "qualeval", "rescore", str(root)], capture_output=True, text=True)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr
    assert "planets/test/0" in errors[0] and "planets/test/1" in errors[0] and "options" in errors[0]
    assert "Traceback" not in done.stderr


def _judged_wrong(tmp_path: Path, name: str, file: Path) -> Path:
    """A run of the path task `file` whose one record its scorer (RESULT: 42) judged wrong: `Answer: 42`."""
    root = _tagged_run(tmp_path / name, file)
    row = json.loads((root / "records.jsonl").read_text())
    row["score"] = {"correct": False, "detail": "no match"}
    (root / "records.jsonl").write_text(json.dumps(row) + "\n")
    return root


def _fixed_and_rescored(tmp_path: Path) -> tuple[Path, Path]:
    """A and B judged wrong by the run's scorer; the scorer fixed, A rescored (right), B not."""
    file = tmp_path / "tagged.yaml"
    a, b = _judged_wrong(tmp_path, "a", file), _judged_wrong(tmp_path, "b", file)
    file.write_text(TAGGED.replace("PATTERN", r"Answer:\s*{gold}\b"), encoding="utf-8")
    rescore(a)
    return a, b


def test_compare_board_and_gate_read_the_rescore_and_say_so(tmp_path: Path) -> None:
    from qualeval.errors import QualevalNote
    from qualeval.figures import board_runs, compare_runs, gate_runs

    a, b = _fixed_and_rescored(tmp_path)
    policy = tmp_path / "gate.yaml"
    policy.write_text("default:\n  accuracy: {max_drop: 0.05}\n")
    said = f"{a}: read with the verdicts of its rescore \\({a / 'rescore'}\\); name {a / 'records.jsonl'} for"
    with pytest.warns(QualevalNote, match=said):
        assert compare_runs(a, b).tasks["tagged"].accuracy_a == 1.0
    with pytest.warns(QualevalNote, match=said):
        board = board_runs([a, b])
    assert [c.accuracy.correct for c in board.tasks["tagged"].configs.values() if c.accuracy] == [1, 0]
    with pytest.warns(QualevalNote, match=said):
        gated = gate_runs(baseline=a, candidate=b, policy_path=policy)
    # right, then wrong: the rescored -1.0 (the run's own verdicts would give 0.0); one item is no evidence beyond
    # noise, so the verdict is INCONCLUSIVE, not NO-GO
    assert (gated.tasks["tagged"].clauses[0].value, gated.verdict) == (-1.0, "INCONCLUSIVE")


def test_the_rescore_folder_is_a_run_and_records_jsonl_names_the_verdicts_the_run_gave(tmp_path: Path) -> None:
    from qualeval.figures import compare_runs

    a, b = _fixed_and_rescored(tmp_path)
    assert compare_runs(a / "rescore", b).tasks["tagged"].accuracy_a == 1.0
    assert compare_runs(a / "rescore" / "records.jsonl", b).tasks["tagged"].accuracy_a == 1.0
    assert compare_runs(a / "records.jsonl", b).tasks["tagged"].accuracy_a == 0.0


def test_a_rescore_older_than_the_run_s_records_is_refused(tmp_path: Path) -> None:
    """A run resumed after its rescore holds records the rescore never judged: its verdicts would leave them out."""
    from qualeval.figures import compare_runs

    a, b = _fixed_and_rescored(tmp_path)
    row = json.loads((a / "records.jsonl").read_text())
    with (a / "records.jsonl").open("a") as handle:
        handle.write(json.dumps({**row, "level": "c=2"}) + "\n")
    with pytest.raises(InputError, match=r"judged other records than .* holds now .*\(qualeval rescore"):
        compare_runs(a, b)


def test_qualeval_compare_says_which_verdicts_in_one_note_line(tmp_path: Path) -> None:
    a, b = _fixed_and_rescored(tmp_path)
    command = [sys.executable, "-m", "qualeval", "compare", str(a), str(b), "--out", str(tmp_path / "cmp")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "verdicts of its rescore" in line]
    assert notes == [f"note: {a}: read with the verdicts of its rescore ({a / 'rescore'}); name "
                     f"{a / 'records.jsonl'} for the verdicts the run gave"]  # fmt: skip
    assert json.loads((tmp_path / "cmp" / "compare.json").read_text())["tasks"]["tagged"]["accuracy_a"] == 1.0


def test_a_torn_last_record_is_a_warning_naming_the_line_and_the_summary_says_it_is_not_the_whole_run(
    tmp_path: Path,
) -> None:
    root, _ = _counts_run(tmp_path, INLINE)
    records = root / "records.jsonl"
    whole = records.read_bytes()
    records.write_bytes(whole + whole.split(b"\n")[0][:80])  # a run killed while writing its third record
    with pytest.warns(QualevalWarning) as said:
        summary, _ = rescore(root)
    message = f"{records}:3: 1 line could not be read (cut off mid-write"
    assert [str(w.message) for w in said if message in str(w.message)], [str(w.message) for w in said]
    assert summary.records == 2 and any("not the whole run" in n and message in n for n in summary.notes)
    done = subprocess.run([sys.executable, "-m", "qualeval", "rescore", str(root)], capture_output=True, text=True)
    assert done.returncode == 0 and f"warning: {message}" in done.stderr and "Traceback" not in done.stderr
    records.write_bytes(whole)
    assert rescore(root)[0].notes == []
