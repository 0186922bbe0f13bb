"""records.jsonl: the record of one request (one sample of one item at one load level) and its parts. A record
is read back into its type once; the views that summaries, speed figures and tables need are its methods."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SerializerFunctionWrapHandler, field_serializer, model_validator

from qualeval.records.body import SentBody
from qualeval.records.episodes import EpisodeRecord
from qualeval.records.probe import AppliedMode, ConstraintKind, ReasoningSource, Style
from qualeval.records.shaping import SHAPE_KEYS, Shape
from qualeval.records.statuses import (
    ENDPOINT_FAILED,
    NOT_THE_MODELS,
    Agreement,
    Rung,
    Status,
)
from qualeval.records.toolcalls import ToolsRecord
from qualeval.records.usage import ServerTimings, Timing, Usage
from qualeval.records.views import Outcome, Timed

__all__ = [
    "META_RESERVED",
    "ConstraintRecord",
    "Extraction",
    "FollowupRecord",
    "Grade",
    "Record",
    "Score",
]


class Grade(BaseModel):
    """A model judge's verdict on one free-form answer the rules did not accept, with its raw reply."""

    verdict: Literal["correct", "incorrect", "not_attempted", "unreadable"]
    reply: str
    model: str
    error: str | None = None
    """Why no verdict came back (the judge's endpoint failed); the verdict is then `unreadable`."""


class Extraction(BaseModel):
    value: str | None
    rung: Rung
    raw: str | None = None
    """The span the value was read from."""


class FollowupRecord(BaseModel):
    """Followup mode: the second request, what it sent and what came back, kept apart from the main figures."""

    request: SentBody = Field(default_factory=SentBody)
    """The JSON body it sent (never the API key)."""
    content: str = ""
    status: Status = "ok"
    error: str | None = None
    timing: Timing = Field(default_factory=Timing)
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 1


class ConstraintRecord(BaseModel):
    """What happened to the constraint of one request, kept in its record."""

    mode: AppliedMode
    kind: ConstraintKind | None = None
    """What was sent, which may be another kind than the answer's (a JSON-only convention sends json)."""
    style: Style | None = None
    held: bool | None = None
    """Single mode: what came back satisfied the constraint. Followup mode: the reply satisfied it *and* agrees
    with the content (or filled in an answer the content holds). None: nothing was sent or nothing came back."""
    valid: bool | None = None
    """Whether the reply that carried the constraint satisfied it, agreeing or not."""
    agreement: Agreement | None = None
    """Followup mode: how the follow-up's answer stands to the content's (qualeval.scoring.verdict)."""
    followup: FollowupRecord | None = None
    """Followup mode: the second request, apart from the main one (None: the main request brought no answer)."""


class Score(BaseModel):
    correct: bool | None
    """None: not scored, so in no accuracy: no answer of the model's (an endpoint error, a question a reference
    server did not know) or no right answer to find (a workload's synthetic prompt). A record says so (Record
    writes and reads it null), never false, which anyone summing `correct` would count as a wrong answer; runs
    written before stored false there, and load as null."""
    detail: str = ""
    f1: float | None = None
    """Free-form answers: the best token F1 against the gold and its aliases, kept beside the verdict."""
    measures: dict[str, tuple[float, float]] | None = None
    """Figures a scorer reports besides the verdict, each as (hits, out of): IFEval's instruction-level counts."""


META_RESERVED = SHAPE_KEYS | {"scored"}
"""Names a record's `meta` never holds: a record written before `scored` and `shape` were fields kept them there,
beside the task's values, so a task may not name a value of its own so (TaskSpec)."""


def _true(value: bool) -> bool:
    return value


def _first_answer(text: float | None, tools: ToolsRecord | None) -> float | None:
    """Milliseconds to the first answer: the text's first token or the first tool-call delta (in seconds)."""
    call = tools.timing.first_delta if tools is not None else None
    return min((t for t in (text, None if call is None else call * 1000.0) if t is not None), default=None)


def _no_tools(value: ToolsRecord | None) -> bool:
    return value is None


def _no_episode(value: EpisodeRecord | None) -> bool:
    return value is None


