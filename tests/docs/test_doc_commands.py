"""Every command the docs show that can run against the reference server is run (issue 29).

The convention: a `bash` fence holding a line that starts with `qualeval ` (in README.md and docs/**/*.md) is run,
unless the line right before it is `<!-- not run: REASON -->`; `<!-- file: NAME -->` writes a block to NAME instead;
`<!-- exit: N -->` says the block's last command exits N; `qualeval serve-sim --port P ... &` starts the page's own
server on a free port and every `//127.0.0.1:P/` after it is pointed there. One working directory per page."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, SHARED
from tests.docs.blocks import ConventionError, lint_page, parse_page, rewrite_serve_port, rewrite_urls, shared_data
from tests.docs.runner import DocCommandFailed, run_page

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.docs
@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_page_blocks_follow_the_convention(page: Path) -> None:
    """Each command block is run as written or says why not: a marker without its reason, a command for a remote
    host, a port no server of the page serves, elided arguments, all fail here."""
    try:
        blocks = parse_page(page.read_text(encoding="utf-8"))
    except ConventionError as wrong:
        pytest.fail(f"{_name(page)}: {wrong}")
    problems = lint_page(blocks)
    assert not problems, "\n".join(
        f"{_name(page)}: {p} (make it run here, or mark it `<!-- not run: REASON -->`)" for p in problems
    )


@pytest.mark.docs
@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_page_commands_run(page: Path, tmp_path: Path) -> None:
    """The page's run blocks, in order, exit as the page says (0, or its `exit:`)."""
    blocks = parse_page(page.read_text(encoding="utf-8"))
    problems = lint_page(blocks)
    if problems:
        pytest.fail("\n".join(f"{_name(page)}: {p}" for p in problems), pytrace=False)
    missing = sorted(name for name in shared_data(blocks) if not (SHARED / name).exists())
    if missing:  # as tests/conftest.py's needs_* markers: a clone without ../shared/data skips
        pytest.skip(f"{_name(page)} reads ../shared/data/{{{','.join(missing)}}}, missing")
    try:
        run_page(_name(page), blocks, tmp_path)
    except DocCommandFailed as failed:
        pytest.fail(str(failed), pytrace=False)


# The convention itself, on small pages written here.

FENCE = "```"


def _page(*parts: str) -> str:
    return "\n".join(parts) + "\n"


def _bash(*lines: str) -> str:
    return "\n".join([f"{FENCE}bash", *lines, FENCE])


def test_a_qualeval_bash_block_with_no_marker_is_run(tmp_path: Path) -> None:
    blocks = parse_page(_page("# Page", "", _bash("qualeval tasks list > listed.txt", "test -s listed.txt")))
    assert [b.kind for b in blocks] == ["run"]
    assert run_page("page.md", blocks, tmp_path) == 2
    assert "gsm8k" in (tmp_path / "clone" / "listed.txt").read_text()


def test_output_and_other_blocks_are_never_run() -> None:
    shown = _page(f"{FENCE}console", "qualeval tasks list", FENCE, f"{FENCE}text", "qualeval run", FENCE)
    plain = _page(_bash("python -m pytest"))
    assert [b.kind for b in parse_page(shown + plain)] == ["shown", "shown", "shown"]


@pytest.mark.parametrize("marker", ["<!-- not run: -->", "<!-- not run -->", "<!--not run:   -->"])
def test_not_run_without_a_reason_is_refused(marker: str) -> None:
    with pytest.raises(ConventionError, match="reason"):
        parse_page(_page("Intro.", marker, _bash("qualeval run --base-url http://HOST:8000/v1 --model m")))


def test_not_run_with_a_reason_is_not_run_and_keeps_it(tmp_path: Path) -> None:
    marker = "<!-- not run: a GPU server -->"
    blocks = parse_page(_page(marker, _bash("qualeval run --base-url http://HOST:8000/v1 --model m --task gsm8k")))
    assert [(b.kind, b.value) for b in blocks] == [("not run", "a GPU server")]
    assert lint_page(blocks) == []
    assert run_page("page.md", blocks, tmp_path) == 0


def test_the_marker_must_be_the_line_right_before_the_fence() -> None:
    command = _bash("qualeval run --base-url http://HOST:8000/v1 --model m --task gsm8k")
    blocks = parse_page(_page("<!-- not run: a GPU server -->", "", command))
    assert [b.kind for b in blocks] == ["run"]
    assert any("HOST" in p for p in lint_page(blocks))


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("qualeval run --base-url http://HOST:8000/v1 --model m --task gsm8k", "HOST"),
        ("qualeval run --base-url http://127.0.0.1:8011/v1 --model sim --task gsm8k", "8011"),
        ("qualeval run ... --task gsm8k", "elided"),
        ("$ qualeval tasks list", "prompt"),
        ("qualeval serve-sim --port 8011", "serve-sim --port P"),
        ("qualeval tasks list &", "background"),
    ],
)
def test_a_command_block_that_cannot_run_must_say_why(command: str, why: str) -> None:
    """The classification is pinned: each of these is neither run-able nor marked, so the page fails."""
    problems = lint_page(parse_page(_page(_bash(command))))
    assert problems
    assert why in problems[0]


def test_a_url_is_served_only_by_an_earlier_server_of_the_same_page() -> None:
    server = _bash("qualeval serve-sim --port 8011 --task examples/planet_facts.yaml &")
    client = _bash("qualeval run --base-url http://127.0.0.1:8011/v1 --model sim --task examples/planet_facts.yaml \\")
    client = client.replace("\\\n", "\\\n  --limit 2 --out runs/a\n", 1)
    assert lint_page(parse_page(_page(server, client))) == []
    assert lint_page(parse_page(_page(client, server)))


