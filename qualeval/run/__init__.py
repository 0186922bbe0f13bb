"""A whole run: its options, what it pins, each sample from request to record.

options     the `qualeval run` flags, `score`'s run options and profile files, made from RunConfig
            (qualeval.records.RunConfig, which the manifest keeps)
keywords    the same options as qualeval.evaluate's typed keywords (RunOptions)
levels      the levels a run sweeps, load crossed with the reasoning budget, and the typed request settings
            (RequestSettings) the run and each level put on every request
driver      execute() a run (or resume it)
rescoring   rescore() a run from its directory alone
pipeline    run_one(): one sample from request to record
arrivals    how a level's requests go out: in batches, a closed loop or an open one
pinned      what a run decides once: constraint mode and convention, thinking switch
probing     what an endpoint really honours, and the options of `qualeval probe` (ProbeOptions)
probepassback which field a server reads an earlier turn's reasoning back from: `probe --passback`
probetools  whether a server honours tool_choice (auto, required, none, a named function): `probe --tools`
probebudget whether a server ends the thinking at a per-request budget (`--thinking-budget`)
checks      what a run must allow before it starts, and its warnings
offline     `qualeval score`: responses from elsewhere through the same verdict
merge       the shards of one run joined
written     the summary.json a run, a rescore and a merge end with
progress    the run's progress bar, for the CLI and the API alike (here, so the API needs nothing of the CLI)
"""

from qualeval.records import passback_found
from qualeval.run.checks import data_task, one_task_data
from qualeval.run.driver import execute
from qualeval.run.keywords import RunOptions
from qualeval.run.merge import merge_runs
from qualeval.run.offline import SplitOptions, check_out, score_file, score_lines, write_offline
from qualeval.run.offline_read import FORMATS, ReadOptions
from qualeval.run.options import check_kinds, cli_parameters, given_or_default, load_config, options_from
from qualeval.run.probepassback import add_passback, check_passback, probe_passback
from qualeval.run.probetools import check_tools
from qualeval.run.probing import PROBE_CONCURRENCY, ProbeOptions, probe
from qualeval.run.progress import progress_bar
from qualeval.run.rescoring import rescore

__all__ = [
    "FORMATS",
    "PROBE_CONCURRENCY",
    "ProbeOptions",
    "ReadOptions",
    "RunOptions",
    "SplitOptions",
    "add_passback",
    "check_kinds",
    "check_out",
    "check_passback",
    "check_tools",
    "cli_parameters",
    "data_task",
    "execute",
    "given_or_default",
    "load_config",
    "merge_runs",
    "one_task_data",
    "options_from",
    "passback_found",
    "probe",
    "probe_passback",
    "progress_bar",
    "rescore",
    "score_file",
    "score_lines",
    "write_offline",
]
