"""A tool-call task's run prints its tool figures in the terminal: the answers' own statuses (`ok 10`) say
nothing of the calls the server left as markup."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.sim import Latency, SimConfig, running_server


def test_a_tool_task_prints_its_accuracy_wire_statuses_lost_calls_and_parity(tmp_path: Path) -> None:
    out = tmp_path / "leaky"
    sim = SimConfig(
        port=0, tasks=("tool_weather",), latency=Latency(burst=True), faults={"markup_in_content_stream": 0.3}
    )
    with running_server(sim) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", "sim", "--task", "tool_weather", "--stream-parity",
             "--out", str(out)],
        )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    tools = json.loads((out / "summary.json").read_text())["tasks"]["tool_weather"]["tools"]
    shown = " ".join(done.stdout.split())
    wire = ", ".join(f"{k} {v}" for k, v in sorted(tools["statuses"].items()))
    lost = tools["recovery"]
    parity = tools["parity"]
    assert f"tool_weather tool calls ({tools['responses']} responses): accuracy stream=on " in shown
    assert f"; wire statuses: {wire}; " in shown
    assert f"would have been right: {lost['would_be_right']} of {lost['wrong']} wrong" in shown
    assert f"stream parity: {parity['agree']}/{parity['pairs']} pairs agree" in shown
