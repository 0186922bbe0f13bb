"""Every type a run persists, one submodule per file written:

    record.py       records.jsonl    Record and its parts (usage, timing, extraction, score, constraint, grade)
    summary.py      summary.json     RunSummary and what it holds per task (a run's, and `qualeval score`'s)
    comparison.py   compare.json     Comparison
    manifest.py     manifest.json    Manifest, with the Pinned choices and the ProbeResult
    probe.py        probe --json     ProbeResult and the structured-output conventions it names
    scored.py       items.jsonl      OfflineItem (`qualeval score`)
    series.py       timeseries.jsonl SeriesPoint, one second of the run from both ends

and views.py, the compact views of a record that the figures read (never written). Definitions only: the modules
that compute the figures import these types, never the other way round, so nothing here imports them.
"""

from __future__ import annotations

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
from qualeval.records.series import SeriesPoint
from qualeval.records.summary import (
    Cell,
    Distribution,
    Frontier,
    FrontierLevel,
    LevelReport,
    Linked,
    Paired,
    Repeated,
    RunSummary,
    Speed,
    TaskReport,
    TaskSummary,
    Truncation,
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
    "Cell",
    "Comparison",
    "ConstraintRecord",
    "Distribution",
    "Extraction",
    "FollowupRecord",
    "Frontier",
    "FrontierLevel",
    "Grade",
    "ItlSummary",
    "LevelReport",
    "Linked",
    "Manifest",
    "ModeResult",
    "Noise",
    "OfflineItem",
    "Outcome",
    "Paired",
    "Pinned",
    "ProbeResult",
    "Ratio",
    "ReasoningSource",
    "Record",
    "Repeated",
    "RunSummary",
    "Rung",
    "Score",
    "SeriesPoint",
    "ServerInfo",
    "ServerTimings",
    "Speed",
    "Status",
    "Style",
    "TaskComparison",
    "TaskEntry",
    "TaskReport",
    "TaskSummary",
    "ThinkingSwitch",
    "Timed",
    "Timing",
    "Truncation",
    "Usage",
    "Verdict",
    "styles_from_probe",
]
