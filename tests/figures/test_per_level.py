"""Levels that asked differently (output budgets, efforts, thinking on and off) get their accuracy per level in
the terminal, report.md, report.html and summary.json, and no figure pooled over them; a load sweep keeps its
pooled accuracy."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.figures.frontier import asked_differently
from qualeval.sim import Behaviour, Latency, SimConfig, running_server


def _sim() -> SimConfig:
    behaviour = Behaviour(reasoning_tokens=300, accuracy=0.9, trap_rate=0.0, effort_gain=1.0)
    return SimConfig(port=0, tasks=("knowledge_qa",), behaviour=behaviour, latency=Latency(burst=True))


def test_levels_asked_differently_only_when_a_budget_part_differs() -> None:
    assert asked_differently(["max_tokens=96", "max_tokens=4096"])
    assert asked_differently(["effort=low thinking=on", "thinking=off"])
    assert asked_differently(["c=1 max_tokens=96", "c=1 max_tokens=4096", "c=4 max_tokens=96"])
    assert not asked_differently(["c=1", "c=16"]) and not asked_differently(["rate=1", "rate=4"])
    assert not asked_differently(["c=1 max_tokens=96", "c=4 max_tokens=96"]) and not asked_differently(["c=16"])


def test_a_budget_sweep_shows_accuracy_per_level_and_none_pooled(tmp_path: Path) -> None:
    out = tmp_path / "r"
    with running_server(_sim()) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "20",
             "--concurrency", "5", "--max-tokens", "96,4096", "--published", "knowledge_qa=90%",
             "--fail-under", "0.5", "--out", str(out)],
        )  # fmt: skip
    assert done.exit_code == 1, done.stderr  # the small budget is below --fail-under; the large one is not
    assert "knowledge_qa @ max_tokens=96" in done.stderr and "knowledge_qa @ max_tokens=4096" not in done.stderr
    task = json.loads((out / "summary.json").read_text())["tasks"]["knowledge_qa"]
    pooled = task["summary"]
    assert pooled["per_level"] == ["max_tokens=96", "max_tokens=4096"]
    assert pooled["accuracy"] is None and pooled["correct"] is None and pooled["interval"] is None
    assert set(pooled["breakdowns"]) == {"topic @ max_tokens=96", "topic @ max_tokens=4096"}  # per level too
    grouped = [c for groups in pooled["breakdowns"].values() for c in groups.values()]
    assert grouped and all(isinstance(c["correct"], int) for c in grouped)
    cells = {name: lv["accuracy"] for name, lv in task["levels"].items()}
    assert all(isinstance(c["correct"], int) and c["n"] == 20 for c in cells.values())
    assert cells["max_tokens=96"]["accuracy"] < cells["max_tokens=4096"]["accuracy"]
    shown = " ".join(done.stdout.split())
    for name, c in cells.items():
        assert f"accuracy at {name}" in shown and f"({c['correct']}/20)" in shown
    assert "accuracy (95% Wilson)" not in shown and not re.search(r"\(\d+\.\d+/\d+\)", shown)  # no fractional count
    assert task["linked"]["truncation"]["suggested_budget"] is None  # pooled lengths would contradict the frontier
    md = (out / "report.md").read_text()
    assert "no budget suggested" in md and "suggested budget:" not in md
    assert "| knowledge_qa @ max_tokens=96 | 20 |" in md and "| knowledge_qa @ max_tokens=4096 | 20 |" in md
    assert "| knowledge_qa | 20 |" not in md  # no pooled row
    for name, lv in task["levels"].items():  # the shares over answered items are per level too, never a dash
        assert lv["accuracy_answered"] is not None and f"over answered at {name} " in shown
        assert re.search(rf"\| knowledge_qa @ {name} \| 20 \| [^|]+\| [^|]+\| \d+\.\d%", md)
    assert "published 90.0%," in md and "at max_tokens=" in md
    page = (out / "report.html").read_text()
    accuracy = page[page.index('<section id="accuracy"') :].split("</table>")[0]
    assert "knowledge_qa @ max_tokens=96</td>" in accuracy and "<td>knowledge_qa</td>" not in accuracy
    # the speed-and-quality figures are the task's, over both budgets: each page says it pools them
    said = "Pooled over all 2 levels (max_tokens=96, max_tokens=4096)"
    linked = md[md.index("### knowledge_qa: speed and quality together") :]
    assert said in linked.split("###")[1] and said in page[page.index('<section id="linked"') :]


_DOM = """
const items = JSON.parse(process.argv[1]), want = JSON.parse(process.argv[2]);
const els = items.map((d) => ({ dataset: d, hidden: false,
  classList: { toggle(name, on) { if (name === "hidden") { this.owner.hidden = on; } } } }));
els.forEach((el) => { el.classList.owner = el; });
const selects = {};
for (const id of JSON.parse(process.argv[3])) { selects[id] = { value: want[id] || "", addEventListener() {} }; }
selects["f-count"] = { textContent: "" };
global.document = { getElementById: (id) => selects[id] || null, querySelectorAll: () => els };
eval(process.argv[4]);
console.log(JSON.stringify(els.filter((el) => !el.hidden).map((el) => el.dataset.level)));
"""


def _shown(page: str, want: dict[str, str]) -> list[str]:
    """The levels of the item records the report's own filter script leaves shown, run under node."""
    import shutil
    import subprocess

    import pytest

    from qualeval.report.html import _SCRIPT

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    items = [
        dict(re.findall(r'data-(\w+)="([^"]*)"', tag)) for tag in re.findall(r"<details class=\"item\"[^>]*>", page)
    ]
    ids = re.findall(r'<select id="(f-\w+)"', page)
    done = subprocess.run(
        [node, "-e", _DOM, json.dumps(items), json.dumps(want), json.dumps(ids), _SCRIPT],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return list(json.loads(done.stdout))


def test_the_item_browser_shows_each_records_level_and_filters_by_it(tmp_path: Path) -> None:
    out = tmp_path / "r"
    with running_server(_sim()) as url:
        done = CliRunner().invoke(
            app,
            ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "4",
             "--concurrency", "2", "--max-tokens", "96,4096", "--out", str(out)],
        )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    page = (out / "report.html").read_text()
    items = page[page.index('<section id="items"') :]
    assert '<select id="f-level"><option value="">all</option><option>max_tokens=96</option>' in items
    summaries = re.findall(r"<summary>(.*?)</summary>", items, flags=re.S)
    assert len(summaries) == 8 and all(re.search(r"max_tokens=(96|4096)</span>", s) for s in summaries)
    assert sorted(_shown(page, {})) == ["max_tokens=4096"] * 4 + ["max_tokens=96"] * 4
    assert _shown(page, {"f-level": "max_tokens=96"}) == ["max_tokens=96"] * 4
