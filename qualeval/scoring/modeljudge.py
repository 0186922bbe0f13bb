"""An optional model judge for free-form answers the rules rejected (`--judge-base-url`, `--judge-model`).

The grader prompt follows the shape of SimpleQA's: the question, the gold target with its accepted aliases, the
predicted answer, and three grades (correct, incorrect, not attempted), with the rules a human grader would
apply. Any OpenAI-compatible endpoint serves; a reasoning judge's thinking is split off like any response.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from pydantic import SecretStr

from qualeval.errors import QualevalWarning
from qualeval.records import ClientConfig, Grade
from qualeval.tasks import Sample
from qualeval.wire import ChatClient, ChatRequest, Message

__all__ = ["GRADER_MARK", "ModelJudge", "grade_prompt", "model_judge_for", "read_grade"]

GRADER_MARK = "You are grading one answer to a question against its gold target."
"""The grader prompt's first line (the reference server recognises a grading request by it)."""

_TEMPLATE = """{mark}
Decide whether the predicted answer says the same thing as the gold target.

- CORRECT: the predicted answer contains the gold target's meaning (or one of the accepted answers) and \
nothing that contradicts it. Wording, capitalisation, punctuation, articles, spelled-out numbers ("six" for 6), \
extra detail that is true, and small spelling slips do not matter.
- INCORRECT: it gives a different answer, contradicts the gold target, or hedges between several candidates.
- NOT_ATTEMPTED: it declines, says it does not know, or gives no answer to this question.

Question: {question}
Gold target: {gold}
Also accepted: {aliases}
Predicted answer: {answer}

Reply with exactly one word: CORRECT, INCORRECT or NOT_ATTEMPTED."""

_WORDS = re.compile(r"\b(NOT[_ ]ATTEMPTED|INCORRECT|CORRECT)\b", re.IGNORECASE)
_VERDICTS = {"not_attempted": "not_attempted", "not attempted": "not_attempted", "incorrect": "incorrect"}


def _question(sample: Sample) -> str:
    users = [m.content for m in sample.messages if m.role == "user"]
    return users[-1] if users else "(not recorded)"


def grade_prompt(sample: Sample, answer: str) -> str:
    aliases = "; ".join(sample.aliases) or "(none)"
    return _TEMPLATE.format(
        mark=GRADER_MARK, question=_question(sample), gold=sample.gold, aliases=aliases, answer=answer.strip()
    )


def read_grade(reply: str) -> str:
    """The grade word in a reply; the first one it names, `unreadable` when there is none."""
    match = _WORDS.search(reply)
    if match is None:
        return "unreadable"
    return _VERDICTS.get(match.group(1).lower(), "correct")


@dataclass(frozen=True, slots=True)
class ModelJudge:
    client: ChatClient
    model: str
    max_tokens: int = 2048
    """Room for a reasoning judge to think before its one-word grade."""
    errors: list[str | None] = field(default_factory=list)
    """Each grade asked for: None when the judge replied, else why its endpoint failed (said when the judge ends)."""

    async def grade(self, sample: Sample, answer: str) -> Grade:
        request = ChatRequest(
            model=self.model,
            messages=(Message(role="user", content=grade_prompt(sample, answer)),),
            max_tokens=self.max_tokens,
            temperature=0.0,
        )
        response = await self.client.chat(request)
        reply = response.completion.content
        self.errors.append(response.error)
        if response.error is not None:
            return Grade(verdict="unreadable", reply=reply, model=self.model, error=response.error)
        return Grade(verdict=read_grade(reply), reply=reply, model=self.model)


@contextlib.asynccontextmanager
async def model_judge_for(
    base_url: str | None, model: str | None, concurrency: int = 8
) -> AsyncIterator[ModelJudge | None]:
    """A model judge on its own connection pool, or None when none was asked for. The key comes from
    QUALEVAL_JUDGE_API_KEY, else OPENAI_API_KEY; thinking is left to the judge's server."""
    if not base_url or not model:
        yield None
        return
    key = os.environ.get("QUALEVAL_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
    config = ClientConfig(
        base_url=base_url, api_key=SecretStr(key) if key else None, concurrency=concurrency, thinking_switch="none"
    )
    async with ChatClient(config) as client:
        judge = ModelJudge(client, model)
        yield judge
    _warn_failures(judge, base_url)


def _warn_failures(judge: ModelJudge, base_url: str) -> None:
    # a judge that never answered leaves every rejected answer wrong: unseen, the accuracy reads as the rules' alone
    failed = [e for e in judge.errors if e is not None]
    if failed:
        warnings.warn(
            f"the model judge {judge.model} at {base_url} failed {len(failed)} of {len(judge.errors)} grades "
            f"({failed[0]}): those answers keep the rules' verdict (their grade is 'unreadable')",
            QualevalWarning,
            stacklevel=2,
        )
