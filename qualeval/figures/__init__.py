"""The figures of runs, computed from their records: what summary.json, compare.json, board.json and gate.json
hold. qualeval.report renders them (report.md, report.html, plots, board pages); qualeval.serving computes its
workload figures with them.

summary     a run's summary from its records (accuracy per task and level, speed, faults); summary.json written
accuracy    accuracy with Wilson intervals, statuses, rungs, breakdowns; repeated sampling; --fail-under
speeds      speed figures (TTFT, first answer, TPOT, ITL, throughput) and speed beside quality
frontier    accuracy against cost per level, and drops under load
repeats     greedy answers to identical input paired; the share of prompt tokens served from a cache
noise       McNemar's exact test, the smallest detectable difference, run-to-run noise
rundir      a run directory read back; the checks that runs are not the same and that a rerun is one
compare     two runs paired item by item
runset      several runs of the same items (board and gate)      board  N configs side by side
gate        a release gate's verdict by a policy file (policy: the file read; gate_clauses: speed, validity)
toolfigures a tool-call task's trigger, schema, wire statuses, recovered calls, call timing, stream parity
episodefigures  a multi-turn task's episodes: how they ended, accuracy by turn index, steps, calls, tokens, times
"""

from qualeval.figures.accuracy import answered_cell, below, judged, summarize
from qualeval.figures.board import board_runs
from qualeval.figures.compare import compare_runs
from qualeval.figures.frontier import swept, varied
from qualeval.figures.gate import gate_runs
from qualeval.figures.policy import load_policy
from qualeval.figures.repeats import cached_side
from qualeval.figures.speeds import duration_of, speed
from qualeval.figures.summary import offline_summary, summarize_records, write_summary_json
from qualeval.figures.toolfigures import parity, tools_by_task

__all__ = [
    "answered_cell",
    "below",
    "board_runs",
    "cached_side",
    "compare_runs",
    "duration_of",
    "gate_runs",
    "judged",
    "load_policy",
    "offline_summary",
    "parity",
    "speed",
    "summarize",
    "summarize_records",
    "swept",
    "tools_by_task",
    "varied",
    "write_summary_json",
]
