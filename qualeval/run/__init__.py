"""A whole run: its options, what it pins, each sample from request to record.

options     the `qualeval run` flags, `score`'s run options and profile files, made from RunConfig
            (qualeval.records.RunConfig, which the manifest keeps)
keywords    the same options as qualeval.evaluate's typed keywords (RunOptions)
levels      the levels a run sweeps, load crossed with the reasoning budget, and the typed request settings
            (RequestSettings) the run and each level put on every request
execute     execute() a run (or resume it)
rescore     rescore() a run from its directory alone
pipeline    run_one(): one sample from request to record
arrivals    how a level's requests go out: in batches, a closed loop or an open one
pinned      what a run decides once: constraint mode and convention, thinking switch
probe       what an endpoint really honours, and the options of `qualeval probe` (ProbeOptions)
checks      what a run must allow before it starts, and its warnings
offline     `qualeval score`: responses from elsewhere through the same verdict
merge       the shards of one run joined
written     the summary.json a run, a rescore and a merge end with
progress    the run's progress bar, for the CLI and the API alike (here, so the API needs nothing of the CLI)
"""
