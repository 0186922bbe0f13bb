"""Every type a run persists, one submodule per file written:

    record.py       records.jsonl    Record and its parts (usage, timing, extraction, score, constraint, grade)
    body.py         records.jsonl    SentBody, the JSON body a request sent (its SentMessages), kept as sent
    summary.py      summary.json     RunSummary and what it holds per task (a run's, and `qualeval score`'s),
                                     and its ServingFigures (workload, context lengths, replicas)
    comparison.py   compare.json     Comparison
    manifest.py     manifest.json    Manifest, with the Pinned choices and the ProbeResult
    shaping.py      manifest.json    Shaping: what serving made of the items (a workload's PromptSpec, lengths, shard)
    probe.py        probe --json     ProbeResult and the structured-output conventions it names
    scored.py       items.jsonl      OfflineItem (`qualeval score`)
    series.py       timeseries.jsonl SeriesPoint, one second of the run from both ends (ServerSample per replica)

and views.py, the compact views of a record that the figures read (never written). Definitions only: the modules
that compute the figures import these types, never the other way round, so nothing here imports them.
"""

from __future__ import annotations

from qualeval.records.body import SentBody, SentMessage
from qualeval.records.comparison import Comparison, Noise, Ratio, TaskComparison
from qualeval.records.items import OfflineItem
from qualeval.records.manifest import Manifest, Pinned, ServerInfo, TaskEntry, ThinkingSwitch
from qualeval.records.probe import BUDGET, SEED, STYLES, ModeResult, ProbeResult, Style, Verdict, styles_from_probe
from qualeval.records.record import (
    ANSWERED,
    DISAGREEING,
    ENDPOINT_FAILED,
    TRUNCATED,
    Agreement,
    ConstraintRecord,
    Extraction,
    FollowupRecord,
    Grade,
    ItlSummary,
    ReasoningSource,
    Record,
    Rung,
    Score,
    ServerTimings,
    Status,
    Timing,
    Usage,
)
from qualeval.records.series import SeriesPoint, ServerSample
from qualeval.records.shaping import ContextShaping, PromptSpec, ShapedWorkload, Shaping, Shard, TemplateTokens
from qualeval.records.summary import (
    BenchyFigures,
    Cell,
    ContextFigures,
    Distribution,
    Frontier,
    FrontierLevel,
    LengthFigures,
    LevelReport,
    Linked,
    MeanMax,
    MeanStd,
    Paired,
    Repeated,
    RunSummary,
    ServingFigures,
    Speed,
    Stats,
    Targets,
    TaskReport,
    TaskSummary,
    Truncation,
    VllmFigures,
    WorkloadFigures,
    WorkloadLevel,
)
from qualeval.records.views import Outcome, Timed

__all__ = [
    "ANSWERED",
    "BUDGET",
    "DISAGREEING",
    "ENDPOINT_FAILED",
    "SEED",
    "STYLES",
    "TRUNCATED",
    "Agreement",
    "BenchyFigures",
    "Cell",
    "Comparison",
    "ConstraintRecord",
    "ContextFigures",
    "ContextShaping",
    "Distribution",
    "Extraction",
    "FollowupRecord",
    "Frontier",
    "FrontierLevel",
    "Grade",
    "ItlSummary",
    "LengthFigures",
    "LevelReport",
    "Linked",
    "Manifest",
    "MeanMax",
    "MeanStd",
    "ModeResult",
    "Noise",
    "OfflineItem",
    "Outcome",
    "Paired",
    "Pinned",
    "ProbeResult",
    "PromptSpec",
    "Ratio",
    "ReasoningSource",
    "Record",
    "Repeated",
    "RunSummary",
    "Rung",
    "Score",
    "SentBody",
    "SentMessage",
    "SeriesPoint",
    "ServerInfo",
    "ServerSample",
    "ServerTimings",
    "ServingFigures",
    "ShapedWorkload",
    "Shaping",
    "Shard",
    "Speed",
    "Stats",
    "Status",
    "Style",
    "Targets",
    "TaskComparison",
    "TaskEntry",
    "TaskReport",
    "TaskSummary",
    "TemplateTokens",
    "ThinkingSwitch",
    "Timed",
    "Timing",
    "Truncation",
    "Usage",
    "Verdict",
    "VllmFigures",
    "WorkloadFigures",
    "WorkloadLevel",
    "styles_from_probe",
]
