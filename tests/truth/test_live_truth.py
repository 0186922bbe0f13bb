"""Known truth, live: the reference server answers from a key whose answers are right for the items of RIGHT and
wrong for the rest, in every wire format it reproduces. A run gives exactly the known accuracy, per level, and
`compare` finds exactly the discordant pairs the two keys were built with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qualeval.sim import Behaviour, Latency, SimConfig, running_server
from tests.truth import known
from tests.truth.known import RIGHT, N

FLAVOURS = (
    "vllm",
    "vllm-0.13",
    "vllm-0.10",
    "sglang",
    "llamacpp",
    "ollama",
    "deepseek",
    "openrouter",
    "openai",
    "inline-think",
    "think-close-only",
    "harmony",
    "plain",
)
THINKS = ("vllm", "vllm-0.10", "sglang", "llamacpp", "deepseek", "inline-think", "think-close-only", "harmony")
"""Flavours whose thinking comes back as text: a small budget cuts it off before any answer."""


def _key(kind: known.Kind, right: frozenset[int], folder: Path) -> Path:
    """The server's answer key: the gold where the item is in `right`, else the wrong answer's value."""
    rows = [{"question": doc["question"], "answer": doc["answer"] if i in right else _wrong(kind, i)}
            for i, doc in enumerate(kind.docs)]  # fmt: skip
    return known.write_jsonl(folder / f"key-{len(right)}.jsonl", rows)


def _wrong(kind: known.Kind, i: int) -> object:
    """Item i's wrong answer, as the key states it."""
    gold = kind.docs[i]["answer"]
    if kind.name == "numeric":
        return gold + 1
    if kind.name == "regex":
        return str(int(gold) + 1)
    return known.NAMES[(i + 1) % N]


def _server(flavour: str, key: Path, **kw: object):  # type: ignore[no-untyped-def]
    behaviour = Behaviour(accuracy=1.0, trap_rate=0.0, reasoning_tokens=kw.pop("reasoning_tokens", 60))  # type: ignore[arg-type]
    return running_server(
        SimConfig(flavour=flavour, port=0, answers=key, behaviour=behaviour, latency=Latency(burst=True), **kw)  # type: ignore[arg-type]
    )


def _run(qualeval, url: str, task: Path, out: Path, *flags: str):  # type: ignore[no-untyped-def]
    return qualeval("run", "--base-url", url, "--model", "sim", "--task", task, "--out", out, "--concurrency", "4",
                    *flags)  # fmt: skip


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_every_wire_format_gives_the_known_accuracy(qualeval, tmp_path: Path, flavour: str):
    kind = known.KINDS["numeric"]()
    task, key = known.write_task(kind, tmp_path), _key(kind, RIGHT, tmp_path)
    with _server(flavour, key) as url:
        done = _run(qualeval, url, task, tmp_path / "run")
    summary = done.summary(tmp_path / "run", "truth_numeric")
    assert (summary["n"], summary["correct"]) == (N, len(RIGHT)), summary


@pytest.mark.parametrize("name", ["regex", "alias_match"])
def test_every_value_scorer_gives_the_known_accuracy_live(qualeval, tmp_path: Path, name: str):
    kind = known.KINDS[name]()
    task, key = known.write_task(kind, tmp_path), _key(kind, RIGHT, tmp_path)
    with _server("vllm", key) as url:
        done = _run(qualeval, url, task, tmp_path / "run")
    summary = done.summary(tmp_path / "run", f"truth_{name}")
    assert (summary["n"], summary["correct"]) == (N, len(RIGHT)), summary


@pytest.mark.parametrize("flavour", ["think-close-only", "vllm", "inline-think"])
def test_a_budget_sweep_gives_the_known_accuracy_per_level(qualeval, tmp_path: Path, flavour: str):
    """A budget far below the thinking cuts every item off inside it: nothing is read off the cut reasoning."""
    kind = known.KINDS["numeric"]()
    task, key = known.write_task(kind, tmp_path), _key(kind, RIGHT, tmp_path)
    with _server(flavour, key, reasoning_tokens=300) as url:
        done = _run(qualeval, url, task, tmp_path / "run", "--max-tokens", "24,4096")
    assert done.code == 0, done.stderr
    report = json.loads((tmp_path / "run" / "summary.json").read_text())["tasks"]["truth_numeric"]
    cells = {label: level["accuracy"] for label, level in report["levels"].items()}
    small = next(c for label, c in cells.items() if "24" in label)
    large = next(c for label, c in cells.items() if "4096" in label)
    assert (small["n"], small["correct"]) == (N, 0)
    assert (large["n"], large["correct"]) == (N, len(RIGHT))


