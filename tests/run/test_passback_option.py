"""--reasoning-passback belongs to runs of episodes: refused where no task has multi-turn items, never listed as a
setting that differs between runs it changed nothing in; the passback an episode run applied is among what it
pinned, so compare and board show it, not only `auto`."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.figures.rundir import run_settings
from qualeval.records import Manifest, Pinned, RunConfig, TaskEntry
from qualeval.tasks import load_task


def test_the_option_on_a_run_without_episodes_is_refused_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--task", "tool_weather"]
    done = CliRunner().invoke(app, [*args, "--reasoning-passback", "none", "--no-probe", "--out", str(out)])
    assert done.exit_code == 2, done.output
    assert "--reasoning-passback none changes nothing here" in " ".join(done.stderr.split())
    assert not (out / "records.jsonl").exists()


def manifest(task: str, passback: str, applied: str | None = None) -> Manifest:
    config = RunConfig(base_url="http://127.0.0.1:9/v1", model="m", out="r", tasks=[task], reasoning_passback=passback)  # type: ignore[arg-type]
    pinned = Pinned(constraint="off", passback=applied)  # type: ignore[arg-type]
    return Manifest(config=config, pinned=pinned, tasks={task: TaskEntry(spec=load_task(task).spec)})


def test_the_option_is_no_setting_of_a_run_without_episodes() -> None:
    assert "reasoning_passback" not in run_settings(manifest("tool_weather", "none"))
    settings = run_settings(manifest("bfcl_multi_turn:base", "auto", "reasoning_content"))
    assert settings["reasoning_passback"] == "auto" and settings["pinned.passback"] == "reasoning_content"


def test_a_pinned_passback_is_fingerprinted_only_where_set() -> None:
    assert "passback" not in Pinned(constraint="off").fingerprinted()
    assert Pinned(constraint="off", passback="none").fingerprinted()["passback"] == "none"
