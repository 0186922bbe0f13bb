"""Tool calls through a real server: SmolLM2-135M-Instruct served by llama-server under two tool-capable chat
templates as llama.cpp ships them, Qwen3.5-4B's (template-opened thinking, `<function=…><parameter=…>` XML calls,
with `--reasoning-budget`) and Qwen2.5's (Hermes `<tool_call>{json}</tool_call>`), through `qualeval run
--stream-parity` (tool_choice `required` and `auto`) and `qualeval probe --tools`.

SmolLM2 is a weak model: what it calls, and what the server makes of it, are findings (printed, see -s), never
what a test asserts. A recording proxy (wiretap) keeps the bytes the server sent; the tests hold every record
against them: the calls are the server's, the status is what those bytes call for, a verdict is right only when
the calls are, leaked markup is flagged and what it held reported apart, and the summary's figures are the
records' own.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from qualeval.records import ENDPOINT_FAILED, WIRE_FAULTS
from tests.real_server.conftest import QWEN35, SMOLLM2, SMOLLM2_ARGS, TEMPLATES, LlamaServer
from tests.real_server.test_runs import final_records, qualeval
from tests.real_server.wiretap import Exchange, Wiretap, merged

pytestmark = [pytest.mark.real_server, pytest.mark.real_model, pytest.mark.xdist_group("real_tools")]
"""One xdist worker for the file: one server at a time on a two-core machine."""

QWEN25 = TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja"
SERVED = {"qwen3.5": (QWEN35, ["--reasoning-budget", "48"]), "qwen2.5": (QWEN25, [])}
"""Each template with the flags it is served with (all with SMOLLM2_ARGS: --jinja, --no-repack, -t 1)."""
TASK = Path(__file__).resolve().parents[2] / "tasks" / "tool_weather.yaml"
CHOICES = ("required", "auto")
MAX_TOKENS = "96"
"""Room for Qwen3.5's thinking budget (48) and a call; SmolLM2's prose under Qwen2.5 runs to it."""
MARKERS = ("<tool_call>", "<function=")
"""How the two templates open a call: written in content or reasoning, it is markup the server did not parse."""


@dataclass
class Run:
    out: Path
    exchanges: list[Exchange]
    items: int


@pytest.fixture(scope="module", params=sorted(SERVED))
def tapped(request: pytest.FixtureRequest, llama_binary: Path, tmp_path_factory: Any) -> Iterator[tuple[str, Wiretap]]:
    """One template's server at a time (module-scoped, parametrized: pytest stops one before it starts the next),
    behind the proxy. No prompt cache: a request is then computed the same way streamed and not (thinking_server)."""
    template, extra = SERVED[request.param]
    if not template.is_file():  # a failure under CI, as every skip of a real_server test
        pytest.skip(f"the real chat template is missing: {template} (../shared/data/chat_templates)")
    log = tmp_path_factory.mktemp(f"tools-{request.param}") / "llama-server.log"
    args = [*SMOLLM2_ARGS, "--chat-template-file", str(template), *extra, "--no-cache-prompt"]
    server = LlamaServer(llama_binary, SMOLLM2, log, args=args)
    server.start()
    tap = Wiretap(server.root)
    try:
        yield request.param, tap
    finally:
        tap.close()
        server.stop()


NO_CALL_ITEM = re.compile(r"\n  - id: no_tool\n(?:    .*\n)+")
"""tool_weather's item that expects no call: a `required` task may not hold one (refused at load)."""


def task_text(choice: str) -> str:
    """tool_weather as sent with `choice`; under `required`, without its no-call item."""
    text = TASK.read_text().replace("\ntool_choice: auto\n", f"\ntool_choice: {choice}\n")
    assert f"\ntool_choice: {choice}\n" in text
    if choice == "required":
        text, dropped = NO_CALL_ITEM.subn("\n", text)
        assert dropped == 1
    return text


