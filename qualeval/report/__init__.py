"""The reports of a run, drawn from its figures (qualeval.figures computes them): report.md, report.html, plots,
compare.html, board pages.

markdown    report.md      html  report.html and compare.html (templates/)      plots  their figures
numbers     how a share, a figure and a distribution are written
repeats     the prefix cache and identical-input findings, as lines
frontier_sections   the accuracy-against-cost and drop-under-load sections
linked      whether the "speed and quality together" section shows, and what its figures pool
speed_rows  the speed table's rows: per task, or per level where levels were asked streamed and not
serving_sections, serving_plots   the serving benchmark's sections and plots (qualeval.serving computes them)
tool_sections   a tool-call task's section, speed cells, compare rows and board table
episode_sections  a multi-turn task's episodes in report.md: how they ended, accuracy by turn, steps, times
board_pages board.md, and the labels, key and noise reading the terminal and board.html share with it
board_web   board.html
"""

from qualeval.report.board_pages import HEAD, beyond_line, board_markdown, heads, key_rows, rows, tone
from qualeval.report.board_web import board_html
from qualeval.report.episode_sections import compare_episode_rows
from qualeval.report.frontier_sections import drop_warnings, points, same_spend_warnings, smallest_line
from qualeval.report.html import compare_html, write_reports_or_warn
from qualeval.report.markdown import cut_correct_line, published_where, unknown_line
from qualeval.report.numbers import dist, num, pct, requests_cell
from qualeval.report.refusals import context_claimed, context_refused
from qualeval.report.repeats import cache_lines, compare_lines, identical_lines
from qualeval.report.serving_sections import terminal_lines
from qualeval.report.tool_sections import compare_tool_rows

__all__ = [
    "HEAD",
    "beyond_line",
    "board_html",
    "board_markdown",
    "cache_lines",
    "compare_episode_rows",
    "compare_html",
    "compare_lines",
    "compare_tool_rows",
    "context_claimed",
    "context_refused",
    "cut_correct_line",
    "dist",
    "drop_warnings",
    "heads",
    "identical_lines",
    "key_rows",
    "num",
    "pct",
    "points",
    "published_where",
    "requests_cell",
    "rows",
    "same_spend_warnings",
    "smallest_line",
    "terminal_lines",
    "tone",
    "unknown_line",
    "write_reports_or_warn",
]
