"""The episode environment: API classes loaded from a wheel's source in-process (never installed, never in
sys.modules), calls executed by name with JSON arguments, BFCL's result shaping and error text."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from qualeval.agent import bfcl_classes, execute, open_env, run_call, state
from qualeval.errors import InputError
from qualeval.records import EpisodeSpec, TaskSpec, ToolCall
from tests.agent.bfcl_episodes import WHEEL, classes, needs_wheel, sample
from tests.agent.fake_env import counter_spec as _counter
from tests.agent.fake_env import fake_spec as _spec


def test_classes_load_from_source_with_their_sibling_imports_served_from_it(tmp_path: Path) -> None:
    spec, data = _counter(tmp_path)
    source = bfcl_classes(spec, data)
    env = open_env(EpisodeSpec(turns=(), classes=("Counter",), initial_config={"Counter": {"count": 2}}), source)
    assert state(env) == {"Counter": {"count": 2}}  # public attributes only
    assert not [m for m in sys.modules if m.startswith("fake_pkg")]


def test_each_load_is_its_own_and_each_env_its_own(tmp_path: Path) -> None:
    spec, data = _counter(tmp_path)
    first, second = bfcl_classes(spec, data), bfcl_classes(spec, data)
    assert first.classes["Counter"] is not second.classes["Counter"]  # nothing cached between loads
    episode = EpisodeSpec(turns=(), classes=("Counter",), long_context=True)
    one, two = open_env(episode, first), open_env(episode, first)
    assert run_call(one, "add", {"by": 3}) == '{"count": 108}'
    assert state(two) == {"Counter": {"count": 105}}


def test_results_are_shaped_and_failures_are_the_tools_error_text(tmp_path: Path) -> None:
    spec, data = _counter(tmp_path)
    env = open_env(EpisodeSpec(turns=(), classes=("Counter",)), bfcl_classes(spec, data))
    assert execute(env, ToolCall(name="label", arguments="")) == "count is 5"
    assert execute(env, ToolCall(name="add", arguments='{"by": 2}')) == '{"count": 7}'
    assert execute(env, ToolCall(name="fail", arguments="{}")) == "Error during execution: nothing to fail at"
    assert execute(env, ToolCall(name="nope", arguments="{}")) == "Error during execution: name 'nope' is not defined"
    assert execute(env, ToolCall(name="kill", arguments="{}")).startswith("Error during execution: Function call kill")
    assert "unexpected keyword argument" in execute(env, ToolCall(name="add", arguments='{"step": 1}'))
    assert execute(env, ToolCall(name="add", arguments="{by: 1")).startswith("Error during execution: arguments")
    assert execute(env, ToolCall(name="add", arguments="[1]")).startswith("Error during execution: arguments")
    assert execute(env, ToolCall(name="__init__", arguments="{}")).endswith("name '__init__' is not defined")
    assert state(env) == {"Counter": {"count": 7}}


def test_model_text_is_never_evaluated(tmp_path: Path) -> None:
    spec, data = _counter(tmp_path)
    env = open_env(EpisodeSpec(turns=(), classes=("Counter",)), bfcl_classes(spec, data))
    sneaky = ToolCall(name="add(by=__import__('os').getpid())", arguments="{}")
    assert execute(env, sneaky).startswith("Error during execution: name 'add(")
    assert execute(env, ToolCall(name="add", arguments='{"by": "__import__(\\"os\\")"}')).startswith("Error")


def test_a_class_that_fails_to_load_is_one_line_naming_its_file(tmp_path: Path) -> None:
    spec, data = _spec(tmp_path, {"Broken": "broken.py"}, {"broken.py": "import no_such_dependency_qe\n"})
    with pytest.raises(InputError, match=r"broken\.py: cannot load \(ModuleNotFoundError: No module named 'no_such"):
        bfcl_classes(spec, data)
    spec, data = _spec(tmp_path / "b", {"Gone": "gone.py"}, {})
    with pytest.raises(InputError, match=r"gone\.py: no such file"):
        bfcl_classes(spec, data)
    spec, data = _spec(tmp_path / "c", {"Missing": "empty.py"}, {"empty.py": "X = 1\n"})
    with pytest.raises(InputError, match=r"empty\.py: defines no class Missing"):
        bfcl_classes(spec, data)
    spec, data = _spec(tmp_path / "d", {"Odd": "odd.py"}, {"odd.py": "from fake_pkg import thing\n"})
    with pytest.raises(InputError, match=r"odd\.py: cannot load .*imports fake_pkg, which is not served"):
        bfcl_classes(spec, data)


@needs_wheel
def test_the_wheels_classes_load_from_the_zip_and_from_an_extracted_folder(tmp_path: Path) -> None:
    with zipfile.ZipFile(WHEEL) as z:
        z.extractall(tmp_path, [n for n in z.namelist() if "func_source_code" in n])
    from_zip = classes()
    from_folder = bfcl_classes(_task_spec(), tmp_path)
    assert set(from_zip.classes) == set(from_folder.classes) == set(from_zip.environment.modules)
    assert str(WHEEL) in from_zip.where["MathAPI"] and str(tmp_path) in from_folder.where["MathAPI"]
    assert not [m for m in sys.modules if m.startswith("bfcl_eval")]


def _task_spec() -> TaskSpec:
    from qualeval.tasks import load_task

    return load_task("bfcl_multi_turn").spec


@needs_wheel
def test_a_damaged_wheel_names_the_member(tmp_path: Path) -> None:
    broken = tmp_path / WHEEL.name
    with zipfile.ZipFile(WHEEL) as src, zipfile.ZipFile(broken, "w") as out:
        for info in src.infolist():
            if not info.filename.endswith("func_source_code/math_api.py"):
                out.writestr(info, src.read(info))
    with pytest.raises(InputError, match=r"the wheel has no file .*func_source_code/math_api\.py"):
        bfcl_classes(_task_spec(), broken)


@needs_wheel
def test_a_call_that_raises_returns_bfcls_error_text() -> None:
    item = sample("multi_turn_base_0")
    assert item.episode is not None
    env = open_env(item.episode, classes())
    assert execute(env, ToolCall(name="cd", arguments='{"folder": 3}')).startswith("Error during execution: ")
    assert execute(env, ToolCall(name="mkdir", arguments="{}")) == (
        "Error during execution: GorillaFileSystem.mkdir() missing 1 required positional argument: 'dir_name'"
    )
    assert (
        execute(env, ToolCall(name="cd", arguments='{"folder": "document"}'))
        == '{"current_working_directory": "document"}'
    )
