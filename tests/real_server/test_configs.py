"""Real serving configs of llama-server on the same items: SmolLM2-135M-Instruct at temperature 0 under its f16 KV
cache (twice: the rerun is the noise floor), a q8_0 KV cache, a q4_0 KV cache with flash attention, and SmolLM2
drafting for itself (speculative decoding), then `qualeval board` and `qualeval gate` over the runs.

What is certain by construction is asserted exactly (every run answers every item; the board names each config
and pairs every item; the gate's exit code is its verdict's). What the real server shows robustly is asserted
loosely: greedy decoding on one server repeats itself almost word for word, a model drafting for itself writes
the baseline's words with most drafted tokens accepted and that acceptance reaches the board, and a 4-bit KV
cache changes no fewer of the words than an 8-bit one does. No timing is asserted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qualeval.figures.gate import EXIT_CODES
from tests.real_server.conftest import SMOLLM2, SMOLLM2_ARGS, LlamaServer
from tests.real_server.test_runs import final_records, qualeval

pytestmark = [pytest.mark.real_server, pytest.mark.real_model]

ITEMS = 20
CONFIGS = {
    "f16": [],
    "f16-again": [],
    "q8_0": ["-ctk", "q8_0", "-ctv", "q8_0"],
    "q4_0-fa": ["-ctk", "q4_0", "-ctv", "q4_0", "-fa", "on"],
    "draft": ["-md", str(SMOLLM2), "--spec-type", "draft-simple", "--spec-draft-n-max", "4"],
}
"""Extra llama-server flags per config; every run's folder is its config's name."""
POLICY = """\
default:
  accuracy: {max_drop: 0.05}
  endpoint_errors: {max: 0}
  truncated: {max_share: 0.5}
  output_tokens: {within: 0.25}
"""
"""No speed clause: speeds measured one server after another on a shared machine are not a config's."""


def serve_and_run(binary: Path, logs: Path, port: int, name: str, out: Path) -> None:
    """One server at a time, all on one port: the runs' manifests then differ in no setting of qualeval's."""
    server = LlamaServer(binary, SMOLLM2, logs / f"{name}.log", args=[*SMOLLM2_ARGS, *CONFIGS[name]])
    server.port = port
    server.start()
    try:
        done = qualeval(
            "run", "--base-url", server.url, "--model", "smollm2", "--task", "knowledge_qa", "--limit", str(ITEMS),
            "--concurrency", "1", "--warmup", "0", "--max-tokens", "40", "--temperature", "0", "--no-probe",
            "--constraint", "off", "--out", str(out / name),
        )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-2000:]


def words(out: Path) -> dict[str, str]:
    return {r["sample_id"]: r["content"] for r in final_records(out)}


def identical(a: Path, b: Path) -> float:
    left, right = words(a), words(b)
    return sum(left[k] == right[k] for k in left) / len(left)


def board_of(out: Path) -> dict[str, Any]:
    runs = [str(out / name) for name in CONFIGS if name != "f16-again"]
    done = qualeval("board", *runs, "--rerun", str(out / "f16-again"), "--out", str(out / "board"))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((out / "board" / "board.json").read_text())


def gate(out: Path, name: str) -> tuple[int, dict[str, Any]]:
    policy = out / "gate.yaml"
    policy.write_text(POLICY)
    folder = out / f"gate-{name}"
    done = qualeval(
        "gate", str(out / name), "--baseline", str(out / "f16"), "--rerun", str(out / "f16-again"),
        "--policy", str(policy), "--out", str(folder),
    )  # fmt: skip
    assert done.returncode in EXIT_CODES.values(), done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("verdict: "), done.stdout
    return done.returncode, json.loads((folder / "gate.json").read_text())


def test_serving_configs_side_by_side_on_a_board_and_through_a_gate(
    llama_binary: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    port = LlamaServer(llama_binary, SMOLLM2, logs / "port.log").port
    for name in CONFIGS:
        serve_and_run(llama_binary, logs, port, name, tmp_path)
        assert len(final_records(tmp_path / name)) == ITEMS
    board = board_of(tmp_path)
    names = {run["path"]: run["name"] for run in board["runs"]}
    task = board["tasks"]["knowledge_qa"]
    figures = {name: task["configs"][names[str(tmp_path / name)]] for name in CONFIGS if name != "f16-again"}
    for f in figures.values():
        assert f["answered"] == ITEMS and f["endpoint_errors"] == 0 and f["pairs"] == ITEMS
        assert f["accuracy"] is not None
    assert figures["f16"]["p_value"] is None and all(figures[n]["p_value"] is not None for n in ("q8_0", "draft"))
    noise = task["noise"]
    assert noise["pairs"] == ITEMS and noise["identical"] >= 0.9  # greedy, one request at a time: it repeats itself
    assert noise["identical"] == pytest.approx(identical(tmp_path / "f16", tmp_path / "f16-again"))
    # a model drafting for itself proposes the target's own greedy choices: most are accepted, and those that are
    # not run past the end of a short answer; greedy verification keeps the words the baseline wrote
    assert figures["draft"]["spec_acceptance"] is not None and figures["draft"]["spec_acceptance"] >= 0.5
    assert all(figures[n]["spec_acceptance"] is None for n in ("f16", "q8_0", "q4_0-fa"))
    drafted = [r["server_timings"] for r in final_records(tmp_path / "draft")]
    assert all(t and t.get("draft_n") for t in drafted)  # per request, from llama.cpp's timings
    shares = {n: identical(tmp_path / "f16", tmp_path / n) for n in CONFIGS}
    assert shares["draft"] >= 0.9 and shares["q4_0-fa"] <= shares["q8_0"], shares  # a coarser cache moves more
    verdicts = {n: gate(tmp_path, n) for n in ("q8_0", "q4_0-fa", "draft")}
    for code, result in verdicts.values():
        assert EXIT_CODES[result["verdict"]] == code
    with capsys.disabled():  # the figures, for the record (nothing above asserts on them)
        for n, f in figures.items():
            print(
                f"\n{n}: accuracy {f['accuracy']['accuracy']:.3f} diff {f['difference']} p {f['p_value']} "
                f"p_holm {f['p_adjusted']} identical {shares[n]:.2f} acceptance {f['spec_acceptance']} "
                f"tokens {f['answer_tokens']}"
            )
        print(f"noise: {json.dumps(noise)}")
        print({n: result["verdict"] for n, (code, result) in verdicts.items()})
