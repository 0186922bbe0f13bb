"""The docs' runnable-commands convention, read statically: a page's fenced blocks, what each one is for (run, not
run, a file to write), the commands a run block holds, and the port rewriting that points them at the page's own
reference servers. Nothing here starts a process (runner.py does)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from markdown_it import MarkdownIt

DIRECTIVE = re.compile(r"^\s*<!--\s*(not run|file|exit)\b\s*:?\s*(.*?)\s*-->\s*$")
"""A marker on the line right before a fence; the value is checked by `classify`, so `<!-- not run -->` (no reason)
is read as a marker and refused rather than ignored."""
LOCAL_URL = re.compile(r"(//(?:127\.0\.0\.1|localhost)):(\d+)/")
ANY_URL = re.compile(r"\bhttps?://([^/\s:'\"]+)(?::(\w+))?")
SERVE_PORT = re.compile(r"(--port[ =])(\d+)\b")
SHARED_DATA = re.compile(r"\.\./shared/data/([\w.-]+)")


@dataclass(frozen=True)
class Command:
    line: int
    """The page line (1-based) where the command starts."""
    text: str
    """The command with its continuations joined, as bash would read it."""

    @property
    def background(self) -> bool:
        words = _words(self.text)
        return bool(words) and words[-1] == "&"

    @property
    def serves(self) -> bool:
        """A `qualeval serve-sim` line: the page's own reference server."""
        return _words(self.text)[:2] == ["qualeval", "serve-sim"]

    @property
    def doc_port(self) -> int | None:
        found = SERVE_PORT.search(self.text)
        return int(found.group(2)) if found else None


@dataclass(frozen=True)
class Block:
    line: int
    """The page line (1-based) of the opening fence."""
    info: str
    text: str
    kind: str
    """run, not run, file, or shown (a block the convention leaves alone: output, YAML, Python...)."""
    value: str = ""
    """The reason (not run), the file name (file), or the exit status (run, when `exit:` is given)."""

    def commands(self) -> list[Command]:
        return split_commands(self.text, self.line + 1)

    @property
    def exit_status(self) -> int:
        return int(self.value) if self.kind == "run" and self.value else 0


class ConventionError(ValueError):
    """A page breaks the convention: a marker without its value, a marker on the wrong block..."""


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:  # an unbalanced quote: bash would refuse it too, and the run shows how
        return text.split()


def holds_qualeval(info: str, text: str) -> bool:
    """The convention's test for a command block: a `bash` fence with a line starting with `qualeval `."""
    return info == "bash" and any(line.lstrip().startswith("qualeval ") for line in text.splitlines())


def split_commands(text: str, first_line: int) -> list[Command]:
    """Logical command lines: `\\` continues a line, blank lines and whole-line `#` comments are dropped."""
    commands: list[Command] = []
    pending: list[str] = []
    start = first_line
    for offset, raw in enumerate(text.splitlines()):
        if not pending:
            start = first_line + offset
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
        if raw.rstrip().endswith("\\"):
            pending.append(raw.rstrip()[:-1])
            continue
        pending.append(raw)
        commands.append(Command(start, " ".join(part.strip() for part in pending)))
        pending = []
    if pending:
        commands.append(Command(start, " ".join(part.strip() for part in pending)))
    return commands


def classify(info: str, text: str, marker: str, line: int) -> Block:
    """What the convention does with a fenced block, given the line right before its fence."""
    found = DIRECTIVE.match(marker)
    key, value = (found.group(1), found.group(2)) if found else ("", "")
    command_block = holds_qualeval(info, text)
    if key == "file":
        name = PurePosixPath(value)
        if not value or name.is_absolute() or ".." in name.parts:
            raise ConventionError(f"line {line}: `file:` needs a relative NAME inside the page's directory: {marker!r}")
        return Block(line, info, text, "file", value)
    if key == "not run":
        if not value:
            raise ConventionError(f"line {line}: `<!-- not run: REASON -->` needs its reason: {marker.strip()!r}")
        return Block(line, info, text, "not run", value)
    if key == "exit":
        if not command_block:
            raise ConventionError(f"line {line}: `exit:` marks a block that is not run (a bash block with `qualeval `)")
        if not re.fullmatch(r"\d{1,3}", value):
            raise ConventionError(f"line {line}: `exit:` needs an exit status N: {marker.strip()!r}")
        return Block(line, info, text, "run", value)
    return Block(line, info, text, "run" if command_block else "shown")