def _unshaped(value: Shape | None) -> bool:
    return value is None


class Record(BaseModel):
    """One sample's request and everything it produced; the unit written to records.jsonl."""

    sample_id: str
    task: str
    repeat: int = Field(0, validation_alias=AliasChoices("repeat", "attempt"))
    """Which of the K samples of the same item this is (0 when sampling once); `attempt` in runs written before
    it was renamed, so that it could not be mistaken for `attempts`."""
    level: str = ""
    """The load level it ran at (`c=16`, `rate=4`)."""
    warmup: bool = False
    """A warm-up request: scored, but kept out of speed figures."""
    session: str = ""
    """When the run invocation that sent it began sending, to the microsecond: a resumed level spans sessions."""
    sent_at: float | None = None
    retried: list[str] = []
    """Fault class of every failed attempt before this result (none of them scored)."""
    final: bool = True
    request: SentBody
    """The JSON body sent, which never holds the API key: what qualeval writes typed, server-specific keys kept as
    they were sent."""
    reasoning: str
    content: str
    reasoning_source: ReasoningSource
    status: Status
    finish_reason: str | None
    usage: Usage
    timing: Timing
    attempts: int
    """HTTP attempts the request took (retries included): never which sample it is (`repeat`)."""
    constraint: ConstraintRecord
    extraction: Extraction
    score: Score
    naive_correct: bool | None = None
    """Whether the naive extractor (last number anywhere in reasoning plus content) would be right."""
    rescue: Extraction | None = None
    """With rescue on and empty content: what the reasoning's anchors held. Never counted as correct."""
    rescue_correct: bool | None = None
    gold: str
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    meta: dict[str, Any]
    """The task's own values and nothing else: its doc_to_meta values under the names its YAML gives them, and
    its subset labels (breakdowns group by them). Free-form by design; what qualeval itself made of the item has
    fields of its own (`scored`, `shape`)."""
    scored: bool = Field(default=True, exclude_if=_true)
    """False for a workload's synthetic prompt: it has no right answer, so it is neither right nor wrong. Written
    only when False, so that a task's record stays as compact as before."""
    shape: Shape | None = Field(default=None, exclude_if=_unshaped)
    """What serving shaping made of the prompt (a workload's lengths, a context length); None: the task's own
    item, as rendered."""
    error: str | None = None
    server_timings: ServerTimings | None = None
    """The server's own timing report when it sends one (llama.cpp's `timings`)."""
    grade: Grade | None = None
    """A model judge's verdict, where one was asked (a free-form answer the rules rejected)."""
    endpoint: str | None = None
    """The replica that answered, when the run spread requests over several (`--base-url` repeated)."""
    tools: ToolsRecord | None = Field(default=None, exclude_if=_no_tools)
    """A tool-call item's calls, their wire status and timing (None, and not written, for any other item)."""
    episode: EpisodeRecord | None = Field(default=None, exclude_if=_no_episode)
    """An agent's episode (a multi-turn item): its turns, steps, calls and passback; its steps are in steps.jsonl,
    and `score` is the episode's verdict (None, and not written, for any other item)."""

    @model_validator(mode="before")
    @classmethod
    def _lift_from_meta(cls, data: Any) -> Any:
        # a record written before `scored` and `shape` were fields kept them in `meta`, where every reader looked
        # for them: they meant this, so they load as it. Task specs reserve these names, so a newer record's meta
        # never holds them
        if not isinstance(data, dict) or "scored" in data or "shape" in data:
            return data
        meta = data.get("meta")
        if not isinstance(meta, dict) or META_RESERVED.isdisjoint(meta):
            return data
        shape = {k: v for k, v in meta.items() if k in SHAPE_KEYS}
        return {
            **data,
            "meta": {k: v for k, v in meta.items() if k not in META_RESERVED},
            "scored": meta.get("scored", True) is not False,
            "shape": shape or None,
        }

    @model_validator(mode="after")
    def _not_scored_is_null(self) -> Record:
        # the verdict of a record no accuracy counts is no verdict: null, however it was written (older runs, a
        # scorer's false)
        if self.score.correct is not None and not self.judged:
            self.score = self.score.model_copy(update={"correct": None})
        return self

    @field_serializer("score", mode="wrap")
    def _score(self, score: Score, handler: SerializerFunctionWrapHandler) -> Any:
        # a copy made with model_copy (a rescore's) is not validated again: written as null all the same
        return handler(score if self.judged else score.model_copy(update={"correct": None}))

    @property
    def judged(self) -> bool:
        """Whether the record is in the accuracy: an answer of the model's to a question with a right answer."""
        return self.scored and self.status not in NOT_THE_MODELS

    @property
    def right(self) -> bool:
        """The answer was judged right; False for a record not scored (`score.correct` is None there), as every
        figure counting right answers wants it."""
        return bool(self.score.correct) and self.judged

    def outcome(self) -> Outcome:
        """The summary's view: one final answer of one item."""
        return Outcome(
            status=self.status,
            correct=self.right,
            rung=self.extraction.rung,
            meta=self.meta,
            naive_correct=self.naive_correct,
            held=self.constraint.held,
            rescued=self.rescue is not None and self.rescue.value is not None,
            rescue_correct=bool(self.rescue_correct),
            item=self.sample_id,
            measures=self.score.measures,
            agreement=self.constraint.agreement,
            error=self.error if self.status in ENDPOINT_FAILED else None,
        )

    def prompt(self) -> str | None:
        """The last user message the request sent: the question as the model saw it."""
        return self.request.prompt()

    def frame_row(self) -> dict[str, Any]:
        """The record as one flat table row (`RunResult.to_pandas`)."""
        timed = self.timed()
        timing, usage = self.timing.model_dump(), self.usage.model_dump()
        return {
            "sample_id": self.sample_id,
            "task": self.task,
            "repeat": self.repeat,
            "status": self.status,
            # no right answer (unscored) or no answer of the model's (endpoint error): neither right nor wrong
            "correct": self.score.correct if self.judged else None,
            "extracted": self.extraction.value,
            "rung": self.extraction.rung,
            "gold": self.gold,
            "naive_correct": self.naive_correct,
            "constraint_held": self.constraint.held,
            "reasoning_source": self.reasoning_source,
            "level": self.level,
            "warmup": self.warmup,
            "retries": len(self.retried),
            "timing_tpot": timed.tpot,
            "timing_reasoning_duration": timed.reasoning_duration,
            "finish_reason": self.finish_reason,
            "prompt": self.prompt(),
            "reasoning": self.reasoning,
            "content": self.content,
            "subject": self.meta.get("subject"),
            **{f"timing_{k}": timing[k] for k in ("first_byte", "ttft", "first_reasoning", "first_content", "end")},
            "timing_decode_rate": timing["decode_rate"],
            **{
                f"usage_{k}": usage[k]
                for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "answer_tokens")
            },
            **{f"meta_{k}": v for k, v in self.meta.items()},
            "scored": self.scored,
            **{f"shape_{k}": v for k, v in (self.shape.model_dump() if self.shape else {}).items()},
        }

    def timed(self) -> Timed:
        """The speed figures' view: timing and tokens, compactly (runs can hold 100,000 records)."""
        t, u = self.timing, self.usage
        return Timed(
            level=self.level,
            warmup=self.warmup,
            session=self.session,
            sent_at=self.sent_at,
            correct=self.right,
            status=self.status,
            ttft=t.ttft,
            first_reasoning=t.first_reasoning,
            first_content=_first_answer(t.first_content, self.tools),
            end=t.end,
            itl_hist=t.itl.hist if t.itl else {},
            itl_count=t.itl.count if t.itl else 0,
            itl_mean=t.itl.mean if t.itl else None,
            completion_tokens=u.completion_tokens,
            reasoning_tokens=u.reasoning_tokens,
            answer_tokens=u.answer_tokens,
            budget=self.request.budget(),
            prompt_tokens=u.prompt_tokens,
            cached_tokens=u.cached_tokens,
            episode=self.episode is not None,
            requests=self.episode.steps if self.episode is not None else 1,
            longest=self.episode.longest if self.episode is not None else None,
        )
