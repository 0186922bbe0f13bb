"""The figures and reports of a run: accuracy, speed, summaries, report.md, report.html, compare."""
