"""The reports of a run, drawn from its figures (qualeval.figures computes them): report.md, report.html, plots,
compare.html, board pages.

markdown    report.md      html  report.html and compare.html (templates/)      plots  their figures
numbers     how a share, a figure and a distribution are written
repeats     the prefix cache and identical-input findings, as lines
frontier_sections   the accuracy-against-cost and drop-under-load sections
serving_sections, serving_plots   the serving benchmark's sections and plots (qualeval.serving computes them)
board_pages board.md and board.html
"""
