"""`scorer: regex` means what docs/scoring.md says: the pattern is searched in the answer text (never the reasoning)
and in the extracted value, and a constraint that would cut the answer to a value the pattern cannot match is not
sent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import qualeval
from qualeval.cli.output import shown_warnings
from qualeval.errors import InputError
from qualeval.reasoning.completion import Completion
from qualeval.records import TaskSpec
from qualeval.scoring.verdict import decide
from qualeval.sim import Behaviour
from qualeval.tasks import Task
from qualeval.tasks.load import parse_task
from qualeval.tasks.sample import Sample
from qualeval.wire.models import Message
from tests.conftest import ROOT, fast_sim, sim_url


def _readme_task() -> str:
    """The YAML of the docs' regex-scorer example (docs/scoring.md), as the page shows it."""
    page = (ROOT / "docs" / "scoring.md").read_text(encoding="utf-8")
    section = page[page.index("**A regex scorer**") :]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_the_readme_example_scores_every_right_answer_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tagged.yaml"
    path.write_text(_readme_task(), encoding="utf-8")
    right = Behaviour(accuracy=1.0, reasoning_tokens=30, trap_rate=0.5)
    # the probe runs: constraints as by default; the warnings shown as the CLI shows them
    with sim_url(fast_sim(tasks=(str(path),), behaviour=right)) as url, shown_warnings():
        result = qualeval.evaluate("sim", [str(path)], base_url=url, out=tmp_path / "run", warmup=0, max_retries=0)
    summary = result.summary.tasks["tagged_arithmetic"].summary
    assert summary.n == 2 and summary.accuracy == 1.0
    assert all(r.constraint is None or r.constraint.mode != "single" for r in result.records)
    warned = capsys.readouterr().err
    assert "warning:" in warned and "tagged_arithmetic" in warned and "Answer:\\s*{gold}\\b" in warned


TASK = Task(parse_task(Path("tagged.yaml"), "name: t\nsamples: [{question: q, answer: '1'}]\nanswer: {type: number}\n"
                       "scorer: {kind: regex, pattern: 'Answer:\\s*{gold}\\b'}\n"), None)  # fmt: skip


def _correct(content: str, gold: str = "42", reasoning: str = "", task: Task = TASK) -> bool:
    sample = Sample(id="t/0", task="t", messages=(Message(role="user", content="q"),), gold=gold)
    return decide(task, sample, Completion(reasoning=reasoning, content=content, status="ok")).score.correct


def test_the_pattern_is_searched_in_the_answer_text_not_full_matched() -> None:
    assert _correct("Six sevens.\n\nAnswer: 42 (checked twice)")
    assert not _correct("Six sevens.\n\nAnswer: 43")
    assert not _correct("Answer: 420")  # the pattern's own \b
    assert not _correct("So 42 it is.", reasoning="Answer: 42")  # the reasoning is never read


def test_the_extracted_value_is_tried_too_and_anchors_still_anchor() -> None:
    bare = Task(TASK.spec.model_copy(update={"scorer": TASK.spec.scorer.model_copy(update={"pattern": "^{gold}$"})}),
                None)  # fmt: skip
    assert _correct("The answer is 42.", task=bare)  # the value the ladder read is exactly the gold
    assert not _correct("The answer is 421.", task=bare)
    assert _correct("3.5", gold="3.5", task=bare) and not _correct("3x5", gold="3.5", task=bare)  # escaped gold


def _spec(pattern: str, answer: str = "number") -> TaskSpec:
    return TASK.spec.model_copy(
        update={
            "scorer": TASK.spec.scorer.model_copy(update={"pattern": pattern}),
            "answer": TASK.spec.answer.model_copy(update={"type": answer}),
        }
    )


def test_a_pattern_that_cannot_match_the_constrained_value_is_found_before_any_request() -> None:
    from qualeval.scoring.rules import constraint_cuts

    assert constraint_cuts(_spec(r"Answer:\s*{gold}\b")) == "regex"
    assert constraint_cuts(_spec(r"RESULT:\s*{gold}\b", "text")) == "json"
    assert constraint_cuts(_spec(r"\b{gold}\b")) is None
    assert constraint_cuts(_spec(r"^{gold}$")) is None
    assert constraint_cuts(TASK.spec.model_copy(update={"scorer": TASK.spec.scorer.model_copy(
        update={"kind": "numeric"})})) is None  # fmt: skip


def test_a_pattern_that_does_not_compile_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(
        "name: t\nsamples: [{question: q, answer: '1'}]\nscorer: {kind: regex, pattern: 'Answer: ({gold}'}\n"
    )
    with pytest.raises(InputError) as caught:
        parse_task(path)
    message = str(caught.value)
    assert "broken.yaml" in message and "scorer" in message and "Answer: ({gold}" in message and "\n" not in message
