"""Scorers that judge the whole answer rather than a value extracted from it: `code` (HumanEval) and `ifeval`.

The judge hands them the final content (never the reasoning); each lives in a module of its own.
"""

from __future__ import annotations

from qualeval.scoring.extract import Extraction
from qualeval.scoring.rules import Score
from qualeval.tasks.spec import ScorerSpec
from qualeval.wire.models import Sample

__all__ = ["WHOLE_ANSWER", "judge_whole"]

WHOLE_ANSWER = frozenset({"code", "ifeval"})
"""Scorer kinds that read the whole content: no extraction ladder, no constraint, no naive extractor."""


def judge_whole(
    content: str, sample: Sample, scorer: ScorerSpec, *, allow_code: bool = False
) -> tuple[Extraction, Score]:
    """`allow_code`: whether a code answer's program may run (--allow-code-execution); it is refused otherwise."""
    if scorer.kind == "code":
        from qualeval.scoring.code import answer_code, score_code

        code = answer_code(content, sample.meta.get("entry_point"))
        if code is None:
            return Extraction(value=None, rung="none"), Score(correct=False, detail="no code in the answer")
        return Extraction(value=code, rung="code"), score_code(code, sample, scorer, allow_code=allow_code)
    from qualeval.scoring.ifeval import score_ifeval

    if not content.strip():
        return Extraction(value=None, rung="none"), Score(correct=False, detail="empty answer")
    return Extraction(value=content[:200], rung="content"), score_ifeval(content, sample)
