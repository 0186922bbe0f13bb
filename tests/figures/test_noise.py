"""The noise floor under a comparison: the smallest difference its items can detect, and the run-to-run noise of
two runs of one configuration, against which B - A is read."""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist

from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.figures.noise import minimum_detectable
from qualeval.sim import Behaviour, Latency, SimConfig, running_server


def test_the_minimum_detectable_difference_solves_mcnemars_sample_size() -> None:
    z_a, z_b = NormalDist().inv_cdf(0.975), NormalDist().inv_cdf(0.8)
    for pairs, discordant in ((100, 10), (500, 40), (1319, 200)):
        d = minimum_detectable(pairs, discordant)
        assert d is not None
        p = discordant / pairs
        needed = (z_a * math.sqrt(p) + z_b * math.sqrt(p - d * d)) ** 2 / (d * d)  # Connor's n for this d
        assert abs(needed - pairs) < 1e-6 * pairs
    assert minimum_detectable(400, 40) < minimum_detectable(100, 10)  # type: ignore[operator]  # more items
    assert minimum_detectable(100, 30) > minimum_detectable(100, 10)  # type: ignore[operator]  # more disagreement
    # little discordance: a difference d needs d of the pairs discordant, so the floor is where p = d
    for pairs in (100, 1319):
        d = minimum_detectable(pairs, 0)
        assert d is not None and d == minimum_detectable(pairs, 1)
        assert abs(math.sqrt(pairs) * d - z_a * math.sqrt(d) - z_b * math.sqrt(d - d * d)) < 1e-9
    assert minimum_detectable(0, 0) is None and minimum_detectable(2, 0) is None


def _run(url: str, out: Path) -> None:
    done = CliRunner().invoke(
        app,
        ["run", "--base-url", url, "--model", "sim", "--task", "knowledge_qa", "--limit", "60", "--warmup", "0",
         "--no-probe", "--constraint", "off", "--temperature", "0.8", "--out", str(out)],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr


def test_a_rerun_of_a_measures_the_noise_and_b_is_read_against_it(tmp_path: Path) -> None:
    behaviour = Behaviour(reasoning_tokens=10, accuracy=0.7, trap_rate=0.0)
    sim = SimConfig(port=0, tasks=("knowledge_qa",), behaviour=behaviour, latency=Latency(burst=True))
    with running_server(sim) as url:  # sampled: each repeat of a request on this server draws anew
        for name in ("a", "a2", "b"):
            _run(url, tmp_path / name)
    worse = SimConfig(port=0, tasks=("knowledge_qa",), behaviour=Behaviour(reasoning_tokens=10, accuracy=0.1),
                      latency=Latency(burst=True))  # fmt: skip
    with running_server(worse) as url:
        _run(url, tmp_path / "worse")
    runner = CliRunner()
    same = runner.invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "a2"), str(tmp_path / "b")])
    assert same.exit_code == 0, same.stderr
    result = json.loads((tmp_path / "b" / "compare" / "compare.json").read_text())
    noise = result["noise"]["knowledge_qa"]
    assert noise["pairs"] == 60 and noise["discordant"] > 0 and noise["identical"] < 1
    task = result["tasks"]["knowledge_qa"]
    # B is A's config drawn again: McNemar rejects it at alpha 0.05 on one server start in twenty (the server's
    # sampling draws on a nonce drawn when it starts), so the test holds the one reading rather than its outcome
    chance = task["p_value"] >= 0.05 or abs(task["difference"]) <= task["rerun_moved"]
    assert task["detectable"] is not None and task["within_noise"] is chance
    assert task["rerun_moved"] == abs(noise["difference"])
    assert "A against its rerun" in " ".join(same.stderr.split())
    assert "Run-to-run noise" in (tmp_path / "b" / "compare" / "compare.html").read_text()
    apart = runner.invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "a2"), str(tmp_path / "worse")])
    assert apart.exit_code == 0, apart.stderr
    far = json.loads((tmp_path / "worse" / "compare" / "compare.json").read_text())["tasks"]["knowledge_qa"]
    assert far["difference"] < -0.3 and far["within_noise"] is False
    plain = runner.invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert plain.exit_code == 0, plain.stderr
    alone = json.loads((tmp_path / "b" / "compare" / "compare.json").read_text())
    # without a rerun, B - A is still read against chance on its own pairs
    assert alone["noise"] == {} and alone["tasks"]["knowledge_qa"]["rerun_moved"] is None
    assert alone["tasks"]["knowledge_qa"]["within_noise"] is (alone["tasks"]["knowledge_qa"]["p_value"] >= 0.05)
    bad = runner.invoke(app, ["compare", str(tmp_path / "a")])
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1
