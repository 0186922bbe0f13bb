"""`qualeval score` infers a template-opened thinking block from most of a file's lines, never from one.

The lines are real answers (tests/data/math_verdicts.json, answers of four models to MATH level 5 that a careful
grader decided); the tags are what a stray tag or a template-opened model would add to them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qualeval.records import OfflineItem
from qualeval.run.offline import SplitOptions, decide_lines, score_file
from qualeval.tasks import Task, load_task

DATA = Path(__file__).parent.parent / "data"
VERDICTS: list[dict[str, Any]] = json.loads((DATA / "math_verdicts.json").read_text(encoding="utf-8"))
STRAY = 7  # the line that carries a stray closing tag
PAIRED = (40, 151)  # the lines that carry a whole <think>…</think> block
CUT = range(0, len(VERDICTS), 9)  # in the template-opened file: cut off by the budget inside the thinking
STOPPED = (13, 122)  # in the template-opened file: finished with no marker at all


def _task() -> Task:
    return load_task(str(DATA / "math_task.yaml"))


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _plain() -> list[dict[str, Any]]:
    return [{"id": str(i), "content": v["content"], "target": v["gold"]} for i, v in enumerate(VERDICTS)]


def _thought(content: str) -> str:
    """The working a line shows before its answer: the reasoning of a ZeroEval JSON answer, else a sentence."""
    try:
        said = json.loads(content)
    except ValueError:
        said = None
    return said["reasoning"] if isinstance(said, dict) and isinstance(said.get("reasoning"), str) else "Checking."


def _score(path: Path, split: SplitOptions | None = None) -> tuple[list[OfflineItem], list[str]]:
    said: list[str] = []
    judged = decide_lines(_task(), path, split=split, note=said.append)
    return [j.item for j in judged], said


def _accuracy(items: list[OfflineItem]) -> float:
    return sum(bool(i.correct) for i in items) / len(items)


def test_a_stray_tag_on_three_lines_leaves_every_other_line_a_plain_answer(tmp_path: Path) -> None:
    plain, _ = _score(_write(tmp_path / "plain.jsonl", _plain()))
    rows = _plain()
    rows[STRAY]["content"] = "</think>\n\n" + rows[STRAY]["content"]
    for i in PAIRED:
        rows[i]["content"] = f"<think>{_thought(rows[i]['content'])}</think>\n{rows[i]['content']}"
    tagged, said = _score(_write(tmp_path / "tagged.jsonl", rows))
    assert _accuracy(tagged) == _accuracy(plain) > 0.3
    assert [(i.correct, i.extracted) for i in tagged] == [(i.correct, i.extracted) for i in plain]
    assert not any(i.status == "reasoning_truncated" for i in tagged)
    assert f"3 of {len(rows)} lines show thinking markers" in said[0]


def _opened_rows() -> list[dict[str, Any]]:
    """A template-opened model's file: `thinking</think>answer`, some lines cut off inside the thinking (whose
    working already names the gold), two that stopped with no marker at all."""
    rows = []
    for i, v in enumerate(VERDICTS):
        thought = _thought(v["content"])
        if i in CUT:
            row = {"content": f"{thought} So far it looks like {v['gold']}, but", "finish_reason": "length"}
        elif i in STOPPED:
            row = {"content": f"{thought} The answer is {v['gold']}.", "finish_reason": "stop"}
        else:
            row = {"content": f"{thought}</think>\n\n{v['content']}", "finish_reason": "stop"}
        rows.append({"id": str(i), "target": v["gold"], **row})
    return rows


def test_a_template_opened_file_reads_its_untagged_cut_lines_as_cut_reasoning(tmp_path: Path) -> None:
    items, said = _score(_write(tmp_path / "opened.jsonl", _opened_rows()))
    for i, item in enumerate(items):
        if i in CUT:
            assert (item.status, item.extracted, item.correct) == ("reasoning_truncated", None, False), i
        elif i in STOPPED:  # the model stopped inside its thinking: no answer was given
            assert (item.status, item.extracted, item.correct) == ("empty_content", None, False), i
    finished = [it for i, it in enumerate(items) if i not in CUT and i not in STOPPED]
    plain, _ = _score(_write(tmp_path / "plain.jsonl", _plain()))
    kept = [it for i, it in enumerate(plain) if i not in CUT and i not in STOPPED]
    assert [(i.correct, i.extracted) for i in finished] == [(i.correct, i.extracted) for i in kept]
    voters = len(items) - len(CUT)
    assert f"{voters - len(STOPPED)} of {voters} lines show only a closing thinking marker" in said[0]
    assert "--thinking-opened" in said[0]


def test_close_only_lines_short_of_most_do_not_open_the_file(tmp_path: Path) -> None:
    rows = _opened_rows()
    few = len(rows) // 3  # a third of the lines close a template-opened block; the rest are plain answers
    for i, row in enumerate(rows):
        if i >= few:
            row.update(content=VERDICTS[i]["content"], finish_reason="stop")
    items, said = _score(_write(tmp_path / "few.jsonl", rows))
    assert all(item.status != "empty_content" for item in items[few:])
    close = [i for i in range(few) if i not in CUT and i not in STOPPED]
    assert f"{len(close)} of {len(rows)} lines show thinking markers ({len(close)} only a closing marker)" in said[0]
    assert "plain answers" in said[0]


@pytest.mark.parametrize("opened", [True, False])
def test_the_users_flag_wins_over_the_inference(tmp_path: Path, opened: bool) -> None:
    path = _write(tmp_path / "opened.jsonl", _opened_rows())
    items, said = _score(path, SplitOptions(opened=opened))
    assert items[STOPPED[0]].status == ("empty_content" if opened else "ok")
    assert items[CUT[1]].status == ("reasoning_truncated" if opened else "answer_truncated")
    assert "lines show" not in said[0]
    rows = _plain()
    rows[STRAY]["content"] = "</think>\n\n" + rows[STRAY]["content"]
    stray = _write(tmp_path / "stray.jsonl", rows)
    items, _ = _score(stray, SplitOptions(opened=opened))
    assert (sum(i.status == "reasoning_truncated" for i in items) > 200) is opened


def test_score_file_by_path_infers_as_the_command_does(tmp_path: Path) -> None:
    rows = _plain()
    rows[STRAY]["content"] = "</think>" + rows[STRAY]["content"]
    _, summary = score_file(str(DATA / "math_task.yaml"), _write(tmp_path / "r.jsonl", rows))
    plain, _ = _score(_write(tmp_path / "plain.jsonl", _plain()))
    assert summary.accuracy == _accuracy(plain) and summary.statuses.get("reasoning_truncated", 0) == 0


def test_no_thinking_opened_on_the_command_line_keeps_untagged_lines_answers(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from qualeval.cli import app

    path = _write(tmp_path / "opened.jsonl", _opened_rows())
    base = ["score", "--task", str(DATA / "math_task.yaml"), "--responses", str(path)]
    for flag, status in (("--no-thinking-opened", "ok"), (None, "empty_content")):
        out = tmp_path / str(flag)
        result = CliRunner().invoke(app, [*base, "--out", str(out), *([flag] if flag else [])])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
        assert rows[STOPPED[0]]["status"] == status
