"""Bad input for tool-call tasks, through `qualeval run`: a tool schema that is not JSON Schema, an expected call
naming a tool not offered, a tool_choice of the wrong form or naming no tool, a misspelt BFCL category, BFCL's data
missing or damaged. Each is one `error:` line naming what and where, exit 2, and no request reaches the endpoint."""

from __future__ import annotations

import http.server
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from typer.testing import CliRunner

from qualeval.cli import app
from qualeval.records import tool_problem
from qualeval.records.jsonschemas import _plain, json_schema_problem

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _tool(parameters: dict[str, Any], name: str = "get_weather") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


BASE: dict[str, Any] = {
    "name": "t",
    "tools": [_tool(CITY)],
    "samples": [{"id": "paris", "question": "Weather in Paris?", "calls": [{"get_weather": {"city": ["Paris"]}}]}],
    "doc_to_id": "id",
    "doc_to_text": "{{ question }}",
    "doc_to_calls": "calls",
    "scorer": "tool_call",
}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, list[str]]]:
    """A server that records every request it gets (and fails it): the tests assert it got none."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def _any(self) -> None:
            seen.append(f"{self.command} {self.path}")
            self.send_response(500)
            self.end_headers()

        do_GET = do_POST = _any

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def _run_error(endpoint: tuple[str, list[str]], tmp: Path, task: str, *extra: str) -> str:
    url, seen = endpoint
    seen.clear()
    args = ["run", "--task", task, "--base-url", url, "--model", "m", "--out", str(tmp / "run"), *extra]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, (done.exit_code, done.stderr, done.exception)
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert seen == [], seen  # nothing was sent, not even the probe
    return " ".join(done.stderr.split())


def _task(tmp: Path, **changes: Any) -> str:
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump({**BASE, **changes}, sort_keys=False))
    return str(path)


BAD_SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "minLength": "two"}}}
BAD: list[tuple[dict[str, Any], str]] = [
    (
        {"tools": [_tool(BAD_SCHEMA)]},
        ":3: field 'tools': tool 'get_weather': parameters are not valid JSON Schema: "
        "properties/city/minLength: 'two' is not of type 'integer'",
    ),
    (
        {"tools": [_tool({**CITY, "required": ["city", "city"]})]},
        "tool 'get_weather': parameters are not valid JSON Schema: required: ['city', 'city'] has non-unique",
    ),
    (
        {"samples": [{"id": "paris", "question": "q", "calls": [{"get_wether": {"city": ["Paris"]}}]}]},
        "field 'doc_to_calls': document 0 of split 'test', id 'paris': expected call 'get_wether' is not a tool",
    ),
    (
        {"tool_choice": {"type": "function", "function": {"name": "other"}}},
        "field 'tool_choice': document 0 of split 'test', id 'paris': names 'other', not a tool of the item",
    ),
    (
        {"tool_choice": {"type": "function", "name": "get_weather"}},
        "field 'tool_choice': {'type': 'function', 'name': 'get_weather'} is not auto, required, none or "
        "{type: function, function: {name: NAME}}",
    ),
    ({"tool_choice": "Required"}, "field 'tool_choice': 'Required' is not auto, required, none or"),
]


@pytest.mark.parametrize(("changes", "words"), BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_tool_task_is_one_line_and_nothing_is_sent(
    endpoint: tuple[str, list[str]], tmp_path: Path, changes: dict[str, Any], words: str
) -> None:
    task = _task(tmp_path, **changes)
    message = _run_error(endpoint, tmp_path, task)
    assert message.startswith(f"error: {task}") and words in message, message


def test_a_bad_schema_of_one_item_names_the_item_and_its_id(endpoint: tuple[str, list[str]], tmp_path: Path) -> None:
    samples = [
        {"id": "ok", "question": "q", "tools": [_tool(CITY)], "calls": [{"get_weather": {"city": ["Paris"]}}]},
        {"id": "broken", "question": "r", "tools": [_tool(BAD_SCHEMA)], "calls": [{"get_weather": {"city": ["x"]}}]},
    ]
    task = _task(tmp_path, tools=[], doc_to_tools="tools", samples=samples)
    message = _run_error(endpoint, tmp_path, task)
    assert "field 'doc_to_tools': document 1 of split 'test', id 'broken': tool 'get_weather': parameters are not" in (
        message
    )


def test_a_misspelt_bfcl_category_names_the_nearest(endpoint: tuple[str, list[str]], tmp_path: Path) -> None:
    message = _run_error(endpoint, tmp_path, "bfcl:simpel_python")
    assert "task 'bfcl' has no category or group 'simpel_python' (did you mean 'simple_python'?" in message
    message = _run_error(endpoint, tmp_path, "bfcl:xyz")
    assert "(one of simple_python, multiple, parallel," in message and "groups: non_live, live, relevance" in message


def test_bfcl_data_missing_or_not_a_wheel(endpoint: tuple[str, list[str]], tmp_path: Path) -> None:
    missing = tmp_path / "absent.whl"
    assert f"--data bfcl={missing}: no such file or folder" in _run_error(
        endpoint, tmp_path, "bfcl:simple_python", "--data", f"bfcl={missing}"
    )
    text = tmp_path / "text.whl"
    text.write_text("not a zip")
    assert f"{text}: not a wheel (a zip file)" in _run_error(
        endpoint, tmp_path, "bfcl:simple_python", "--data", f"bfcl={text}"
    )
    other = tmp_path / "other.whl"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("x.txt", "x")
    assert f"{other}: the wheel has no file bfcl_eval/data/BFCL_v4_simple_python.json" in _run_error(
        endpoint, tmp_path, "bfcl:simple_python", "--data", f"bfcl={other}"
    )


def test_a_damaged_wheel_member_is_one_line(endpoint: tuple[str, list[str]], tmp_path: Path) -> None:
    wheel = tmp_path / "damaged.whl"
    member = "bfcl_eval/data/BFCL_v4_simple_python.json"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(member, '{"id": "simple_python_0"}\n' * 200)
    raw = bytearray(wheel.read_bytes())
    start = raw.index(member.encode()) + len(member)  # the member's compressed bytes follow its local header
    raw[start + 4 : start + 24] = bytes(b ^ 0x55 for b in raw[start + 4 : start + 24])
    wheel.write_bytes(bytes(raw))
    message = _run_error(endpoint, tmp_path, "bfcl:simple_python", "--data", f"bfcl={wheel}")
    assert f"{wheel}: cannot read {member} from the wheel" in message


def test_bfcl_not_fetched_and_no_network(
    endpoint: tuple[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUALEVAL_CACHE", str(tmp_path / "empty"))
    # PyPI as a port nothing listens on: the fetch fails as it does offline
    monkeypatch.setattr("qualeval.tasks.wheels.PYPI_JSON", "http://127.0.0.1:9/pypi/{package}/{version}/json")
    message = _run_error(endpoint, tmp_path, "bfcl:simple_python")
    assert "http://127.0.0.1:9/pypi/bfcl-eval/2026.3.23/json: cannot fetch bfcl-eval==2026.3.23" in message
    assert "give --data PATH.whl or a folder" in message


# --- the fast reading of a schema never passes one jsonschema refuses -------------------------------------------

SCHEMAS: list[Any] = [
    CITY,
    BAD_SCHEMA,
    {**CITY, "required": ["city", "city"]},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": "0"}}},
    {"type": "object", "properties": {"n": {"type": ["integer", "integer"]}}},
    {"type": "object", "properties": {"n": {"type": []}}},
    {"type": "object", "properties": {"xs": {"type": "array", "items": [{"type": "string"}]}}},
    {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "string"}, "minItems": -1}}},
    {"type": "object", "properties": {"s": {"type": "string", "enum": "a"}}},
    {"type": "object", "properties": {"s": {"type": "string", "description": 3}}},
    {"type": "object", "additionalProperties": False, "properties": {"s": {"type": "string", "default": 1}}},
    {"type": "object", "properties": {"s": {"type": "string", "pattern": "("}}},
    {"type": "object", "properties": {"s": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"type": "string"}}},
    {"type": "object", "properties": {"s": {"type": "string", "optional": True}}},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=[f"schema{i}" for i in range(len(SCHEMAS))])
def test_the_fast_reading_agrees_with_jsonschema(schema: Any) -> None:
    try:
        Draft202012Validator.check_schema(schema)
        valid = True
    except SchemaError:
        valid = False
    assert not _plain(schema) or valid  # the fast reading vouches only for schemas jsonschema takes
    assert (json_schema_problem(schema) is None) == valid
    assert (tool_problem(_tool(schema)) is None) == valid