def test_compare_finds_the_discordant_pairs_the_keys_were_built_with(qualeval, tmp_path: Path):
    kind = known.KINDS["alias_match"]()
    task = known.write_task(kind, tmp_path)
    other = frozenset({0, 1, 3, 4, 6})  # loses 2, 5, 7, 9 and gains 3, 6 against RIGHT
    for name, right in (("a", RIGHT), ("b", other)):
        with _server("vllm", _key(kind, right, tmp_path)) as url:
            assert _run(qualeval, url, task, tmp_path / name).code == 0
    done = qualeval("compare", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "cmp")
    assert done.code == 0, done.stderr
    compared = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    figures = compared["tasks"]["truth_alias_match"]
    assert figures["pairs"] == N
    assert figures["accuracy_a"] == pytest.approx(len(RIGHT) / N)
    assert figures["accuracy_b"] == pytest.approx(len(other) / N)
    assert (figures["a_right_b_wrong"], figures["a_wrong_b_right"]) == (len(RIGHT - other), len(other - RIGHT))
    assert sorted(figures["flipped_to_wrong"]) == sorted(known.sample_id(kind, i) for i in RIGHT - other)


def test_repeated_sampling_counts_only_the_samples_the_model_answered(qualeval, tmp_path: Path):
    """Every answer the server gives is right; some requests fail at the endpoint and are not retried. A failed
    request is no wrong sample: mean, maj@k and pass@k are all 1."""
    kind = known.KINDS["numeric"]()
    task, key = known.write_task(kind, tmp_path), _key(kind, frozenset(range(N)), tmp_path)
    with _server("vllm", key, faults={"500": 0.3}) as url:
        done = _run(qualeval, url, task, tmp_path / "run", "--samples-per-item", "3", "--temperature", "0.7",
                    "--max-retries", "0", "--no-probe")  # fmt: skip
    assert done.code == 3, done.stderr  # a run with endpoint errors says so in its exit code
    report = json.loads((tmp_path / "run" / "summary.json").read_text())["tasks"]["truth_numeric"]
    assert report["summary"]["endpoint_errors"] > 0
    assert report["summary"]["accuracy"] == 1.0
    repeated = report["repeated"]
    assert (repeated["mean"], repeated["maj_at_k"], repeated["pass_at_k"]) == (1.0, 1.0, 1.0)
    assert all(value == 1.0 for value in repeated["pass_at"].values())


def _runs(qualeval, tmp_path: Path, kind: known.Kind, rights: dict[str, frozenset[int]], *flags: str) -> Path:  # type: ignore[no-untyped-def]
    """One run per answer key, each against a fresh reference server: run directories named as `rights`."""
    task = known.write_task(kind, tmp_path)
    for name, right in rights.items():
        (tmp_path / name).mkdir()
        with _server("vllm", _key(kind, right, tmp_path / name)) as url:
            assert _run(qualeval, url, task, tmp_path / name / "run", *flags).code == 0
    return tmp_path


@pytest.mark.parametrize("axis", [("--reasoning-effort", "low,high"), ("--thinking-pair",)])
def test_an_effort_or_thinking_sweep_gives_the_known_accuracy_per_level(qualeval, tmp_path: Path, axis):  # type: ignore[no-untyped-def]
    """The server answers from its key whatever the effort or thinking switch: every level's accuracy is known."""
    kind = known.KINDS["numeric"]()
    task, key = known.write_task(kind, tmp_path), _key(kind, RIGHT, tmp_path)
    with _server("vllm", key) as url:
        done = _run(qualeval, url, task, tmp_path / "run", *axis)
    assert done.code == 0, done.stderr
    report = json.loads((tmp_path / "run" / "summary.json").read_text())["tasks"]["truth_numeric"]
    cells = [level["accuracy"] for level in report["levels"].values()]
    assert len(cells) == 2 and all((c["n"], c["correct"]) == (N, len(RIGHT)) for c in cells)
    assert report["summary"]["accuracy"] is None  # nothing pooled over levels that asked differently


