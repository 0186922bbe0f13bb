"""Samples through the wire, the splitter, extraction and scoring: one record per request."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from qualeval.client import ChatClient, build_body
from qualeval.extract import Extraction, extract
from qualeval.models import ChatRequest, ChatResponse, Sample, Timing, Usage
from qualeval.score import Score, score
from qualeval.tasks.load import Task

__all__ = ["Record", "request_for", "run_samples", "score_response"]


class Record(BaseModel):
    """One request and everything it produced; the unit written to records.jsonl."""

    sample_id: str
    task: str
    attempt: int = 0
    """Which of K samples of the same item this is (0 when sampling once)."""
    final: bool = True
    request: dict[str, Any]
    """The JSON body sent, which never holds the API key."""
    reasoning: str
    content: str
    reasoning_source: str
    status: str
    finish_reason: str | None
    usage: Usage
    timing: Timing
    attempts: int
    """HTTP attempts it took (retries included)."""
    extraction: Extraction
    score: Score
    gold: str
    meta: dict[str, Any]
    error: str | None = None


def request_for(task: Task, sample: Sample, model: str, **overrides: Any) -> ChatRequest:
    """The request for a sample: the task's generation defaults, then any override that is not None."""
    gen = task.spec.generation
    values: dict[str, Any] = {
        "max_tokens": gen.max_tokens,
        "temperature": gen.temperature,
        "thinking": gen.thinking,
        "stop": gen.stop,
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ChatRequest(model=model, messages=sample.messages, **values)


def score_response(task: Task, sample: Sample, response: ChatResponse) -> tuple[Extraction, Score]:
    """Extract from the final content and score; a response that is not `ok` or truncated is not scored."""
    spec = task.spec
    if response.completion.status in ("transport_error", "content_filter"):
        nothing = Extraction(value=None, rung="none")
        return nothing, Score(correct=False, detail=f"not scored: {response.completion.status}")
    found = extract(response.completion.content, spec.answer, sample.choices)
    return found, score(found.value, sample, spec.scorer, spec.answer)


async def run_samples(
    client: ChatClient, task: Task, samples: Sequence[Sample], *, model: str, **overrides: Any
) -> list[Record]:
    """Send every sample (the client bounds concurrency) and score what comes back, in sample order."""

    async def one(sample: Sample) -> Record:
        request = request_for(task, sample, model, **overrides)
        response = await client.chat(request)
        found, verdict = score_response(task, sample, response)
        done = response.completion
        return Record(
            sample_id=sample.id,
            task=task.name,
            request=build_body(request, client.config),
            reasoning=done.reasoning,
            content=done.content,
            reasoning_source=done.reasoning_source,
            status=done.status,
            finish_reason=response.finish_reason,
            usage=response.usage,
            timing=response.timing,
            attempts=response.attempts,
            extraction=found,
            score=verdict,
            gold=sample.gold,
            meta=sample.meta,
            error=response.error,
        )

    return list(await asyncio.gather(*(one(s) for s in samples)))