def test_continuations_join_and_comments_drop() -> None:
    (block,) = parse_page(_page(_bash("# a comment", "qualeval run --model sim \\", "  --limit 2   # two", "")))
    assert [(c.line, c.text) for c in block.commands()] == [(3, "qualeval run --model sim --limit 2   # two")]


def test_a_file_block_is_written_before_the_next_block_runs(tmp_path: Path) -> None:
    answers = _page("<!-- file: sub/answers.jsonl -->", f"{FENCE}json", '{"question": "q", "answer": 4}', FENCE)
    reader = _bash("qualeval tasks list > /dev/null", "grep -q '\"answer\": 4' sub/answers.jsonl")
    blocks = parse_page(answers + _page(reader))
    assert [(b.kind, b.value) for b in blocks] == [("file", "sub/answers.jsonl"), ("run", "")]
    assert run_page("page.md", blocks, tmp_path) == 2


@pytest.mark.parametrize("name", ["", "/etc/passwd", "../outside.yaml"])
def test_a_file_marker_needs_a_name_inside_the_page_directory(name: str) -> None:
    with pytest.raises(ConventionError, match="file:"):
        parse_page(_page(f"<!-- file: {name} -->", f"{FENCE}yaml", "a: 1", FENCE))


def test_urls_are_pointed_at_the_page_server_port() -> None:
    text = "qualeval compare --base-url http://127.0.0.1:8011/v1 --other http://localhost:8012/v1/ --port 8011"
    rewritten = rewrite_urls(text, {8011: 40001, 8012: 40002})
    assert (
        rewritten
        == "qualeval compare --base-url http://127.0.0.1:40001/v1 --other http://localhost:40002/v1/ --port 8011"
    )
    with pytest.raises(ConventionError, match="8013"):
        rewrite_urls("qualeval run --base-url http://127.0.0.1:8013/v1", {8011: 40001})


def test_a_server_line_runs_in_the_foreground_of_its_own_process_on_the_free_port() -> None:
    line = "qualeval serve-sim --port 8011 --task knowledge_qa --decode-ms 4 &"
    assert rewrite_serve_port(line, 40001) == "qualeval serve-sim --port 40001 --task knowledge_qa --decode-ms 4"


def test_a_page_server_is_started_on_a_free_port_used_and_stopped(tmp_path: Path) -> None:
    task = "examples/planet_facts.yaml"
    page = _page(
        _bash(f"qualeval serve-sim --port 8011 --task {task} &"),
        "Then:",
        _bash(
            f"qualeval run --base-url http://127.0.0.1:8011/v1 --model sim --task {task} --limit 2 --out runs/a",
            "echo http://127.0.0.1:8011/v1 > url.txt",
        ),
    )
    blocks = parse_page(page)
    assert lint_page(blocks) == []
    assert run_page("page.md", blocks, tmp_path) == 3
    assert (tmp_path / "clone" / "runs" / "a" / "summary.json").exists()
    url = (tmp_path / "clone" / "url.txt").read_text().strip()
    port = int(url.split(":")[2].split("/")[0])
    assert port != 8011
    with pytest.raises(httpx.ConnectError):  # the page's server is gone once the page ends
        httpx.get(f"{url}/models", timeout=5)


def test_exit_marks_the_status_of_the_block_last_command(tmp_path: Path) -> None:
    refused = _bash("qualeval tasks list > /dev/null", "qualeval tasks show no-such-task")
    (block,) = parse_page(_page("<!-- exit: 2 -->", refused))
    assert (block.kind, block.exit_status) == ("run", 2)
    assert run_page("page.md", [block], tmp_path / "marked") == 2
    with pytest.raises(DocCommandFailed, match=r"page.md:4: qualeval tasks show no-such-task\nexited 2, expected 0"):
        run_page("page.md", parse_page(_page("Text.", refused)), tmp_path / "unmarked")


def test_exit_holds_only_for_the_last_command(tmp_path: Path) -> None:
    first_fails = _bash("qualeval tasks show no-such-task", "qualeval tasks list")
    with pytest.raises(DocCommandFailed, match="unknown task 'no-such-task'"):
        run_page("page.md", parse_page(_page("<!-- exit: 2 -->", first_fails)), tmp_path)


@pytest.mark.parametrize("marker", ["<!-- exit: two -->", "<!-- exit: -->"])
def test_exit_needs_a_status(marker: str) -> None:
    with pytest.raises(ConventionError, match="exit"):
        parse_page(_page(marker, _bash("qualeval tasks list")))


def test_exit_on_a_block_that_is_not_run_is_refused() -> None:
    with pytest.raises(ConventionError, match="not run"):
        parse_page(_page("<!-- exit: 1 -->", f"{FENCE}text", "NO-GO", FENCE))


def test_a_failing_command_still_stops_the_page_servers(tmp_path: Path) -> None:
    page = _page(
        _bash("qualeval serve-sim --port 8011 --task examples/planet_facts.yaml &"),
        _bash("echo http://127.0.0.1:8011/v1 > url.txt", "qualeval tasks show no-such-task"),
    )
    with pytest.raises(DocCommandFailed, match="no-such-task"):
        run_page("page.md", parse_page(page), tmp_path)
    url = (tmp_path / "clone" / "url.txt").read_text().strip()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=5)


def test_the_shared_data_a_page_runs_on_is_what_decides_a_skip() -> None:
    run = _bash(
        "qualeval tasks show gsm8k --data ../shared/data/gsm8k", "qualeval tasks show x --data ../shared/data/mmlu/"
    )
    marked = _page("<!-- not run: a GPU server -->", _bash("qualeval run --data ../shared/data/bbh --base-url x"))
    assert shared_data(parse_page(_page(run) + marked)) == {"gsm8k", "mmlu"}