def test_compare_with_a_rerun_measures_no_noise_where_there_is_none(qualeval, tmp_path: Path):
    """A greedy rerun on a fresh server answers as the first run did: zero discordant pairs, and B's loss of four
    items is what compare reports, read against noise: four items lost and none gained (McNemar p = 0.125) cannot be
    told from chance."""
    kind = known.KINDS["numeric"]()
    other = RIGHT - {0, 1, 2, 4}
    root = _runs(qualeval, tmp_path, kind, {"a": RIGHT, "a2": RIGHT, "b": other})
    done = qualeval("compare", root / "a" / "run", root / "a2" / "run", root / "b" / "run", "--out", root / "cmp")
    assert done.code == 0, done.stderr
    compared = json.loads((root / "cmp" / "compare.json").read_text())
    noise = compared["noise"]["truth_numeric"]
    assert (noise["pairs"], noise["discordant"], noise["difference"]) == (N, 0, 0.0)
    figures = compared["tasks"]["truth_numeric"]
    assert (figures["a_right_b_wrong"], figures["a_wrong_b_right"]) == (4, 0)
    assert figures["difference"] == pytest.approx(-4 / N)
    assert figures["within_noise"] is True and figures["rerun_moved"] == 0.0
    assert figures["noise_reading"].startswith("within noise: McNemar p = 0.125")
    assert "B - A against noise" in done.stdout


def test_board_and_gate_on_constructed_configs(qualeval, tmp_path: Path):
    kind = known.KINDS["numeric"]()
    worse = frozenset()
    root = _runs(qualeval, tmp_path, kind, {"base": RIGHT, "same": RIGHT, "worse": worse})
    runs = [root / name / "run" for name in ("base", "same", "worse")]
    done = qualeval("board", *runs, "--baseline", runs[0], "--out", root / "board")
    assert done.code == 0, done.stderr
    board = json.loads((root / "board" / "board.json").read_text())
    configs = list(board["tasks"]["truth_numeric"]["configs"].values())
    assert [(c["accuracy"]["n"], c["accuracy"]["correct"]) for c in configs] == [(N, 7), (N, 7), (N, 0)]
    assert [c["difference"] for c in configs[1:]] == [0.0, pytest.approx(-0.7)]
    policy = root / "gate.yaml"
    policy.write_text("default:\n  accuracy: {max_drop: 0.05}\n")
    # losing every right answer is a drop no item count could hide; the same answers cannot show a 5-point margin
    # on ten items, so that is inconclusive, never a GO
    lost = qualeval("gate", runs[2], "--baseline", runs[0], "--policy", policy, "--out", root / "g1")
    same = qualeval("gate", runs[1], "--baseline", runs[0], "--policy", policy, "--out", root / "g2")
    assert (lost.code, same.code) == (1, 4), (lost.stdout, same.stdout)


def test_a_run_the_server_could_not_answer_has_no_accuracy_and_fails_its_threshold(qualeval, tmp_path: Path):
    """A reference server keyed for other questions answers none of these: nothing was judged, so there is no
    accuracy (not 0%), the run says whose answers they were, and it exits 3 (no answer of the model's at all,
    whatever --fail-under says), never 0."""
    kind = known.KINDS["numeric"]()
    task = known.write_task(kind, tmp_path)
    other = known.write_jsonl(tmp_path / "other.jsonl", [{"question": "What is the colour of the sky?", "answer": 1}])
    with _server("vllm", other) as url:
        done = _run(qualeval, url, task, tmp_path / "run", "--fail-under", "0.5")
    assert done.code == 3 and "error: no item was answered by the model" in done.stderr, done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())["tasks"]["truth_numeric"]["summary"]
    assert (summary["n"], summary["accuracy"], summary["unknown_questions"]) == (0, None, N)
    assert "answer key does not hold" in done.stderr  # whose answers they were: the terminal, and the report
    assert "did not know the question" in (tmp_path / "run" / "report.md").read_text()
