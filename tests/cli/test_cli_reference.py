"""The docs' CLI reference (docs/cli.md) is generated from the command definitions: rendered as the site renders
it, every command has its section and every option is listed in it, so the page cannot drift from `--help`."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from qualeval.cli.click import command
from tests.conftest import ROOT


def _options(cmd: Any, name: str = "qualeval") -> list[tuple[str, str]]:
    """Every (command name, option spelling) of `cmd` and its subcommands (`--help` included, so each has one)."""
    found = [(name, opt) for param in cmd.params for opt in (*param.opts, *param.secondary_opts)]
    found += [(name, "--help")]
    for sub_name, sub in getattr(cmd, "commands", {}).items():
        found += _options(sub, sub_name)
    return found


def test_the_generated_cli_page_shows_every_command_and_option() -> None:
    markdown = pytest.importorskip("markdown", reason="the docs extra (pip install -e '.[docs]') renders the site")
    pytest.importorskip("mkdocs_click", reason="the docs extra (pip install -e '.[docs]') renders the CLI reference")
    source = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    rendered = markdown.Markdown(extensions=["mkdocs-click"]).convert(source)
    # one section per heading: a command's name, then its description, usage and options, up to the next heading
    sections: dict[str, str] = {}
    for part in re.split(r"<h[1-6][^>]*>", rendered)[1:]:
        title, _, body = html.unescape(re.sub(r"<[^>]+>", " ", part)).partition("\n")
        sections[title.strip()] = body
    expected = _options(command)
    assert len({name for name, _ in expected}) > 10 and len(expected) > 150  # the walk reached every subcommand
    missing = [(name, opt) for name, opt in expected if opt not in sections.get(name, "")]
    assert not missing, f"docs/cli.md does not show: {missing[:20]}"
