"""manifest.json: what a run is (its configuration, tasks and fingerprint), what it found the server to be, and
what it pinned for every session (qualeval.run.pinned resolves it). Every field has a default, so that a manifest
written by any version, or by hand in a test, still loads; keys this version does not know are kept."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from qualeval.records.clientconfig import ThinkingSwitch
from qualeval.records.passback import Passback
from qualeval.records.probe import AppliedMode, ProbeResult, Style
from qualeval.records.runconfig import RunConfig
from qualeval.records.shaping import Shaping
from qualeval.records.taskspec import TaskSpec

__all__ = ["Manifest", "Pinned", "ServerInfo", "TaskEntry"]


class Pinned(BaseModel):
    """What a run decides once and keeps: the constraint mode and convention, and the thinking switch."""

    constraint: AppliedMode
    constraint_style: Style | None = None
    tasks: dict[str, AppliedMode] = Field(default_factory=dict)
    """Tasks whose constraint mode is not `constraint`: without a reasoning channel a constraint binds from the
    first token, so only a task whose prompt asks for the answer alone keeps `single` (qualeval.run.pipeline)."""
    thinking_switch: ThinkingSwitch = "none"
    thinking_opened: bool = False
    """The probe saw only a closing thinking marker (`inline:close-only`) where the run reads responses: the chat
    template opens the block, so the run splits as `--thinking-opened` does (a response without the marker is
    thinking cut off, never an answer)."""
    passback: Passback | None = None
    """What the run's episodes send back of earlier reasoning (--reasoning-passback, `auto` resolved; each
    episode's record says it too). None: no multi-turn item, or pinned before it was kept."""
    notes: list[str] = Field(default_factory=list)
    """Why, one line each, where the resolution is not simply what was asked."""

    def mode_for(self, task: str) -> AppliedMode:
        return self.tasks.get(task, self.constraint)

    def fingerprinted(self) -> dict[str, Any]:
        # left out where empty or off, so that runs pinned before a field existed keep their fingerprint
        unset = {name for name in ("tasks", "thinking_opened", "passback") if not getattr(self, name)}
        return self.model_dump(mode="json", exclude={"notes"} | unset)


class TaskEntry(BaseModel):
    """One task of the run as it was when the run started."""

    file: str | None = None
    version: str | None = None
    samples: int = 0
    spec: TaskSpec | None = None
    """The task as its file said, so that a rescore works when the file is gone (None: written before it was kept)."""


class ServerInfo(BaseModel):
    models: dict[str, JsonValue] | None = None
    """The server's /models answer as it came (None: it has no such route): free-form by design, since servers
    shape it their own way (llama.cpp adds `models`) and the probe reads it defensively."""
    probe: ProbeResult | None = None
    """None with --no-probe."""


class Manifest(BaseModel):
    model_config = ConfigDict(extra="allow")

    qualeval_version: str | None = None
    config: RunConfig | None = None
    """The run's options (never the API key, which RunConfig does not write); None only in a manifest that is not a
    run's own (the marker a merge checks its output directory with)."""
    fingerprint: str | None = None
    """A digest of the samples, the settings and what was pinned: a resumed run must match it."""
    pinned: Pinned | None = None
    tasks: dict[str, TaskEntry] = Field(default_factory=dict)
    started: str | None = None
    run_id: str | None = None
    """Drawn when the run first starts and kept when it resumes: two runs started in the same second (parallel CI
    jobs, an array's tasks) are two runs, and a copied directory is the same one. None in older runs."""
    server: ServerInfo | None = None
    shaping: Shaping | None = None
    """What qualeval.serving.shaping did to the items (workload, context lengths, shard); None in a manifest
    written before it was recorded."""
    simulated: bool = False
    resumed: list[str | None] | None = None
    """When each later session started (None until the run is resumed)."""
    merged_from: list[str] | None = None
    """The shard directories of a merged run."""

    def written(self) -> dict[str, Any]:
        """The JSON written: the keys a run never had (resumed, merged_from) are left out rather than null."""
        unset = {name for name in ("resumed", "merged_from") if getattr(self, name) is None}
        return self.model_dump(mode="json", exclude=unset)
