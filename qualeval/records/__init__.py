"""Every type a run persists, one submodule per file written (or part of one):

    record.py       records.jsonl    Record and its parts (extraction, score, constraint, grade); usage.py, its
                                     usage and timing (a step's too)
    episodes.py     steps.jsonl      StepRecord: one request of an agent's loop; EpisodeRecord, a Record's
                    records.jsonl    `episode` (turns, steps, calls, passback); steplog.py, steps.jsonl as a run
                                     appends, resumes and rescores it (StepLog, read_steps)
    toolcalls.py    records.jsonl    ToolsRecord: a tool-call item's calls, wire status and timing; ToolAnswer
    statuses.py     records.jsonl    Status, Rung, Agreement: what became of a request, as closed sets
    body.py         records.jsonl    SentBody, the JSON body a request sent (its SentMessages), kept as sent
    accuracy.py     summary.json     Cell, TaskSummary, Repeated: a task's accuracy, what was left out, K samples
    summary.py      summary.json     RunSummary and what it holds per task (a run's, and `qualeval score`'s),
                                     and its ServingFigures (workload, context lengths, replicas)
    toolfigures.py  summary.json     ToolFigures: a tool-call task's trigger, schema, wire statuses, recovery,
                    compare.json     timing and stream parity (and distribution.py, the Distribution it shares
                    board.json       with summary.py)
    comparison.py   compare.json     Comparison
    episodespec.py  (in a Sample)    EpisodeSpec: a multi-turn item; EpisodeVerdict, BFCL's verdict on an episode
    board.py        board.json       Board (`qualeval board`)
    gate.py         gate.json        GateResult, and the Policy file `qualeval gate` reads
    manifest.py     manifest.json    Manifest, with the Pinned choices and the ProbeResult
    runconfig.py    manifest.json    RunConfig: every option of a run, declared once (flags, profiles, the API)
    clientconfig.py (not written)    ClientConfig: where the options a run hands on to its client are declared;
                                     RunConfig takes them (client_option), so manifest.json holds their values
    taskspec.py     manifest.json    TaskSpec: the task file format, kept so that a rescore needs no file
    taskparts.py    manifest.json    its parts for data in a wheel, joined files and tool-call tasks
    shaping.py      manifest.json    Shaping: what serving made of the items (WorkloadPrompts, lengths, shard)
                    records.jsonl    Shape: what it made of one item's prompt (a record's `shape`)
    probe.py        probe --json     ProbeResult and the conventions it names, which records name too (where
                                     reasoning comes back; the structured-output styles, modes and kinds)
    passback.py     probe --json     PassbackCheck: what a server did with an earlier turn's reasoning sent back
    items.py        items.jsonl      OfflineItem (`qualeval score`)
    repeats.py      summary.json     PromptCache and Identical: the prefix cache's share, identical outputs on
                    compare.json     identical inputs (per level, and between configurations); Paired levels
    series.py       timeseries.jsonl SeriesPoint, one second of the run from both ends (ServerSample per replica)

and three that are not types of a file: views.py, the compact views of a record that the figures read (never
written); store.py, the run directory itself (RunStore: how it is written, and resumed); flagtext.py, how a flag's
text becomes a value, for RunConfig's validators. Definitions and the store only: the modules that compute the
figures import these, never the other way round, so nothing here imports them.

Free-form by design in one place only, `Record.meta`: the task's own values, under the names its file gives them.
JSON whose shape belongs to someone else is typed as JSON (`JsonValue`) and read defensively, if at all: a task's inline
documents and hub keywords, the server's /models answer, a body's server-specific keys (SentBody's extras).
"""

from __future__ import annotations

