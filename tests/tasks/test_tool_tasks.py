"""Tool-call tasks written as YAML: the tools, tool_choice, expected calls and trigger become the sample's; every
mistake is one error line naming the file, the field and the item. And the pinned fetch of a task's wheel."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.errors import InputError
from qualeval.records import ExpectedCall, ToolAnswer, WheelSpec
from qualeval.tasks import build_samples, load_task
from qualeval.tasks.wheels import wheel_file
from tests.conftest import ROOT

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
BASE: dict[str, Any] = {
    "name": "t",
    "tools": [WEATHER],
    "samples": [{"question": "Weather in Paris?", "calls": [{"get_weather": {"city": ["Paris", "paris"]}}]}],
    "doc_to_calls": "calls",
    "scorer": "tool_call",
}


def _task(tmp: Path, **changes: Any) -> Path:
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump({**BASE, **changes}, sort_keys=False))
    return path


def _one_error(path: Path) -> str:
    done = CliRunner().invoke(app, ["tasks", "show", str(path)])
    assert done.exit_code == 2, (done.exit_code, done.stderr)
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    lines = [line for line in " ".join(done.stderr.split(" ")).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return " ".join(done.stderr.split())


def test_the_shipped_example_gives_tools_choice_and_expected_calls() -> None:
    samples = build_samples(load_task("tool_weather"))
    assert [s.id for s in samples][:2] == ["tool_weather/test/paris_now", "tool_weather/test/tokyo_fahrenheit"]
    first = samples[0]
    assert [t["function"]["name"] for t in first.tools] == ["get_weather", "get_forecast"]
    assert first.tool_choice == "auto"
    assert first.tool_answer == ToolAnswer(
        trigger="call",
        calls=(ExpectedCall(name="get_weather", params={"city": ("Paris", "Paris, France"), "unit": ("celsius", "")}),),
    )
    assert first.gold == "get_weather(city='Paris', unit='celsius')"
    assert first.messages[-1].content == "What is the weather like in Paris right now?"
    two = next(s for s in samples if s.id.endswith("two_cities"))
    assert two.tool_answer is not None and len(two.tool_answer.calls) == 2
    none = samples[-1]
    assert none.tool_answer == ToolAnswer(trigger="none") and none.gold == "no call"


def test_a_named_tool_choice_and_a_fixed_trigger(tmp_path: Path) -> None:
    choice = {"type": "function", "function": {"name": "get_weather"}}
    [sample] = build_samples(load_task(str(_task(tmp_path, tool_choice=choice))))
    assert sample.tool_choice == choice
    path = _task(tmp_path, trigger="any", doc_to_calls=None, samples=[{"question": "Anything?"}])
    [sample] = build_samples(load_task(str(path)))
    assert sample.tool_answer == ToolAnswer(trigger="any") and sample.gold == "any call"


def test_bfcl_function_documents_are_converted(tmp_path: Path) -> None:
    doc = {"name": "math.factorial", "parameters": {"type": "dict", "properties": {"n": {"type": "integer"}}}}
    path = _task(
        tmp_path,
        tools=[doc],
        tool_format="bfcl",
        samples=[{"question": "5!", "calls": [{"math.factorial": {"n": [5]}}]}],
    )
    [sample] = build_samples(load_task(str(path)))
    assert sample.tools[0]["function"]["name"] == "math_factorial"
    assert sample.tools[0]["function"]["parameters"]["type"] == "object"
    assert sample.tool_answer is not None and sample.tool_answer.calls[0].name == "math_factorial"


def test_messages_from_a_field_send_the_single_turn(tmp_path: Path) -> None:
    turn = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}]
    samples = [{"question": [turn], "calls": [{"get_weather": {"city": ["Paris"]}}]}]
    [sample] = build_samples(load_task(str(_task(tmp_path, samples=samples, doc_to_messages="question"))))
    assert [(m.role, m.content) for m in sample.messages] == [(m["role"], m["content"]) for m in turn]
    assert sample.question == "Weather in Paris?"


BAD: list[tuple[dict[str, Any], str]] = [
    (
        {"tools": [{"type": "function", "function": {"name": "get weather"}}]},
        "field 'tools': tool 'get weather': the name",
    ),
    (
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "string"}}}]},
        "field 'tools': tool 'f': parameters must be an object schema",
    ),
    (
        {
            "tools": [
                {
                    "type": "function",
                    "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "str"}}}},
                }
            ]
        },
        "tool 'f': parameters.x has type 'str', which JSON Schema does not have",
    ),
    ({"tools": [{"name": "f"}]}, "field 'tools': a tool is not an OpenAI function tool"),
    ({"tools": []}, "field '(task)': the tool_call scorer needs the tools offered"),
    ({"doc_to_calls": None}, "the tool_call scorer needs expected calls (doc_to_calls) or a trigger none/any"),
    (
        {"samples": [{"question": "q", "calls": [{"get_wether": {"city": ["Paris"]}}]}]},
        "field 'doc_to_calls': document 0 of split 'test': expected call 'get_wether' is not a tool of the item",
    ),
    (
        {"samples": [{"question": "q", "calls": [{"get_weather": {"city": "Paris"}}]}]},
        "get_weather.city: acceptable values must be a list",
    ),
    (
        {"samples": [{"question": "q"}]},
        "field 'doc_to_calls': document 0 of split 'test': no expected calls and no trigger",
    ),
    (
        {"tool_choice": {"type": "function", "function": {"name": "other"}}},
        "field 'tool_choice': document 0 of split 'test': names 'other', not a tool of the item",
    ),
    ({"tool_choice": "always"}, "field 'tool_choice"),
    (
        {
            "doc_to_messages": "question",
            "samples": [
                {"question": [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]], "calls": []}
            ],
        },
        "field 'doc_to_messages': document 0 of split 'test': 2 turns; only single-turn items can be sent",
    ),
    (
        {"trigger": "none"},
        "field 'doc_to_calls': document 0 of split 'test': expected calls where the trigger is 'none'",
    ),
    ({"trigger": "never"}, "field 'trigger'"),
]


@pytest.mark.parametrize(("changes", "words"), BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_tool_task_input_is_one_error_line(tmp_path: Path, changes: dict[str, Any], words: str) -> None:
    path = _task(tmp_path, **changes)
    message = _one_error(path)
    assert message.startswith(f"error: {path}") and words in message, message


def test_a_bad_tool_of_one_item_names_the_item(tmp_path: Path) -> None:
    samples = [
        {"question": "q", "tools": [WEATHER], "calls": [{"get_weather": {"city": ["Paris"]}}]},
        {"question": "r", "tools": [{"type": "function", "function": {"name": "f", "parameters": []}}], "calls": []},
    ]
    path = _task(tmp_path, tools=[], doc_to_tools="tools", samples=samples)
    with pytest.raises(
        InputError, match=r"field 'doc_to_tools': document 1 of split 'test': tool 'f': parameters must"
    ):
        build_samples(load_task(str(path)))


# --- the pinned fetch of a task's wheel: a local HTTP server stands for PyPI --------------------------------------


def _fake_wheel() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("pkg/data/docs.jsonl", '{"id": "a"}\n')
    return buffer.getvalue()


@contextmanager
def _pypi(files: dict[str, bytes]) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _release(base: str, raw: bytes, sha: str | None = None) -> dict[str, bytes]:
    entry = {"filename": "fake_pkg-1.0-py3-none-any.whl", "url": f"{base}/files/fake.whl"}
    entry["digests"] = {"sha256": sha or hashlib.sha256(raw).hexdigest()}  # type: ignore[assignment]
    return {"/pypi/fake-pkg/1.0/json": json.dumps({"urls": [entry]}).encode(), "/files/fake.whl": raw}


def test_a_wheel_is_fetched_once_verified_and_then_read_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = _fake_wheel()
    wheel = WheelSpec(package="fake-pkg", version="1.0", sha256=hashlib.sha256(raw).hexdigest())
    monkeypatch.setenv("QUALEVAL_CACHE", str(tmp_path / "cache"))
    files: dict[str, bytes] = {}
    with _pypi(files) as base:
        files.update(_release(base, raw))
        monkeypatch.setattr("qualeval.tasks.wheels.PYPI_JSON", base + "/pypi/{package}/{version}/json")
        path = wheel_file(wheel)
    assert path == tmp_path / "cache" / "fake_pkg-1.0-py3-none-any.whl" and path.read_bytes() == raw
    assert wheel_file(wheel) == path  # the server is gone: the cached copy is read


def test_the_project_page_is_asked_where_the_release_page_is_not_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = _fake_wheel()
    wheel = WheelSpec(package="fake-pkg", version="1.0", sha256=hashlib.sha256(raw).hexdigest())
    monkeypatch.setenv("QUALEVAL_CACHE", str(tmp_path))
    files: dict[str, bytes] = {}
    with _pypi(files) as base:
        release = _release(base, raw)
        entry = json.loads(release.pop("/pypi/fake-pkg/1.0/json"))["urls"]
        files.update(release, **{"/pypi/fake-pkg/json": json.dumps({"releases": {"1.0": entry}}).encode()})
        monkeypatch.setattr("qualeval.tasks.wheels.PYPI_JSON", base + "/pypi/{package}/{version}/json")
        monkeypatch.setattr("qualeval.tasks.wheels.PYPI_PROJECT_JSON", base + "/pypi/{package}/json")
        assert wheel_file(wheel).read_bytes() == raw


def test_a_hash_mismatch_or_a_failed_download_is_one_line_naming_the_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = _fake_wheel()
    pinned = "0" * 64
    wheel = WheelSpec(package="fake-pkg", version="1.0", sha256=pinned)
    monkeypatch.setenv("QUALEVAL_CACHE", str(tmp_path / "cache"))
    files: dict[str, bytes] = {}
    with _pypi(files) as base:
        files.update(_release(base, raw, sha=pinned))  # PyPI lists the pinned hash, the file has another
        monkeypatch.setattr("qualeval.tasks.wheels.PYPI_JSON", base + "/pypi/{package}/{version}/json")
        with pytest.raises(InputError, match=rf"^{base}/files/fake\.whl: sha256 [0-9a-f]{{64}} is not the task's 0+;"):
            wheel_file(wheel)
        files.pop("/files/fake.whl")
        with pytest.raises(InputError, match=rf"^{base}/files/fake\.whl: cannot fetch fake-pkg==1\.0 \(Not Found\)"):
            wheel_file(wheel)
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())
    with pytest.raises(InputError, match=rf"^{base}/pypi/fake-pkg/1\.0/json: cannot fetch fake-pkg==1\.0"):
        wheel_file(wheel)  # nothing listens there now


def test_the_docs_show_the_shipped_example_as_it_is() -> None:
    page = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
    block = page.split("<!-- file: tool_weather.yaml -->\n```yaml\n", 1)[1].split("```\n", 1)[0]
    assert block == (ROOT / "tasks" / "tool_weather.yaml").read_text(encoding="utf-8")
