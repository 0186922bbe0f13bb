"""The `qualeval` command as the click object Typer builds from `app`, for tools that read click commands: the
docs' CLI reference (docs/cli.md, through mkdocs-click) is generated from it, so it shows every command and option
as they are defined."""

from __future__ import annotations

import typer

from qualeval.cli import app

command = typer.main.get_command(app)