from qualeval.records.accuracy import Cell, Repeated, TaskSummary
from qualeval.records.board import Board, BoardRun, BoardTask, ConfigFigures, SpeedRatio
from qualeval.records.body import SentBody, SentMessage
from qualeval.records.checks import AtLeast1
from qualeval.records.clientconfig import (
    DEFAULT_BASE_URL,
    ClientConfig,
    MaxTokensField,
    ThinkingSwitch,
    client_option,
    env_base_url,
)
from qualeval.records.comparison import Comparison, EpisodeSides, Noise, Ratio, TaskComparison, TurnPair
from qualeval.records.episodes import (
    AppliedPassback,
    EpisodeFigures,
    EpisodeRecord,
    PassbackMode,
    StepRecord,
    TurnAccuracy,
    TurnRecord,
    episode_steps,
    step_digests,
)
from qualeval.records.episodespec import EPISODE_ERRORS, EpisodeError, EpisodeSpec, EpisodeVerdict
from qualeval.records.gate import TOOL_CLAUSES, Clauses, ClauseVerdict, GateResult, Policy, TaskGate, Verdict
from qualeval.records.items import OfflineItem
from qualeval.records.jsonschemas import json_schema_problem
from qualeval.records.manifest import Manifest, Pinned, ServerInfo, TaskEntry
from qualeval.records.passback import PASSBACK_FIELDS, Passback, PassbackCheck, PassbackSent, PassbackVerdict
from qualeval.records.probe import (
    BUDGET,
    PROBE_TIME,
    SEED,
    STYLES,
    AppliedMode,
    ConstraintKind,
    Mode,
    ModeResult,
    ProbeResult,
    ProbeVerdict,
    ReasoningSource,
    Style,
    ToolContract,
    contract_of,
    passback_found,
    probe_time_option,
    styles_from_probe,
)
from qualeval.records.record import (
    ConstraintRecord,
    Extraction,
    FollowupRecord,
    Grade,
    Record,
    Score,
)
from qualeval.records.repeats import Identical, Paired, PromptCache
from qualeval.records.runconfig import RunConfig
from qualeval.records.series import SeriesPoint, ServerSample
from qualeval.records.shaping import (
    ContextShaping,
    Shape,
    ShapedWorkload,
    Shaping,
    Shard,
    TemplateTokens,
    WorkloadPrompts,
    WorkloadStyle,
)
from qualeval.records.statuses import (
    ANSWERED,
    DISAGREEING,
    ENDPOINT_FAILED,
    NOT_THE_MODELS,
    TRUNCATED,
    UNKNOWN_QUESTION,
    Agreement,
    Rung,
    Status,
)
from qualeval.records.steplog import STEPS, StepLog, read_steps
from qualeval.records.store import Key, RunStore, fingerprint
from qualeval.records.summary import (
    BenchyFigures,
    ContextFigures,
    Distribution,
    Frontier,
    FrontierLevel,
    LengthFigures,
    LevelReport,
    Linked,
    MeanMax,
    MeanStd,
    RunSummary,
    ServingFigures,
    Speed,
    Stats,
    Targets,
    TaskReport,
    Truncation,
    VllmFigures,
    WorkloadFigures,
    WorkloadLevel,
)
from qualeval.records.taskparts import (
    JSON_TYPES,
    EnvironmentSpec,
    JoinSpec,
    NamedToolChoice,
    ToolChoice,
    WheelSpec,
    tool_problem,
)
from qualeval.records.taskspec import (
    SAMPLING,
    AnswerSpec,
    ByThinking,
    Generation,
    PromptSpec,
    Sampling,
    ScorerSpec,
    SubsetSpec,
    TaskSpec,
)
from qualeval.records.toolcalls import (
    WIRE_FAULTS,
    CallTiming,
    ExpectedCall,
    ToolAnswer,
    ToolCall,
    ToolsRecord,
    ToolStatus,
    Trigger,
    arguments_text,
    openai_calls,
)
from qualeval.records.toolfigures import (
    DiscordantItem,
    Parity,
    Recovery,
    ToolFigures,
    ToolPaired,
    ToolShare,
    ToolSides,
    ToolTiming,
    TriggerAgreement,
)
from qualeval.records.usage import ItlSummary, ServerTimings, Timing, Usage
from qualeval.records.views import Outcome, Timed

