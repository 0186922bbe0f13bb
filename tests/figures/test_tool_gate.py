"""Tool calls in the gate, compare and board: the four tool clauses (tool_accuracy, parity, schema_valid,
leaked_markup) with their verdicts and refusals, McNemar on the per-item tool verdicts, and what a --stream-parity
run pairs with (like with like, said, never pooled)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qualeval.errors import InputError
from qualeval.figures import gate_runs, load_policy
from qualeval.figures.board import board_runs
from qualeval.figures.compare import compare_runs
from qualeval.records import ClauseVerdict, Record, TaskGate
from qualeval.report.board_pages import board_markdown
from qualeval.report.tool_sections import compare_tool_rows
from tests.figures.test_gate import policy
from tests.figures.test_gate_policy import one_error_line
from tests.figures.test_tool_figures import CALL, tool_record
from tests.figures.test_tool_report import tool_run

OTHER = CALL.model_copy(update={"arguments": '{"city": "Rome"}'})


def _right(n: int, level: str = "", stream: bool | None = True) -> list[Record]:
    return [tool_record(i, calls=[CALL], schema_valid=True, level=level, stream=stream) for i in range(n)]


def _leaky(n: int, wrong: int, level: str = "", stream: bool | None = True) -> list[Record]:
    """n items, the first `wrong` left as markup in the content (judged wrong), the rest right."""
    leaked = {"correct": False, "status": "markup_in_content", "calls": ()}
    return [
        tool_record(i, level=level, stream=stream, **leaked)  # type: ignore[arg-type]
        if i < wrong
        else tool_record(i, calls=[CALL], schema_valid=True, level=level, stream=stream)
        for i in range(n)
    ]


def _parity_run(n: int, discordant: int) -> list[Record]:
    """Each item streamed (stream=on) and not (stream=off); the first `discordant` non-streamed calls differ."""
    on = _right(n, "stream=on")
    off = [
        tool_record(i, calls=[OTHER if i < discordant else CALL], schema_valid=True, level="stream=off", stream=None)
        for i in range(n)
    ]
    return on + off


def _run(root: Path, records: list[Record], **config: object) -> Path:
    levels = sorted({r.level for r in records})
    root.mkdir(parents=True)
    run = {"tasks": ["bfcl"], "model": "m", "base_url": "http://127.0.0.1:1/v1", "out": str(root), **config}
    tasks = {"bfcl": {"spec": {"name": "bfcl", "doc_to_text": "{{ q }}", "scorer": "exact", "generator": "g"}}}
    manifest = {"fingerprint": "x", "config": run, "pinned": {"constraint": "off", "thinking_switch": "none"}}
    (root / "manifest.json").write_text(json.dumps({**manifest, "tasks": tasks}))
    (root / "summary.json").write_text(tool_run(records, root, levels=levels).model_dump_json())
    return root


TOOLS = (
    "default:\n  tool_accuracy: {max_drop: 0.05}\n  parity: {min: 0.95}\n  schema_valid: {min: 0.98}\n"
    "  leaked_markup: {max_share: 0.05}\n"
)


def _clauses(task: TaskGate) -> dict[str, ClauseVerdict]:
    return {c.clause: c for c in task.clauses}


def test_a_leaky_candidate_fails_the_tool_clauses_and_a_plain_one_has_no_parity(tmp_path: Path) -> None:
    base = _run(tmp_path / "base", _right(200))
    cand = _run(tmp_path / "cand", _leaky(200, 40), temperature=0.5)
    result = gate_runs(baseline=base, candidate=cand, policy_path=policy(tmp_path / "p", TOOLS))
    found = _clauses(result.tasks["bfcl"])
    drop = found["tool_accuracy"]
    assert drop.verdict == "NO-GO" and drop.value == pytest.approx(-0.2) and drop.pairs == 200
    assert drop.p_value is not None and drop.p_value < 1e-6
    leak = found["leaked_markup"]
    assert leak.verdict == "NO-GO" and leak.value == pytest.approx(0.2) and "40 of the candidate's 200" in leak.detail
    schema = found["schema_valid"]
    assert schema.verdict == "GO" and schema.value == 1.0  # 160 calls, all valid
    parity = found["parity"]
    assert parity.verdict == "INVALID" and "--stream-parity" in parity.detail
    assert result.verdict == "INVALID" and result.exit_code == 5


def test_a_parity_candidate_is_gated_on_its_parity_and_paired_on_the_plain_runs_side(tmp_path: Path) -> None:
    base = _run(tmp_path / "base", _right(200))
    cand = _run(tmp_path / "cand", _parity_run(200, 20), stream_parity=True, temperature=0.5)
    rule = policy(tmp_path / "p", "default:\n  parity: {min: 0.95}\n  tool_accuracy: {max_drop: 0.05}\n")
    result = gate_runs(baseline=base, candidate=cand, policy_path=rule)
    found = _clauses(result.tasks["bfcl"])
    parity = found["parity"]
    assert parity.verdict == "NO-GO" and parity.value == pytest.approx(0.9)
    assert "180 of 200" in parity.detail and "bfcl/test/0" in parity.detail
    assert "@ stream" not in parity.detail  # an item sent both ways is named at neither side
    # the candidate's streamed side is paired with the streamed baseline: every verdict right, no drop
    assert found["tool_accuracy"].pairs == 200 and found["tool_accuracy"].value == 0
    assert result.streams is not None and "stream=on responses are paired" in result.streams
    relaxed = policy(tmp_path / "q", "default:\n  parity: {min: 0.9}\n")
    assert gate_runs(baseline=base, candidate=cand, policy_path=relaxed).verdict == "GO"


def test_a_tool_clause_on_a_task_with_no_tool_items(tmp_path: Path) -> None:
    plain = [tool_record(i, tools=False) for i in range(20)]
    base = _run(tmp_path / "base", plain)
    cand = _run(tmp_path / "cand", plain, temperature=0.5)
    # under default: not applied, said; the task is gated on its other clauses
    text = "default:\n  schema_valid: {min: 0.98}\n  endpoint_errors: {max: 0}\n"
    task = gate_runs(baseline=base, candidate=cand, policy_path=policy(tmp_path / "p", text)).tasks["bfcl"]
    assert [c.clause for c in task.clauses] == ["endpoint_errors"]
    assert task.notes == ["schema_valid: not applied, the task has no tool-call items"]
    # named under the task: refused, one line naming the clause
    with pytest.raises(InputError, match=r"bfcl\.parity: task 'bfcl' has no tool-call item"):
        gate_runs(baseline=base, candidate=cand, policy_path=policy(tmp_path / "q", "bfcl:\n  parity: {min: 0.9}\n"))
    # only tool clauses, and no tool item anywhere: nothing to gate, refused
    with pytest.raises(InputError, match="no clause applies"):
        gate_runs(baseline=base, candidate=cand, policy_path=policy(tmp_path / "r", "default:\n  parity: {min: 0.9}\n"))


@pytest.mark.parametrize(
    ("clause", "said"),
    [
        ("parity: {min: 1.5}", "default.parity.min: 1.5 is not a share between 0 and 1"),
        ("schema_valid: {min: -0.1}", "default.schema_valid.min: -0.1 is not a share between 0 and 1"),
        ("leaked_markup: {max_share: 2}", "default.leaked_markup.max_share: 2 is not a share between 0 and 1"),
        ("leaked_markup: {max_share: true}", "default.leaked_markup.max_share: true is a boolean"),
        ("tool_accuracy: {max_drop: 0}", "default.tool_accuracy.max_drop: 0 allows no drop at all"),
        ("parity: {max: 0.9}", "default.parity.max: not a key of a policy"),
        ("parity:\n", "default.parity: empty"),
    ],
)
def test_a_bad_tool_clause_is_refused_naming_the_value(tmp_path: Path, clause: str, said: str) -> None:
    with pytest.raises(InputError) as err:
        load_policy(policy(tmp_path, f"default:\n  {clause}\n"))
    assert said in str(err.value)


def test_the_tool_clauses_load_and_a_bad_value_is_one_error_line(tmp_path: Path) -> None:
    read = load_policy(policy(tmp_path / "p", TOOLS)).root["default"]
    assert read.tool_accuracy is not None and read.tool_accuracy.max_drop == 0.05
    assert read.parity is not None and read.parity.min == 0.95
    assert read.schema_valid is not None and read.schema_valid.min == 0.98
    assert read.leaked_markup is not None and read.leaked_markup.max_share == 0.05
    base = _run(tmp_path / "base", _right(5))
    cand = _run(tmp_path / "cand", _right(5), temperature=0.5)
    line = one_error_line(
        cand, "--baseline", base, "--policy", policy(tmp_path / "q", "default:\n  parity: {min: 95}\n")
    )
    assert "default.parity.min: 95 is not a share" in line


def test_compare_and_board_test_the_per_item_tool_verdicts(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", _right(30))
    b = _run(tmp_path / "b", _leaky(30, 10), temperature=0.5)
    t = compare_runs(a, b).tasks["bfcl"]
    assert t.tools is not None and t.tools.paired is not None
    p = t.tools.paired
    assert (p.pairs, p.a_right_b_wrong, p.a_wrong_b_right) == (30, 10, 0)
    assert p.p_value == pytest.approx(2 / 1024) and p.within_noise is False
    rows = {row[0]: row[1:] for row in compare_tool_rows(t.tools)}
    assert rows["tool accuracy (30 paired tool-call items)"][:2] == ("100.0%", "66.7%")
    assert rows["tool accuracy (30 paired tool-call items)"][2] == "-33.3 points (McNemar p = 0.001953; beyond noise)"
    board = board_runs([a, b], labels=["clean", "leaky"])
    configs = board.tasks["bfcl"].configs
    assert configs["clean"].tool_paired is None
    leaky = configs["leaky"].tool_paired
    assert leaky is not None and leaky.a_right_b_wrong == 10 and leaky.p_adjusted == pytest.approx(2 / 1024)
    assert "-33.3 points (McNemar p = 0.001953; beyond noise) on 30" in board_markdown(board)


def test_compare_pairs_a_parity_run_on_the_side_a_plain_run_was_sent(tmp_path: Path) -> None:
    plain = _run(tmp_path / "plain", _leaky(10, 3, stream=None), stream=False)  # --no-stream
    both = _run(tmp_path / "both", _parity_run(10, 4), stream_parity=True, temperature=0.5)
    result = compare_runs(plain, both)
    t = result.tasks["bfcl"]
    # the parity run's stream=off side pairs with the non-streamed run: 10 pairs, not 20 pooled
    assert list(result.tasks) == ["bfcl"] and t.pairs == 10
    assert t.tools is not None and t.tools.b.responses == 10
    assert result.streams is not None and "stream=off responses are paired" in result.streams
    # its parity is its own, over both its sides
    assert t.tools.b.parity is not None and (t.tools.b.parity.pairs, t.tools.b.parity.agree) == (10, 6)


def test_two_parity_runs_pair_like_with_like_and_say_so(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", _parity_run(10, 0), stream_parity=True)
    b = _run(tmp_path / "b", _parity_run(10, 5), stream_parity=True, temperature=0.5)
    result = compare_runs(a, b)
    assert list(result.tasks) == ["bfcl @ stream=off", "bfcl @ stream=on"]
    assert all(t.pairs == 10 for t in result.tasks.values())
    assert result.streams is not None and "streamed responses pair with streamed ones" in result.streams
    on = result.tasks["bfcl @ stream=on"].tools
    assert on is not None and on.b.parity is not None and on.b.parity.agree == 5  # each group shows the run's parity
    board = board_runs([a, b])
    assert board.streams == result.streams and "every run was sent with --stream-parity" in board_markdown(board)


def test_a_parity_run_beside_plain_runs_sent_both_ways_is_refused(tmp_path: Path) -> None:
    on = _run(tmp_path / "on", _right(5))
    off = _run(tmp_path / "off", _right(5, stream=None), stream=False)
    both = _run(tmp_path / "both", _parity_run(5, 0), stream_parity=True, temperature=0.5)
    with pytest.raises(InputError, match=r"sent streamed and .* not, beside a --stream-parity run"):
        board_runs([on, off, both])
