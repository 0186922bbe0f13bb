"""Task files: the built-in tasks on real data, the format's rules, and its errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import qualeval
from qualeval.errors import InputError
from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from qualeval.tasks import build_samples, builtin_tasks, load_task
from qualeval.tasks.generators import is_valid, syllogism_forms
from tests.conftest import ROOT, SHARED

needs_data = pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not present")

# built-in task -> the local data it reads offline (None: bundled or generated)
OFFLINE = {
    "gsm8k": SHARED / "gsm8k",
    "mmlu": SHARED / "mmlu",
    "knowledge_qa": None,
    "triviaqa": SHARED / "knowledge_qa",
    "nq_open": SHARED / "knowledge_qa",
    "syllogisms": None,
    "neubaroco": SHARED / "syllogisms",
    "word_problems": None,
    "math500": SHARED / "math500" / "test.jsonl",
    "humaneval": SHARED / "humaneval" / "HumanEval.jsonl",
    "ifeval": SHARED / "ifeval" / "input_data.jsonl",
    "tool_weather": None,
}
# no shared copy: tests/test_tasks_benchmarks.py renders them from files it writes
# bfcl, bfcl_multi_turn: tests/tasks/test_bfcl.py and tests/tasks/test_bfcl_multi_turn.py, from the wheel
ELSEWHERE = {"mmlu_pro", "mmlu_pro_zeroshot", "gpqa_diamond", "bfcl", "bfcl_multi_turn"}


def test_every_builtin_task_is_listed_here() -> None:
    assert set(builtin_tasks()) == set(OFFLINE) | ELSEWHERE


@needs_data
@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_builtin_task_loads_offline_and_renders_its_first_sample(name: str) -> None:
    task = load_task(name)
    samples = build_samples(task, data=OFFLINE[name], limit=3)
    assert len(samples) == 3
    first = samples[0]
    assert first.messages[-1].role == "user" and first.messages[-1].content.strip()
    assert first.gold
    assert first.id.startswith(f"{task.spec.name}/")


@needs_data
def test_gsm8k_is_the_real_test_split() -> None:
    samples = build_samples(load_task("gsm8k"), data=SHARED / "gsm8k")
    assert len(samples) == 1319
    assert samples[0].gold == "18" and samples[0].id == "gsm8k/test/0"
    assert "#### <number>" in samples[0].messages[-1].content
    shot = build_samples(load_task("gsm8k"), data=SHARED / "gsm8k", limit=1, num_fewshot=2)[0]
    assert [m.role for m in shot.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert shot.messages[1].content.rstrip().endswith("#### 72")


@needs_data
def test_gsm8k_single_file_is_the_test_split() -> None:
    assert len(build_samples(load_task("gsm8k"), data=SHARED / "gsm8k" / "test.jsonl")) == 1319
    with pytest.raises(InputError, match="a single file is the test split"):
        build_samples(load_task("gsm8k"), data=SHARED / "gsm8k" / "test.jsonl", num_fewshot=1)


@needs_data
def test_mmlu_subjects_categories_and_fewshot() -> None:
    everything = build_samples(load_task("mmlu"), data=SHARED / "mmlu", limit_per_subset=2)
    assert len(everything) == 114
    assert len({s.meta["subject"] for s in everything}) == 57
    assert {s.meta["category"] for s in everything} == {"stem", "humanities", "social_sciences", "other"}
    stem = build_samples(load_task("mmlu:stem"), data=SHARED / "mmlu")
    assert len({s.meta["subject"] for s in stem}) == 18 and len(stem) == 3018
    one = build_samples(load_task("mmlu:college_physics"), data=SHARED / "mmlu", num_fewshot=5, limit=1)[0]
    assert len(one.messages) == 11 and one.messages[1].content.startswith("Answer: ")
    assert one.gold in "ABCD" and len(one.choices) == 4
    assert one.id == "mmlu/college_physics/test/0"


@needs_data
def test_mmlu_reads_the_hub_schema_too(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    table = pa.Table.from_pylist(
        [{"question": "2+2?", "subject": "anatomy", "choices": ["3", "4", "5", "6"], "answer": 1}]
    )
    path = tmp_path / "anatomy.parquet"
    pq.write_table(table, path)
    sample = build_samples(load_task("mmlu:anatomy"), data=path)[0]
    assert (sample.gold, sample.choices) == ("B", ("3", "4", "5", "6"))


@needs_data
def test_limit_per_subset_leaves_tasks_without_subsets_alone() -> None:
    assert len(build_samples(load_task("gsm8k"), data=SHARED / "gsm8k", limit_per_subset=3)) == 1319


def test_unknown_mmlu_selector() -> None:
    with pytest.raises(InputError, match="no subject or group 'astrology'"):
        load_task("mmlu:astrology")
    with pytest.raises(InputError, match="has no subsets"):
        load_task("gsm8k:main")


def test_knowledge_qa_is_bundled_with_aliases() -> None:
    samples = build_samples(load_task("knowledge_qa"))
    assert len(samples) >= 150
    assert len({s.messages[-1].content for s in samples}) == len(samples)
    assert sum(bool(s.aliases) for s in samples) >= 100
    topics = {s.meta["topic"] for s in samples}
    assert {"capital", "chemistry", "author", "date", "unit", "constant", "geography", "biology"} <= topics


@needs_data
def test_triviaqa_and_nq_open_local_files() -> None:
    trivia = build_samples(load_task("triviaqa"), data=SHARED / "knowledge_qa")
    assert len(trivia) == 3000 and trivia[0].gold == "Onion" and "Bulb onion" in trivia[0].aliases
    assert not trivia[0].messages[-1].content.startswith("Question:")
    nq = build_samples(load_task("nq_open"), data=SHARED / "knowledge_qa")
    assert len(nq) == 3610 and nq[0].aliases == ("14 December 1972 UTC", "December 1972")


def test_syllogism_validity_is_computed_by_logic() -> None:
    forms = syllogism_forms()
    assert len(forms) == 256
    valid = {f"{m}-{f}" for m, f in forms if is_valid(m, f)}
    assert valid == {
        "AAA-1",
        "EAE-1",
        "AII-1",
        "EIO-1",
        "EAE-2",
        "AEE-2",
        "EIO-2",
        "AOO-2",
        "IAI-3",
        "AII-3",
        "OAO-3",
        "EIO-3",
        "AEE-4",
        "IAI-4",
        "EIO-4",
    }
    assert sum(is_valid(m, f, existential_import=True) for m, f in forms) == 24


def test_syllogism_task_renderings_and_determinism() -> None:
    task = load_task("syllogisms")
    samples = build_samples(task)
    assert len(samples) == 1024
    assert sum(s.gold == "yes" for s in samples) == 60
    assert {s.meta["rendering"] for s in samples} == {"abstract", "nonsense", "believable", "unbelievable"}
    assert [s.messages for s in build_samples(task)] == [s.messages for s in samples]
    believable = next(s for s in samples if s.id == "syllogisms/test/AAA-1-believable")
    unbelievable = next(s for s in samples if s.id == "syllogisms/test/AAA-1-unbelievable")
    assert believable.gold == unbelievable.gold == "yes"
    assert believable.messages[-1].content != unbelievable.messages[-1].content


@needs_data
def test_neubaroco_reads_the_tsv_and_credits_the_authors() -> None:
    task = load_task("neubaroco")
    assert "Ozeki" in task.spec.description and "CC BY 4.0" in task.spec.description
    samples = build_samples(task, data=SHARED / "syllogisms")
    assert len(samples) == 790
    assert {s.gold for s in samples} == {"entailment", "contradiction", "neutral"}
    assert {s.meta["content_type"] for s in samples} >= {"congruent", "incongruent", "symbolic"}


@needs_data
def test_sample_ids_are_stable_and_unique() -> None:
    a = build_samples(load_task("mmlu:humanities"), data=SHARED / "mmlu")
    b = build_samples(load_task("mmlu:humanities"), data=SHARED / "mmlu")
    assert [s.id for s in a] == [s.id for s in b]
    assert len({s.id for s in a}) == len(a)


def test_readme_custom_task_runs_end_to_end_against_the_reference_server(tmp_path: Path) -> None:
    path = ROOT / "examples" / "planet_facts.yaml"
    page = (ROOT / "docs" / "tasks.md").read_text()
    assert path.read_text() in page, "docs/tasks.md must show the example file verbatim"
    task = load_task(str(path))
    samples = build_samples(task)
    config = SimConfig(
        port=0, tasks=(str(path),), behaviour=Behaviour(accuracy=1.0, reasoning_tokens=30), latency=Latency(burst=True)
    )
    with running_server(config) as url:  # the run's own path, one request at a time: the records in sample order
        options: dict[str, Any] = {"warmup": 0, "concurrency": 1, "constraint": "off"}
        records = qualeval.evaluate("sim", str(path), base_url=url, out=tmp_path / "run", **options).records
    assert [r.sample_id for r in records] == [s.id for s in samples]
    assert all(r.status == "ok" and r.score.correct for r in records), [r.extraction for r in records]
    assert all(r.extraction.rung == "anchor" for r in records)
    switched = [r.request.model_dump(mode="json")["chat_template_kwargs"] for r in records]
    assert all(r.reasoning for r in records) and all(k == {"enable_thinking": True} for k in switched)


def test_templates_render_in_a_sandbox(tmp_path: Path) -> None:
    path = tmp_path / "escape.yaml"
    path.write_text(
        "name: escape\nsamples: [{question: q, answer: a}]\nscorer: exact\n"
        "doc_to_text: \"{{ ''.__class__.__mro__[1].__subclasses__() }}\"\n"
    )
    with pytest.raises(InputError, match="unsafe"):
        build_samples(load_task(str(path)))


def test_lm_eval_yaml_import(tmp_path: Path) -> None:
    (tmp_path / "_base.yaml").write_text(
        "dataset_path: gsm8k\ndataset_name: main\noutput_type: generate_until\ntest_split: test\n"
        "doc_to_target: \"{{answer.split('####')[-1].strip()}}\"\n"
        'generation_kwargs:\n  until: ["Question:"]\n  max_gen_toks: 512\n'
    )
    (tmp_path / "mine.yaml").write_text('include: _base.yaml\ntask: mine\ndoc_to_text: "Q: {{question}}\\nA:"\n')
    (tmp_path / "test.jsonl").write_text(json.dumps({"question": "1+1?", "answer": "so #### 2"}) + "\n")
    task = load_task(f"lm_eval:{tmp_path / 'mine.yaml'}")
    assert task.spec.generation.stop == ("Question:",) and task.spec.generation.max_tokens == 512
    sample = build_samples(task, data=tmp_path)[0]
    assert sample.gold == "2" and sample.messages[-1].content.startswith("Q: 1+1?\nA:")


def test_lm_eval_generation_kwargs_refuse_a_boolean_for_a_number(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        "task: t\ndataset_path: x\noutput_type: generate_until\ntest_split: test\ndoc_to_text: q\n"
        "doc_to_target: a\ngeneration_kwargs:\n  do_sample: true\n  temperature: true\n"
    )
    with pytest.raises(InputError, match=r"field 'generation_kwargs.temperature': expected a number, got 'True'"):
        load_task(f"lm_eval:{tmp_path / 't.yaml'}")


def test_lm_eval_multiple_choice_becomes_a_choice_question(tmp_path: Path) -> None:
    (tmp_path / "mc.yaml").write_text(
        "task: mc\ndataset_path: x\noutput_type: multiple_choice\ntest_split: test\n"
        "doc_to_text: question\ndoc_to_choice: choices\ndoc_to_target: label\n"
    )
    (tmp_path / "test.jsonl").write_text(json.dumps({"question": "Sky?", "choices": ["red", "blue"], "label": 1}))
    sample = build_samples(load_task(f"lm_eval:{tmp_path / 'mc.yaml'}"), data=tmp_path)[0]
    assert sample.gold == "B" and "A. red\nB. blue" in sample.messages[-1].content


def test_lm_eval_function_tags_are_refused(tmp_path: Path) -> None:
    (tmp_path / "code.yaml").write_text("task: code\ndataset_path: x\nprocess_docs: !function utils.process\n")
    with pytest.raises(InputError, match=r"code.yaml:3: YAML tag !function runs code"):
        load_task(f"lm_eval:{tmp_path / 'code.yaml'}")


_VALID = """name: t
samples: [{question: "What is 2+2?", answer: "4"}]
doc_to_text: "{{ question }}"
scorer: exact
"""

_ENV = "environment: {{code: c, package: p, modules: {{}}, docs: {{}}, max_steps: {}}}\n"

# (task file text, words the one-line error must contain). Each names the file, a line and the field.
MALFORMED = [
    ("name: t\nsamples: [{q: 1}]\n", "field 'scorer': Field required"),
    (_VALID + "colour: red\n", "field 'colour': Extra inputs are not permitted"),
    (_VALID.replace("name: t", "name: 't t'"), "field 'name': name must be letters"),
    (_VALID.replace("name: t\n", ""), "field 'name': Field required"),
    (_VALID.replace("scorer: exact", "scorer: fuzzy"), "field 'scorer.kind'"),
    (_VALID.replace("scorer: exact", "scorer: {kind: regex}"), "a regex scorer needs a 'pattern'"),
    (_VALID.replace("scorer: exact", "scorer: {kind: numeric, tolerance: -1}"), "tolerance must not be negative"),
    (_VALID.replace("scorer: exact", "scorer: {kind: exact, speed: 3}"), "field 'scorer.speed'"),
    (_VALID + "num_fewshot: 3\n", "num_fewshot needs a fewshot_split or fewshot_samples"),
    (_VALID + "num_fewshot: -1\n", "field 'num_fewshot'"),
    (_VALID + "num_fewshot: many\n", "field 'num_fewshot': Input should be a valid integer"),
    (_VALID + "answer: {type: choice}\n", "a choice answer needs doc_to_choice"),
    (_VALID + "answer: {type: colour}\n", "field 'answer.type'"),
    (_VALID + "answer: {labels: roman}\n", "field 'answer.labels'"),
    (_VALID + "answer: {normalize: [upper]}\n", "field 'answer.normalize.0'"),
    (_VALID.replace("scorer: exact", "scorer: choice"), "the choice scorer needs answer.type 'choice'"),
    (_VALID + "generation: {max_tokens: 0}\n", "field 'generation.max_tokens'"),
    (_VALID + "generation: {temperature: hot}\n", "field 'generation.temperature'"),
    (_VALID + "generation: {thinking: perhaps}\n", "field 'generation.thinking'"),
    (_VALID + "generation: {stream: true}\n", "field 'generation.stream'"),
    # a boolean is no number (lax pydantic reads true as 1.0), nested per thinking mode too, as in RunConfig
    (_VALID + "generation: {temperature: true}\n", "field 'generation.temperature': True is a boolean"),
    (_VALID + "generation: {max_tokens: true}\n", "field 'generation.max_tokens': True is a boolean"),
    (_VALID + "generation: {thinking: 1}\n", "field 'generation.thinking': 1 is not a boolean"),
    (
        _VALID + "generation: {sampling: {thinking: {temperature: true}}}\n",
        "field 'generation.sampling.thinking.temperature': True is a boolean, not a number",
    ),
    (
        _VALID + "generation: {sampling: {no_thinking: {top_k: false}}}\n",
        "field 'generation.sampling.no_thinking.top_k': False is a boolean, not a number",
    ),
    (_VALID + "prompt: {sytem: hi}\n", "field 'prompt.sytem'"),
    (_VALID + "prompt: hello\n", "field 'prompt'"),
    (_VALID + "breakdowns: [subject]\n", "breakdown 'subject' is not a doc_to_meta field"),
    # a record's own fields: an older record kept them in its meta, so a task's value of that name would be misread
    (_VALID + "doc_to_meta: {prompt_tokens: q}\n", "'prompt_tokens' is a field qualeval writes in each record"),
    (_VALID + "subsets: {values: [a], label: scored}\n", "'scored' is a field qualeval writes in each record"),
    (_VALID + "generator: syllogisms\n", "give either samples or generator, not both"),
    ("name: t\nscorer: exact\n", "a task needs a dataset"),
    (_VALID + "subsets: {values: [a], groups: {g: [b]}}\n", "group 'g' names unknown subsets: b"),
    (_VALID + "samples: 7\n", "field 'samples'"),
    (_VALID + "doc_to_choice: {a: 1}\n", "field 'doc_to_choice'"),
    (_VALID + "process_docs: !function utils.process\n", "YAML tag !function is not allowed"),
    (_VALID + "bad: !!python/object/apply:os.system [ls]\n", "is not allowed: task files cannot run code"),
    ("name: [unclosed\n", "invalid YAML"),
    ("- a\n- b\n", "a task file must be a mapping"),
    ("", "a task file must be a mapping"),
    (_VALID + "  indented: wrong\n", "invalid YAML"),
    (_VALID + _ENV.format(0), "field 'environment.max_steps': Input should be greater than or equal to 1"),
    (_VALID + _ENV.format(-3), "field 'environment.max_steps'"),
    (_VALID + "name: again\n", None),  # duplicate keys: YAML takes the last; still a valid task
]


@pytest.mark.parametrize(("text", "words"), MALFORMED, ids=[f"case{i}" for i in range(len(MALFORMED))])
def test_malformed_task_files_get_one_line_naming_file_line_and_field(
    tmp_path: Path, text: str, words: str | None
) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(text)
    if words is None:
        assert load_task(str(path)).spec.name == "again"
        return
    with pytest.raises(InputError) as err:
        load_task(str(path))
    message = str(err.value)
    assert "\n" not in message
    assert re.match(rf"{re.escape(str(path))}:\d+: ", message), message
    assert words in message, message


def test_a_boolean_sampling_value_is_refused_on_one_line_with_exit_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "task.yaml"
    path.write_text(_VALID + "generation:\n  sampling:\n    thinking: {temperature: true, top_p: 0.95}\n")
    done = subprocess.run(
        [sys.executable, "-m", "qualeval", "tasks", "show", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:"), lines
    assert "generation.sampling.thinking.temperature" in lines[0]


def test_field_errors_point_at_the_right_line(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(_VALID + "generation:\n  max_tokens: 10\n  temperature: hot\n")
    with pytest.raises(InputError, match=r"task.yaml:7: field 'generation.temperature'"):
        load_task(str(path))


@pytest.mark.parametrize(
    ("doc", "words"),
    [
        ({"question": "q"}, "field 'doc_to_target': document 0 of split 'test': the document has no field 'answer'"),
        ({"answer": "a"}, "field 'doc_to_text': document 0 of split 'test': 'question' is undefined"),
        ({"question": "q", "answer": ""}, "the gold answer is empty"),
    ],
)
def test_missing_dataset_fields_name_the_item(tmp_path: Path, doc: dict[str, str], words: str) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("name: t\nscorer: exact\ndata_files: {test: d.jsonl}\n")
    (tmp_path / "d.jsonl").write_text(json.dumps(doc) + "\n")
    with pytest.raises(InputError) as err:
        build_samples(load_task(str(path)), data=tmp_path)
    assert words in str(err.value) and str(path) in str(err.value)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "no documents in the file"),
        (b'{"question": "q", "answer": "a"}\nnot json\n', "d.jsonl:2: not valid JSON"),
        (b"[1, 2]\n", "d.jsonl:1: each line must be a JSON object"),
        (b'{"question": "caf\xe9", "answer": "a"}\n', "d.jsonl:1: not UTF-8 text"),
    ],
)
def test_bad_dataset_files(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("name: t\nscorer: exact\ndata_files: {test: d.jsonl}\n")
    (tmp_path / "d.jsonl").write_bytes(content)
    with pytest.raises(InputError, match=re.escape(words)):
        build_samples(load_task(str(path)), data=tmp_path)


def test_ragged_csv_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("name: t\nscorer: exact\ndata_files: {test: d.csv}\n")
    (tmp_path / "d.csv").write_text("question,answer\nq1,a1\nq2\n")
    with pytest.raises(InputError, match=r"d.csv:3: 1 columns where 2 were expected"):
        build_samples(load_task(str(path)), data=tmp_path)
    with pytest.raises(InputError, match="no such file or folder"):
        build_samples(load_task(str(path)), data=tmp_path / "absent")
    with pytest.raises(InputError, match=r"unsupported file type '\.txt'"):
        (tmp_path / "d.txt").write_text("x")
        build_samples(load_task(str(path)), data=tmp_path / "d.txt")


def test_unknown_task_and_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown task 'nope'"):
        load_task("nope")
    with pytest.raises(InputError, match="cannot read task file"):
        load_task(str(tmp_path / "absent.yaml"))
    (tmp_path / "latin.yaml").write_bytes(b"name: caf\xe9\n")
    with pytest.raises(InputError, match="not UTF-8"):
        load_task(str(tmp_path / "latin.yaml"))


def test_a_number_written_as_yaml_1_2_writes_it_is_a_number(tmp_path: Path) -> None:
    # PyYAML (YAML 1.1) reads `1e-5` as text, which the field then refuses as no number
    path = tmp_path / "task.yaml"
    path.write_text("name: t\nscorer: exact\ndata_files: {test: d.jsonl}\ngeneration: {temperature: 1e-5}\n")
    assert load_task(str(path)).spec.generation.temperature == 1e-5
    path.write_bytes("name: t\nscorer: exact\ndata_files: {test: d.jsonl}\n".encode("utf-16"))
    with pytest.raises(InputError, match="not UTF-8"):
        load_task(str(path))