__all__ = [
    "ANSWERED",
    "BUDGET",
    "DEFAULT_BASE_URL",
    "DISAGREEING",
    "ENDPOINT_FAILED",
    "EPISODE_ERRORS",
    "JSON_TYPES",
    "NOT_THE_MODELS",
    "PASSBACK_FIELDS",
    "PROBE_TIME",
    "SAMPLING",
    "SEED",
    "STEPS",
    "STYLES",
    "TOOL_CLAUSES",
    "TRUNCATED",
    "UNKNOWN_QUESTION",
    "WIRE_FAULTS",
    "Agreement",
    "AnswerSpec",
    "AppliedMode",
    "AppliedPassback",
    "AtLeast1",
    "BenchyFigures",
    "Board",
    "BoardRun",
    "BoardTask",
    "ByThinking",
    "CallTiming",
    "Cell",
    "ClauseVerdict",
    "Clauses",
    "ClientConfig",
    "Comparison",
    "ConfigFigures",
    "ConstraintKind",
    "ConstraintRecord",
    "ContextFigures",
    "ContextShaping",
    "DiscordantItem",
    "Distribution",
    "EnvironmentSpec",
    "EpisodeError",
    "EpisodeFigures",
    "EpisodeRecord",
    "EpisodeSides",
    "EpisodeSpec",
    "EpisodeVerdict",
    "ExpectedCall",
    "Extraction",
    "FollowupRecord",
    "Frontier",
    "FrontierLevel",
    "GateResult",
    "Generation",
    "Grade",
    "Identical",
    "ItlSummary",
    "JoinSpec",
    "Key",
    "LengthFigures",
    "LevelReport",
    "Linked",
    "Manifest",
    "MaxTokensField",
    "MeanMax",
    "MeanStd",
    "Mode",
    "ModeResult",
    "NamedToolChoice",
    "Noise",
    "OfflineItem",
    "Outcome",
    "Paired",
    "Parity",
    "Passback",
    "PassbackCheck",
    "PassbackMode",
    "PassbackSent",
    "PassbackVerdict",
    "Pinned",
    "Policy",
    "ProbeResult",
    "ProbeVerdict",
    "PromptCache",
    "PromptSpec",
    "Ratio",
    "ReasoningSource",
    "Record",
    "Recovery",
    "Repeated",
    "RunConfig",
    "RunStore",
    "RunSummary",
    "Rung",
    "Sampling",
    "Score",
    "ScorerSpec",
    "SentBody",
    "SentMessage",
    "SeriesPoint",
    "ServerInfo",
    "ServerSample",
    "ServerTimings",
    "ServingFigures",
    "Shape",
    "ShapedWorkload",
    "Shaping",
    "Shard",
    "Speed",
    "SpeedRatio",
    "Stats",
    "Status",
    "StepLog",
    "StepRecord",
    "Style",
    "SubsetSpec",
    "Targets",
    "TaskComparison",
    "TaskEntry",
    "TaskGate",
    "TaskReport",
    "TaskSpec",
    "TaskSummary",
    "TemplateTokens",
    "ThinkingSwitch",
    "Timed",
    "Timing",
    "ToolAnswer",
    "ToolCall",
    "ToolChoice",
    "ToolContract",
    "ToolFigures",
    "ToolPaired",
    "ToolShare",
    "ToolSides",
    "ToolStatus",
    "ToolTiming",
    "ToolsRecord",
    "Trigger",
    "TriggerAgreement",
    "Truncation",
    "TurnAccuracy",
    "TurnPair",
    "TurnRecord",
    "Usage",
    "Verdict",
    "VllmFigures",
    "WheelSpec",
    "WorkloadFigures",
    "WorkloadLevel",
    "WorkloadPrompts",
    "WorkloadStyle",
    "arguments_text",
    "client_option",
    "contract_of",
    "env_base_url",
    "episode_steps",
    "fingerprint",
    "json_schema_problem",
    "openai_calls",
    "passback_found",
    "probe_time_option",
    "read_steps",
    "step_digests",
    "styles_from_probe",
    "tool_problem",
]
