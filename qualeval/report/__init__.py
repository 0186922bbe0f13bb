"""The figures and reports of a run: accuracy, speed, summaries, report.md, report.html, compare.

summary     a run's summary from its records (accuracy per task and level, speed, faults)
accuracy    accuracy with Wilson intervals, statuses, rungs, breakdowns; repeated sampling
speed       speed figures (TTFT, first answer, TPOT, ITL, throughput) and speed beside quality
markdown    report.md      html  report.html (templates/)      plots  its figures
compare     two runs paired item by item
serving_sections, serving_plots   the serving benchmark's sections and plots (qualeval.serving computes them)
series      timeseries.jsonl read back
"""
