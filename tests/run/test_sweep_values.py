"""The values a sweep's flags take: each bad one is one `error:` line naming the value itself, and a published
figure reads one way only (a share, or a percent with `%` or above 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.records import RunConfig


def _refused(tmp_path: Path, *flags: str) -> str:
    args = ["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--task", "knowledge_qa", "--no-probe"]
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r"), *flags])
    assert done.exit_code == 2, done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--reasoning-effort", "low,lo"], "--reasoning-effort: 'lo' is not a reasoning effort"),
        (["--concurrency", "1,4,x"], "--concurrency: 'x':"),
        (["--max-tokens", "512,big"], "--max-tokens: 'big':"),
        (["--thinking-budget", "64,1e3x"], "--thinking-budget: '1e3x':"),
        (["--published", "knowledge_qa=185"], "--published: 'knowledge_qa': a published figure is a share"),
        (["--published", "knowledge_qa=lots"], "'lots' is not a number"),
    ],
)
def test_a_bad_value_is_named(flags: list[str], words: str, tmp_path: Path) -> None:
    assert words in _refused(tmp_path, *flags)


def test_every_effort_openai_names_is_taken() -> None:
    efforts = "none,minimal,low,medium,high,xhigh,max"
    config = RunConfig(base_url="http://x/v1", model="m", tasks=["gsm8k"], out=Path("o"), reasoning_effort=efforts)
    assert config.reasoning_effort == efforts.split(",")


@pytest.mark.parametrize(
    ("given", "share"),
    [("gsm8k=0.85", 0.85), ("gsm8k=85%", 0.85), ("gsm8k=85", 0.85), ("gsm8k=0.5%", 0.005), ({"gsm8k": 84.0}, 0.84)],
)
def test_a_published_figure_is_a_share_or_a_marked_percent(given: object, share: float) -> None:
    config = RunConfig(base_url="http://x/v1", model="m", tasks=["gsm8k"], out=Path("o"), published=given)
    assert config.published["gsm8k"] == pytest.approx(share)
    again = RunConfig.model_validate(config.model_dump(mode="json") | {"base_url": "http://x/v1"})
    assert again.published["gsm8k"] == pytest.approx(share)  # a saved run reads back the same figure
