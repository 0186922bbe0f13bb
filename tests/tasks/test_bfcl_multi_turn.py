"""BFCL v4 multi-turn, read from the bfcl-eval wheel: every category's items as episodes (turns, tools, the
functions held back until their turn, ground truth), and the errors of bad input, each naming what and where."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.tasks import build_samples, load_task
from tests.agent.bfcl_episodes import CATEGORIES, WHEEL, needs_wheel, sample, samples

PROMPT = "I have updated some more functions you can choose from. What about now?"


def _lines(name: str) -> list[dict]:
    with zipfile.ZipFile(WHEEL) as z:
        return [json.loads(line) for line in z.read(f"bfcl_eval/data/{name}").splitlines() if line.strip()]


def test_the_task_names_bfcls_multi_turn_categories() -> None:
    spec = load_task("bfcl_multi_turn").spec
    assert spec.subsets is not None and spec.subsets.values == CATEGORIES
    assert spec.environment is not None and spec.scorer.kind == "episode"
    assert set(spec.environment.modules) == set(spec.environment.docs)


def test_a_misspelt_category_is_one_line_with_the_nearest_names() -> None:
    with pytest.raises(InputError, match=r"task 'bfcl_multi_turn' has no category or group 'miss_fun'.*'miss_func'"):
        load_task("bfcl_multi_turn:miss_fun")


@needs_wheel
@pytest.mark.parametrize("category", CATEGORIES)
def test_every_item_loads_as_an_episode(category: str) -> None:
    items = samples(category)
    questions = _lines(f"BFCL_v4_multi_turn_{category}.json")
    answers = _lines(f"possible_answer/BFCL_v4_multi_turn_{category}.json")
    assert len(items) == len(questions) == 200
    for item, question, answer in zip(items, questions, answers, strict=True):
        episode = item.episode
        assert episode is not None and item.id == f"bfcl_multi_turn/{category}/test/{question['id']}"
        assert len(episode.turns) == len(episode.expected) == len(question["question"])
        assert episode.expected == tuple(tuple(t) for t in answer["ground_truth"])
        assert episode.classes == tuple(question["involved_classes"])
        assert episode.long_context == (category == "long_context")
        assert [m.content for m in item.messages] == [m["content"] for m in episode.turns[0]]
        assert item.tools == episode.tools and item.meta == {"category": category}


@needs_wheel
def test_a_held_back_function_is_offered_only_from_its_turn_whose_message_is_bfcls_prompt() -> None:
    for item in samples("miss_func"):
        episode = item.episode
        assert episode is not None and len(episode.added) == 1
        [(turn, added)] = episode.added.items()
        names = {t["function"]["name"] for t in added}
        assert names and not names & {t["function"]["name"] for t in episode.tools}
        assert all(names <= {t["function"]["name"] for t in episode.tools_at(later)} for later in range(turn, 9))
        assert not names & {t["function"]["name"] for t in episode.tools_at(turn - 1)}
        assert episode.turns[turn] == ({"role": "user", "content": PROMPT},)
    first = sample("multi_turn_miss_func_0").episode
    assert first is not None and [t["function"]["name"] for t in first.added[3]] == ["sort"]


@needs_wheel
def test_tools_are_bfcls_documents_converted_as_single_turn_bfcl_converts_them() -> None:
    episode = sample("multi_turn_base_0").episode
    assert episode is not None and episode.classes == ("TwitterAPI", "GorillaFileSystem")
    docs = [
        json.loads(line)
        for name in ("posting_api", "gorilla_file_system")
        for line in _member(f"multi_turn_func_doc/{name}.json").splitlines()
    ]
    assert [t["function"]["name"] for t in episode.tools] == [d["name"] for d in docs]
    assert all(t["function"]["parameters"]["type"] == "object" for t in episode.tools)


def _member(name: str) -> str:
    with zipfile.ZipFile(WHEEL) as z:
        return z.read(f"bfcl_eval/data/{name}").decode()


def _folder(tmp_path: Path, edit: dict[str, object] | None = None, answer: dict[str, object] | None = None) -> Path:
    """The base category's data as an extracted folder, its first item edited."""
    data = tmp_path / "bfcl_eval" / "data"
    (data / "possible_answer").mkdir(parents=True)
    shutil.copytree(_docs_dir(tmp_path), data / "multi_turn_func_doc")
    for name, change in (
        ("BFCL_v4_multi_turn_base.json", edit),
        ("possible_answer/BFCL_v4_multi_turn_base.json", answer),
    ):
        rows = _lines(name)[:2]
        rows[0].update(change or {})
        (data / name).write_text("\n".join(json.dumps(r) for r in rows))
    return tmp_path


def _docs_dir(tmp_path: Path) -> Path:
    out = tmp_path / "docs"
    with zipfile.ZipFile(WHEEL) as z:
        for member in z.namelist():
            if "/multi_turn_func_doc/" in member:
                (out / Path(member).name).parent.mkdir(parents=True, exist_ok=True)
                (out / Path(member).name).write_bytes(z.read(member))
    return out


@needs_wheel
@pytest.mark.parametrize(
    ("edit", "answer", "message"),
    [
        ({"involved_classes": ["NoSuchAPI"]}, None, r"field 'involved_classes': NoSuchAPI not in the task's env"),
        ({"question": "hello"}, None, r"field 'question': expected a non-empty list of turns"),
        ({"question": [[{"role": "user", "content": "a"}], []]}, None, r"field 'question': turn 1 has no message"),
        ({"initial_config": [1]}, None, r"field 'initial_config': expected \{class name"),
        ({"missed_function": {"9": ["ls"]}}, None, r"field 'missed_function': turn '9' is not one of the item's"),
        (
            None,
            {"ground_truth": [["cd(folder=x)"]] * 4},
            r"'ground_truth': turn 0: 'cd\(folder=x\)': argument folder is",
        ),
        (None, {"ground_truth": [["rm_rf(x=1)"]] * 4}, r"'ground_truth': turn 0: rm_rf is not a function of the env"),
        (None, {"ground_truth": [["ls()"]]}, r"field 'ground_truth': 1 turns where the question has 4"),
    ],
)
def test_bad_items_name_the_file_item_and_field(
    tmp_path: Path, edit: dict | None, answer: dict | None, message: str
) -> None:
    data = _folder(tmp_path, edit, answer)
    with pytest.raises(
        InputError, match=rf"bfcl_multi_turn\.yaml: document 0 of base \(id 'multi_turn_base_0'\).*{message}"
    ):
        build_samples(load_task("bfcl_multi_turn:base"), data=data)


@needs_wheel
def test_an_extracted_folder_reads_as_the_wheel_does(tmp_path: Path) -> None:
    [first, second] = build_samples(load_task("bfcl_multi_turn:base"), data=_folder(tmp_path))
    assert first == samples("base")[0] and second == samples("base")[1]


@needs_wheel
def test_a_damaged_wheel_names_the_file(tmp_path: Path) -> None:
    broken = tmp_path / WHEEL.name
    with zipfile.ZipFile(WHEEL) as src, zipfile.ZipFile(broken, "w") as out:
        for info in src.infolist():
            if not info.filename.endswith("multi_turn_func_doc/math_api.json"):
                out.writestr(info, src.read(info))
    with pytest.raises(InputError, match=r"the wheel has no file bfcl_eval/data/multi_turn_func_doc/math_api\.json"):
        build_samples(load_task("bfcl_multi_turn:base"), data=broken)
    broken.write_bytes(b"not a zip")
    with pytest.raises(InputError, match=r"not a wheel"):
        build_samples(load_task("bfcl_multi_turn:base"), data=broken)