def parse_page(markdown: str) -> list[Block]:
    """Every fenced block of a page, in order, classified by the marker line right before its fence."""
    lines = markdown.splitlines()
    blocks = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type != "fence" or token.map is None:
            continue
        start = token.map[0]
        marker = lines[start - 1] if start > 0 else ""
        info = token.info.split()[0] if token.info.split() else ""
        blocks.append(classify(info, token.content, marker, start + 1))
    return blocks


def lint_page(blocks: list[Block]) -> list[str]:
    """Why a page's run blocks cannot run as written (empty when they can): a host that is no reference server of
    this page, a port no earlier `serve-sim ... &` serves, elided arguments, prompts, a server in the foreground."""
    problems: list[str] = []
    served: set[int] = set()
    for block in blocks:
        if block.kind == "shown" and block.info == "bash":
            problems += [
                f"line {c.line}: `{c.text}`: a `$ ` prompt hides the command from the run"
                for c in block.commands()
                if c.text.startswith("$ ")
            ]
        if block.kind != "run":
            continue
        commands = block.commands()
        for command in commands:
            problems += _command_problems(command, served)
            if command.serves and command.background and command.doc_port is not None:
                served.add(command.doc_port)
        if block.exit_status and commands and commands[-1].background:
            problems.append(f"line {block.line}: `exit:` checks the last command, which runs in the background")
    return problems


def _command_problems(command: Command, served: set[int]) -> list[str]:
    where = f"line {command.line}: `{command.text}`"
    words = _words(command.text)
    problems = []
    if command.text.startswith("$ "):
        problems.append(f"{where}: a `$ ` prompt (output goes in a `text` or `console` block)")
    if "..." in words:
        problems.append(f"{where}: elided arguments (`...`)")
    if "&" in words[:-1]:
        problems.append(f"{where}: `&` in the middle of a command (one command a line)")
    if command.background and not command.serves:
        problems.append(f"{where}: only `qualeval serve-sim --port P ... &` may run in the background")
    if command.serves and not (command.background and command.doc_port is not None):
        problems.append(f"{where}: a reference server runs as `qualeval serve-sim --port P ... &`")
    for url in ANY_URL.finditer(command.text):
        host, port = url.group(1), url.group(2)
        if host not in ("127.0.0.1", "localhost"):
            problems.append(f"{where}: talks to {host}, which is not a reference server on this page")
        elif not (port and port.isdigit() and int(port) in served):
            problems.append(f"{where}: no earlier `qualeval serve-sim --port {port} ... &` on this page serves it")
    return problems


def rewrite_urls(text: str, ports: Mapping[int, int]) -> str:
    """Every `//127.0.0.1:P/` or `//localhost:P/` pointed at the port the page's server for P really listens on."""

    def swap(found: re.Match[str]) -> str:
        doc = int(found.group(2))
        if doc not in ports:
            raise ConventionError(f"no reference server of this page serves port {doc}")
        return f"{found.group(1)}:{ports[doc]}/"

    return LOCAL_URL.sub(swap, text)


def rewrite_serve_port(text: str, port: int) -> str:
    """A `serve-sim --port P ... &` line as run: on PORT, in the foreground of its own process."""
    words = _words(text)
    foreground = shlex.join(words[:-1] if words[-1:] == ["&"] else words)
    return SERVE_PORT.sub(lambda found: f"{found.group(1)}{port}", foreground, count=1)


def shared_data(blocks: list[Block]) -> set[str]:
    """The `../shared/data/NAME` entries a page's run blocks read (a clone may lack them: the page then skips)."""
    return {found.group(1) for b in blocks if b.kind == "run" for found in SHARED_DATA.finditer(b.text)}