@pytest.fixture(scope="module", params=CHOICES)
def run(tapped: tuple[str, Wiretap], request: pytest.FixtureRequest, tmp_path_factory: Any) -> Run:
    """tool_weather with one tool_choice, every item streamed and not (--stream-parity), a request at a time."""
    name, tap = tapped
    choice = request.param
    folder = tmp_path_factory.mktemp(f"tool-runs-{name}-{choice}")
    task = folder / f"tool_weather_{choice}.yaml"
    task.write_text(task_text(choice))
    start = len(tap.exchanges)
    done = qualeval(
        "run", "--base-url", tap.url, "--model", "smollm2", "--task", str(task), "--stream-parity",
        "--max-tokens", MAX_TOKENS, "--concurrency", "1", "--warmup", "0", "--temperature", "0", "--no-probe",
        "--out", str(folder / choice),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report_findings(name, choice, final_records(folder / choice))
    return Run(folder / choice, tap.exchanges[start:], task.read_text().count("\n  - id: "))


def report_findings(template: str, choice: str, records: list[dict[str, Any]]) -> None:
    """What the real server did, per template x tool_choice x stream: the findings, never asserted."""
    for stream in (True, False):
        side = [r for r in records if bool(r["request"].get("stream")) is stream]
        wire = Counter(r["tools"]["status"] if r["tools"] else r["status"] for r in side)
        finish = Counter(r["finish_reason"] for r in side)
        calls = sum(len(r["tools"]["calls"]) for r in side if r["tools"])
        right = sum(bool(r["score"]["correct"]) for r in side)
        recovered = sum(bool(r["tools"] and r["tools"]["recovered"]) for r in side)
        print(f"FINDING {template} tool_choice={choice} stream={stream}: wire {dict(wire)}; finish {dict(finish)};"
              f" calls {calls}; right {right}/{len(side)}; recovered {recovered}")  # fmt: skip


def _key(body: dict[str, Any]) -> str:
    return json.dumps([body["messages"], bool(body.get("stream")), body.get("tool_choice")], sort_keys=True)


def sent_for(record: dict[str, Any], exchanges: list[Exchange]) -> Exchange:
    """The exchange the record read: its request, the last one sent (a retry sends it again)."""
    matches = [e for e in exchanges if e.path.endswith("/chat/completions") and _key(e.body) == _key(record["request"])]
    assert matches, record["sample_id"]
    return matches[-1]


def _norm(value: Any) -> Any:
    """Strings as BFCL compares them: case, spaces and , . / - _ * ^ aside."""
    return re.sub(r"[ ,./\-_*^]", "", value.lower()) if isinstance(value, str) else value


def _fits(args: dict[str, Any], expected: dict[str, Any]) -> bool:
    params = expected["params"]
    if set(args) - set(params):
        return False
    for param, values in params.items():
        if param not in args:
            if "" not in values:
                return False
        elif _norm(args[param]) not in [_norm(v) for v in values if v != ""] or type(args[param]) is bool:
            return False
    return True


def right_calls(
    calls: list[tuple[str, str]], expected: dict[str, Any], *, cut: bool = False, markup: bool = False
) -> bool:
    """A grading of tool_weather's calls written here apart from qualeval's: the exact count, each expected call
    matched once (any order) by name and by every value among the acceptable ones. Where no call is expected, a
    response cut off (`cut`: finish length) decided nothing, and one that wrote call markup (`markup`) did call."""
    if expected["trigger"] == "none":
        return not calls and not cut and not markup
    if expected["trigger"] == "any":
        return bool(calls)
    parsed = []
    for name, text in calls:
        try:
            args = json.loads(text)
        except ValueError:
            return False
        if not isinstance(args, dict):
            return False
        parsed.append((name, args))
    if len(parsed) != len(expected["calls"]):
        return False
    left = list(expected["calls"])
    for name, args in parsed:
        match = next((e for e in left if e["name"] == name and _fits(args, e)), None)
        if match is None:
            return False
        left.remove(match)
    return True


def wire_statuses(sent: dict[str, Any], tools: list[dict[str, Any]], forced: bool) -> set[str]:
    """The statuses the server's bytes call for, read here apart from qualeval's reader (which knows more formats:
    where it names the format it read, a leak status is allowed on top)."""
    calls, finish, content, reasoning = sent["calls"], sent["finish_reason"], sent["content"], sent["reasoning"]
    in_content = any(m in content for m in MARKERS)
    in_reasoning = not calls and any(m in reasoning for m in MARKERS)
    if finish == "length" and (calls or in_content or in_reasoning):
        return {"truncated_call"} if calls else {"truncated_call", "markup_in_content", "call_in_reasoning"}
    if in_content:
        return {"markup_in_content"}
    if in_reasoning:
        return {"call_in_reasoning"}
    if finish == "tool_calls" and not calls:
        return {"finish_reason_mismatch"}
    if finish == "stop" and calls and not forced:
        return {"finish_reason_mismatch"}
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    for name, text in calls:
        try:
            args = json.loads(text)
        except ValueError:
            return {"args_invalid_json"}
        if not isinstance(args, dict):
            return {"args_invalid_json"}
        if name not in schemas or not jsonschema.Draft202012Validator(schemas[name]).is_valid(args):
            return {"args_schema_violation"}
    if not calls and not content.strip() and reasoning.strip():
        return {"only_reasoning"}
    return {"ok"}


def check_record(record: dict[str, Any], exchange: Exchange) -> None:
    if exchange.status != 200:  # an endpoint error, apart from the model's answers
        assert record["status"] in ENDPOINT_FAILED, (record["status"], exchange.status)
        return
    sent, tools, request = merged(exchange), record["tools"], record["request"]
    assert tools is not None, record["sample_id"]
    got = [(c["name"], c["arguments"]) for c in tools["calls"]]
    assert got == sent["calls"], (got, sent["calls"])  # the server's calls, deltas merged as the server sent them
    assert record["finish_reason"] == sent["finish_reason"]
    # nothing lost between the wire and the record (qualeval may move a `</think>` the model wrote itself)
    assert record["content"].strip() in sent["content"] or record["content"].strip() in sent["reasoning"]
    allowed = wire_statuses(sent, request["tools"], isinstance(request.get("tool_choice"), dict))
    if tools["recovered_format"]:  # markup of a format the oracle does not read
        allowed |= {"markup_in_content", "call_in_reasoning", "truncated_call"}
    assert tools["status"] in allowed, (tools["status"], allowed, sent)
    assert tools["status"] != "delta_without_index"  # llama.cpp indexes every delta
    # the verdict is the served calls' only: right exactly when they are; leaked markup is never a call
    graded = right_calls(
        sent["calls"], tools["expected"], cut=sent["finish_reason"] == "length", markup=bool(tools["recovered_format"])
    )
    assert bool(record["score"]["correct"]) == graded, (got, tools["expected"], sent["finish_reason"])
    if tools["recovered"]:
        assert tools["status"] in (*WIRE_FAULTS, "truncated_call") and tools["recovered_from"] in (
            "content",
            "reasoning",
        )
        recovered = [(c["name"], c["arguments"]) for c in tools["recovered"]]
        assert tools["recovered_correct"] == right_calls(recovered, tools["expected"])
    else:
        assert tools["recovered_correct"] is None
    if not got:
        assert tools["schema_valid"] is None
    elif tools["status"] in ("args_invalid_json", "args_schema_violation"):
        assert tools["schema_valid"] is False
    elif tools["status"] == "ok":
        assert tools["schema_valid"] is True


def test_every_record_is_what_the_server_sent(run: Run) -> None:
    records = final_records(run.out)
    assert len(records) == 2 * run.items  # every item streamed and not
    for record in records:
        check_record(record, sent_for(record, run.exchanges))


def _canonical(calls: list[dict[str, Any]]) -> tuple[str, ...]:
    out = []
    for call in calls:
        try:
            out.append(f"{call['name']}({json.dumps(json.loads(call['arguments']), sort_keys=True)})")
        except ValueError:
            out.append(f"{call['name']}(text:{call['arguments'].strip()})")
    return tuple(sorted(out))


def check_summary(out: Path, items: int) -> None:
    """The run summary's figures, recounted from the records."""
    records = final_records(out)
    entry = json.loads((out / "summary.json").read_text())["tasks"]["tool_weather"]
    summary, figures = entry["summary"], entry["tools"]
    assert summary["records"] == len(records) and sum(summary["statuses"].values()) == len(records)
    assert summary["statuses"] == dict(Counter(r["status"] for r in records))
    failed = [r for r in records if r["status"] in ENDPOINT_FAILED]
    answered = [r for r in records if r["status"] not in ENDPOINT_FAILED]
    assert summary["endpoint_errors"] == len(failed) and figures["unanswered"] == len(failed)
    assert figures["responses"] == len(answered)
    assert figures["statuses"] == dict(Counter(r["tools"]["status"] for r in answered))
    called = [r for r in answered if r["tools"]["calls"]]
    pairs = Counter((bool(r["tools"]["calls"]), r["tools"]["expected"]["trigger"] != "none") for r in answered)
    trigger = figures["trigger"]
    assert (trigger["called_expected"], trigger["called_unexpected"]) == (pairs[True, True], pairs[True, False])
    assert (trigger["missed"], trigger["held_back"]) == (pairs[False, True], pairs[False, False])
    assert figures["schema_valid"]["n"] == len(called)
    assert figures["schema_valid"]["hits"] == sum(bool(r["tools"]["schema_valid"]) for r in called)
    wrong = [r for r in answered if not r["score"]["correct"]]
    recovery = figures["recovery"]
    assert recovery["wrong"] == len(wrong) and recovery["recovered"] == sum(
        bool(r["tools"]["recovered"]) for r in wrong
    )
    assert recovery["would_be_right"] == sum(bool(r["tools"]["recovered_correct"]) for r in wrong)
    for level, figures_of_level in entry["levels"].items():
        mine = [r for r in answered if r["level"] == level]
        assert figures_of_level["accuracy"]["n"] == len(mine)
        assert figures_of_level["accuracy"]["correct"] == sum(bool(r["score"]["correct"]) for r in mine)
    # stream parity: a row for each item, sent both ways; agreement recounted from the two records
    by_item: dict[str, dict[bool, dict[str, Any]]] = {}
    for r in records:
        by_item.setdefault(r["sample_id"], {})[bool(r["request"].get("stream"))] = r
    assert len(by_item) == items and all(len(sides) == 2 for sides in by_item.values())
    parity = figures["parity"]
    both = {i: s for i, s in by_item.items() if all(r["status"] not in ENDPOINT_FAILED for r in s.values())}
    assert parity["pairs"] + parity["unanswered"] == items and parity["pairs"] == len(both)
    agree = [
        i
        for i, s in both.items()
        if _canonical(s[True]["tools"]["calls"]) == _canonical(s[False]["tools"]["calls"])
        and bool(s[True]["score"]["correct"]) == bool(s[False]["score"]["correct"])
    ]
    assert parity["agree"] == len(agree)
    assert {d["item"].rsplit("/", 1)[-1] for d in parity["discordant"]} == {
        i.rsplit("/", 1)[-1] for i in both if i not in agree
    }


def test_the_summary_figures_are_the_records(run: Run) -> None:
    check_summary(run.out, run.items)


def test_the_probe_reports_one_line_per_broken_contract(tapped: tuple[str, Wiretap], tmp_path: Path) -> None:
    name, tap = tapped
    start = len(tap.exchanges)
    found = tmp_path / "probe.json"
    # a short first budget and a bounded time: SmolLM2 loops to any budget, and the contracts get what is left
    probe = ("--tools", "--probe-time", "600", "--max-tokens", "64", "--json", str(found))
    done = qualeval("probe", "--base-url", tap.url, "--model", "smollm2", *probe)
    assert done.returncode == 0, done.stderr[-2000:]
    contracts = json.loads(found.read_text())["tool_contracts"]
    assert contracts, done.stdout
    broken = [line for line in done.stdout.splitlines() if line.startswith("broken: tool_choice")]
    assert len(broken) == sum(c["held"] is False for c in contracts), (broken, contracts)
    replied = [e for e in tap.exchanges[start:] if e.body.get("tools") and e.status == 200 and e.raw]
    sent = [merged(e) | {"choice": e.body.get("tool_choice")} for e in replied]  # a request given up has no reply
    for contract in contracts:
        print(f"FINDING {name} probe: tool_choice {contract['tool_choice']} thinking {contract['thinking']}"
              f" effort {contract['effort']}: held {contract['held']} ({contract['seen']})")  # fmt: skip
        if contract["tool_choice"] == "required" and contract["held"] is False:
            assert any(s["choice"] == "required" and not (s["calls"] and s["finish_reason"] == "tool_calls")
                       for s in sent)  # fmt: skip
        if contract["tool_choice"] == "required" and contract["held"] is True:
            assert any(s["choice"] == "required" and s["calls"] and s["finish_reason"] == "tool_calls" for s in sent)
        if contract["tool_choice"] == "none" and contract["held"] is False:
            assert any(s["choice"] == "none" and s["calls"] for s in sent)
