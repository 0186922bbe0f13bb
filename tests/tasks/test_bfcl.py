"""BFCL v4's single-turn categories, read from the bfcl-eval wheel as a zip: every category's items, their tools as
OpenAI function tools, their expected calls from BFCL's possible answers, and --data with the wheel or a folder."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.errors import InputError
from qualeval.records import ExpectedCall
from qualeval.tasks import build_samples, load_task
from qualeval.tasks.bfcl_schema import openai_tools

WHEEL = Path(os.environ.get("QUALEVAL_CACHE") or Path.home() / ".cache" / "qualeval") / (
    "bfcl_eval-2026.3.23-py3-none-any.whl"
)
needs_wheel = pytest.mark.skipif(
    not WHEEL.exists(), reason=f"{WHEEL} is not present (the bfcl-eval wheel: .ci/run fetches it)"
)

COUNTS = {
    "simple_python": 400,
    "multiple": 200,
    "parallel": 200,
    "parallel_multiple": 200,
    "irrelevance": 240,
    "live_simple": 258,
    "live_multiple": 1053,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
    "live_irrelevance": 884,
    "live_relevance": 16,
}


def _lines(name: str) -> list[dict]:
    with zipfile.ZipFile(WHEEL) as z:
        return [json.loads(line) for line in z.read(f"bfcl_eval/data/{name}").splitlines() if line.strip()]


def test_the_task_names_the_categories_asked_for() -> None:
    spec = load_task("bfcl").spec
    assert spec.subsets is not None and set(spec.subsets.values) == set(COUNTS)
    assert set(spec.subsets.groups["live"]) | set(spec.subsets.groups["non_live"]) == set(COUNTS)


@needs_wheel
@pytest.mark.parametrize("category", sorted(COUNTS))
def test_every_category_loads_all_its_items_from_the_wheel(category: str) -> None:
    samples = build_samples(load_task(f"bfcl:{category}"), data=WHEEL)
    questions = _lines(f"BFCL_v4_{category}.json")
    assert len(samples) == COUNTS[category] == len(questions)
    assert [s.id for s in samples] == [f"bfcl/{category}/test/{q['id']}" for q in questions]
    assert {s.meta["category"] for s in samples} == {category}
    # the tools are BFCL's function documents as OpenAI function tools, as BFCL's handlers send them
    assert all(s.tools == openai_tools(q["function"]) for s, q in zip(samples, questions, strict=True))
    assert all(s.tool_choice == "auto" and s.tool_answer is not None for s in samples)
    # the messages are the item's only turn, system prompts and earlier turns included
    turns = [tuple((m["role"], m["content"]) for m in q["question"][0]) for q in questions]
    assert [tuple((m.role, m.content) for m in s.messages) for s in samples] == turns


@needs_wheel
@pytest.mark.parametrize("category", sorted(c for c in COUNTS if "relevance" not in c))
def test_the_expected_calls_are_the_possible_answers_joined_by_id(category: str) -> None:
    answers = {a["id"]: a["ground_truth"] for a in _lines(f"possible_answer/BFCL_v4_{category}.json")}
    for sample in build_samples(load_task(f"bfcl:{category}"), data=WHEEL):
        truth = answers[sample.id.rsplit("/", 1)[1]]
        expected = tuple(
            ExpectedCall(name=name.replace(".", "_"), params={p: tuple(v) for p, v in params.items()})
            for call in truth
            for name, params in call.items()
        )
        assert sample.tool_answer is not None and sample.tool_answer.trigger == "call"
        assert sample.tool_answer.calls == expected


@needs_wheel
def test_irrelevance_expects_no_call_and_relevance_any_call() -> None:
    for category, trigger, gold in [
        ("irrelevance", "none", "no call"),
        ("live_irrelevance", "none", "no call"),
        ("live_relevance", "any", "any call"),
    ]:
        samples = build_samples(load_task(f"bfcl:{category}"), data=WHEEL)
        assert {(s.tool_answer.trigger, s.tool_answer.calls, s.gold) for s in samples if s.tool_answer} == {
            (trigger, (), gold)
        }


@needs_wheel
def test_a_sample_reads_as_bfcl_wrote_it() -> None:
    [first] = build_samples(load_task("bfcl:simple_python"), data=WHEEL, limit=1)
    assert first.id == "bfcl/simple_python/test/simple_python_0"
    assert first.gold == "calculate_triangle_area(base=10, height=5, unit='units')"
    assert first.tool_answer is not None
    assert first.tool_answer.calls[0].params["unit"] == ("units", "")  # "" : the parameter may be left out
    [parallel] = build_samples(load_task("bfcl:parallel"), data=WHEEL, limit=1)
    # BFCL's `spotify.play` is offered as `spotify_play`; the expected calls name what is offered
    assert parallel.tools[0]["function"]["name"] == "spotify_play"
    assert (
        parallel.gold
        == "spotify_play(artist='Taylor Swift', duration=20); spotify_play(artist='Maroon 5', duration=15)"
    )


@needs_wheel
def test_the_default_source_is_the_cached_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUALEVAL_CACHE", str(WHEEL.parent))
    monkeypatch.setattr("qualeval.tasks.wheels.PYPI_JSON", "http://127.0.0.1:9/{package}/{version}")  # no network
    samples = build_samples(load_task("bfcl:live"), limit_per_subset=2)
    assert len(samples) == 12 and samples[0].id == "bfcl/live_simple/test/live_simple_0-0-0"


def _extract(tmp: Path, categories: list[str]) -> Path:
    with zipfile.ZipFile(WHEEL) as z:
        for category in categories:
            for name in (f"BFCL_v4_{category}.json", f"possible_answer/BFCL_v4_{category}.json"):
                if f"bfcl_eval/data/{name}" in z.namelist():
                    z.extract(f"bfcl_eval/data/{name}", tmp)
    return tmp


@needs_wheel
def test_data_may_be_a_folder_holding_the_extracted_tree(tmp_path: Path) -> None:
    folder = _extract(tmp_path, ["parallel", "irrelevance"])
    task = load_task("bfcl:non_live")
    want = build_samples(load_task("bfcl:parallel"), data=WHEEL) + build_samples(
        load_task("bfcl:irrelevance"), data=WHEEL
    )
    for data in (folder, folder / "bfcl_eval" / "data"):
        for category, count in [("parallel", 200), ("irrelevance", 240)]:
            got = build_samples(load_task(f"bfcl:{category}"), data=data)
            assert len(got) == count and got == [s for s in want if s.meta["category"] == category]
    with pytest.raises(InputError, match=r"BFCL_v4_simple_python\.json: no such file"):
        build_samples(task, data=folder)


@needs_wheel
def test_a_question_without_its_answer_is_refused(tmp_path: Path) -> None:
    folder = _extract(tmp_path, ["simple_python"]) / "bfcl_eval" / "data"
    answers = folder / "possible_answer" / "BFCL_v4_simple_python.json"
    answers.write_text("\n".join(answers.read_text().splitlines()[1:]))
    with pytest.raises(InputError, match=r"no document with id 'simple_python_0' \(document 0 of .*BFCL_v4_simple"):
        build_samples(load_task("bfcl:simple_python"), data=folder)


def _one_error(args: list[str]) -> str:
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, (done.exit_code, done.stderr)
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_a_misspelt_category_is_one_error_line() -> None:
    line = _one_error(["tasks", "show", "bfcl:simple_pyhton"])
    assert "task 'bfcl' has no category or group 'simple_pyhton'" in line


@needs_wheel
def test_a_wheel_without_the_file_is_one_error_line(tmp_path: Path) -> None:
    wheel = tmp_path / "bfcl_eval-2026.3.23-py3-none-any.whl"
    with zipfile.ZipFile(WHEEL) as source, zipfile.ZipFile(wheel, "w") as out:
        out.writestr(
            "bfcl_eval/data/BFCL_v4_simple_python.json", source.read("bfcl_eval/data/BFCL_v4_simple_python.json")
        )
    line = _one_error(["tasks", "show", "bfcl:multiple", "--data", str(wheel)])
    assert f"{wheel}: the wheel has no file bfcl_eval/data/BFCL_v4_multiple.json" in line
    line = _one_error(["tasks", "show", "bfcl:simple_python", "--data", str(wheel)])
    assert "the wheel has no file bfcl_eval/data/possible_answer/BFCL_v4_simple_python.json" in line
    not_a_wheel = tmp_path / "x.whl"
    not_a_wheel.write_text("text")
    assert "not a wheel" in _one_error(["tasks", "show", "bfcl:multiple", "--data", str(not_a_wheel)])
