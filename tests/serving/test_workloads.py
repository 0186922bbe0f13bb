"""Serving workloads by name against the reference server: the nine of issue 14 at tiny sizes, their figures in
vllm bench serve's and llama-benchy's names, prompt lengths counted by the server, output lengths forced, and
the mistakes a workload file or its flags can hold (one line, exit 2)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import qualeval
from qualeval.errors import InputError
from qualeval.records import Record, Shape
from qualeval.serving.reproduce import reproduces
from qualeval.serving.workloads import load_workload, workloads
from qualeval.sim import Behaviour, Latency, SimConfig, running_server

NINE = {
    "benchy-pp1024-tg1024": ["num_prompts=7", "input_len=120", "output_len=24"],
    "benchy-pp8192-tg512": ["num_prompts=4", "input_len=600", "output_len=16"],
    "benchy-pp256-tg4096": ["num_prompts=4", "output_len=64"],
    "benchy-pp25000-tg256": ["num_prompts=3", "output_len=24"],  # the real prompt length: 25,000 tokens
    "benchy-pp2048-tg512-d4": ["num_prompts=4", "input_len=80", "output_len=16"],
    "vllm-random-4000-500-rate0.3": ["num_prompts=6", "input_len=300", "output_len=24"],
    "vllm-sharegpt-rate0.3": ["num_prompts=5"],
    "vllm-random-4000-500-rate1.5-c25": ["num_prompts=6", "input_len=300", "output_len=24"],
    "vllm-reasoning-rate0.2": ["num_prompts=5", "max_tokens=2048"],
}


def shape(record: Record) -> Shape:
    assert record.shape is not None, record.sample_id
    return record.shape


def sim(**kw: Any) -> SimConfig:
    latency = kw.pop("latency", Latency(ttft_ms=2, decode_ms=1, prefill_ms_per_token=0.0005, jitter=0))
    return SimConfig(port=0, behaviour=Behaviour(reasoning_tokens=20), latency=latency, **kw)


def sharegpt(folder: Path) -> Path:
    """A ShareGPT-style file: first turns that pass vllm's filters, and one too short to keep."""
    rows = [
        {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]},
        *(
            {
                "conversations": [
                    {"from": "human", "value": f"Tell me about the harbour town number {i} and its boats, please."},
                    {"from": "gpt", "value": "It is a quiet place with a long breakwater and many small boats. " * 3},
                ]
            }
            for i in range(8)
        ),
    ]
    path = folder / "sharegpt.json"
    path.write_text(json.dumps(rows))
    return path


def run(url: str, out: Path, workload: str, sets: list[str], **options: Any) -> qualeval.RunResult:
    options.setdefault("probe", False)
    options.setdefault("constraint", "off")
    return qualeval.evaluate(
        model="sim", tasks=[], base_url=url, out=out, workload=workload, workload_set=sets, **options
    )


def test_the_nine_workloads_are_shipped_and_valid() -> None:
    assert set(NINE) <= set(workloads())
    for name in NINE:
        workload, _ = load_workload(name)
        assert workload.name == name
    benchy, _ = load_workload("benchy-pp2048-tg512-d4")
    assert benchy.prompts.depth == 4 and benchy.run == {"concurrency": 10, "batch": True, "warmup": 1}
    vllm, _ = load_workload("vllm-random-4000-500-rate1.5-c25")
    assert vllm.prompts.range_ratio == 0.9 and vllm.prompts.seed == 42
    assert vllm.run["request_rate"] == 1.5 and vllm.run["concurrency"] == 25 and vllm.run["burstiness"] == 1.0


@pytest.mark.parametrize("name", sorted(NINE))
def test_each_workload_runs_by_name(name: str, tmp_path: Path) -> None:
    sets = list(NINE[name])
    if "sharegpt" in name:
        sets.append(f"path={sharegpt(tmp_path)}")
    # the open-loop workloads keep their shape (gamma arrivals, burstiness) at a rate that finishes in a moment
    rate = {"request_rate": [40.0]} if name.startswith("vllm") else {}
    with running_server(sim(tasks=("syllogisms",))) as url:
        result = run(url, tmp_path / "run", name, sets, **rate)
    workload, _ = load_workload(name)
    wanted = int(next(s.split("=")[1] for s in sets if s.startswith("num_prompts")))
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert len(records) == wanted + 1 and all(r["status"] != "transport_error" for r in records)  # + the warm-up
    serving = result.summary.serving
    assert serving is not None and serving.workload is not None
    figures = next(iter(serving.workload.levels.values()))
    assert figures.vllm.completed == wanted  # the warm-up stays out of speed figures
    for metric in ("ttft", "tpot", "itl", "e2el"):
        assert set(getattr(figures.vllm, metric)) >= {"mean", "median", "p50", "p90", "p95", "p99"}
    assert (figures.vllm.output_throughput or 0) > 0 and (figures.vllm.request_throughput or 0) > 0
    # tg t/s per user needs a response seen to grow: on a loaded machine the client can read all its tokens in a
    # single read (last token == first), which has no rate and is left out rather than counted as infinite
    growing = [r for r in records if not r["warmup"] and r["timing"]["itl"] and r["timing"]["itl"]["mean"] > 0]
    per_user = figures.llama_benchy.tg_per_user
    assert (per_user.n if per_user else 0) == len(growing) and (not growing or (per_user and per_user.mean > 0))
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"## Serving workload: {name}" in report and "P99 TTFT (ms)" in report
    assert (tmp_path / "run" / "timeseries.jsonl").exists()
    if workload.prompts.kind == "task":  # the reasoning workload is scored, thinking and all
        task = result.summary.tasks["syllogisms"]
        assert task.scored and task.summary.n == wanted + 1 and task.summary.accuracy > 0
        assert (figures.vllm.reasoning_tokens or {})["mean"] > 0
        return
    task = result.summary.tasks[name]
    assert not task.scored and all(r["score"]["detail"] == "not scored: synthetic" for r in records)
    assert all(r["scored"] is False and r["meta"] == {} for r in records)  # measured, not the task's values
    assert all(r["shape"]["prompt_count"] == "server" for r in records)  # the reference server's /tokenize
    if workload.prompts.kind == "random":
        target = int(next((s.split("=")[1] for s in sets if s.startswith("input_len")), workload.prompts.input_len))
        lo, hi = target * (1 - workload.prompts.range_ratio), target * (1 + workload.prompts.range_ratio)
        for r in records:
            pieces = 2 * workload.prompts.depth + 1  # each turn is cut to within its own tolerance
            slack = max(1, r["shape"]["prompt_target"] // 200) * pieces
            assert abs(r["shape"]["prompt_tokens"] - r["shape"]["prompt_target"]) <= slack
            if workload.style == "llama-benchy":  # llama-benchy's rule: the target is what the server processes
                # (the reference server joins messages with a newline, which its words absorb: its template's
                # tokens are one fewer a message after the first in llama-benchy's probe, whose text ends in a
                # space, than in the prompts, which end in a word)
                joins = 2 * workload.prompts.depth
                assert 0 <= r["usage"]["prompt_tokens"] - r["shape"]["prompt_tokens"] <= joins
                assert r["shape"]["prompt_rule"] == "llama-benchy" and r["shape"]["template_tokens"] > 0
            else:  # vllm's: the text, the template on top (the reference server's: 4 tokens a message)
                assert r["usage"]["prompt_tokens"] == r["shape"]["prompt_tokens"] + 4
                assert r["shape"]["prompt_rule"] == "vllm-random"
            if not workload.prompts.depth:
                assert lo - 1 <= r["shape"]["prompt_target"] <= hi + 1
    # the server accepts ignore_eos and min_tokens: every output reaches its target length
    assert serving.workload.forcing == {"ignore_eos": True, "min_tokens": True}
    assert serving.workload.targets.output_short == 0
    for r in records:
        assert r["usage"]["completion_tokens"] == r["shape"]["output_target"] == r["request"]["max_tokens"]


def test_depth_is_a_conversation_with_earlier_turns(tmp_path: Path) -> None:
    with running_server(sim()) as url:
        run(url, tmp_path / "run", "benchy-pp2048-tg512-d4", ["num_prompts=3", "input_len=50", "output_len=8"])
    record = json.loads((tmp_path / "run" / "records.jsonl").read_text().splitlines()[0])
    roles = [m["role"] for m in record["request"]["messages"]]
    assert roles == ["user", "assistant"] * 4 + ["user"]


def test_llama_benchy_rule_takes_the_template_off_the_prompt_or_the_context(tmp_path: Path) -> None:
    """llama-benchy's pp and --depth count what the server processes: the template's tokens, measured as its
    warm-up measures them, come off the prompt, or off the context (a system message) when there is one."""
    sets = ["num_prompts=3", "input_len=90", "output_len=8"]
    with running_server(sim()) as url:
        plain = run(url, tmp_path / "plain", "benchy-pp1024-tg1024", sets, concurrency=[2])
        deep = run(url, tmp_path / "deep", "benchy-pp1024-tg1024", [*sets, "context=60"], concurrency=[2])
    # the reference server's template: 4 tokens a message, the messages joined by a newline; in the probe of a
    # context that newline and the space ending 'Warmup ' x 10 make one token with the '.' (11 + 2 x 4 = 19 in
    # all, 11 + 1 of text), in the prompts the newline joins a word: one token more than llama-benchy's rule says
    for result, roles, processed, joined in ((plain, ["user"], 90, 0), (deep, ["system", "user"], 150, 1)):
        assert all(r.usage.prompt_tokens == processed + joined for r in result.records)
        assert all(shape(r).prompt_target == processed == shape(r).prompt_tokens for r in result.records)
        assert [m.role for m in result.records[0].request.messages] == roles
    manifest = json.loads((tmp_path / "deep" / "manifest.json").read_text())
    assert manifest["shaping"]["template"] == [{"roles": ["system", "user"], "server": 19, "text": 12, "tokens": 7}]
    assert all(shape(r).template_tokens == 7 for r in deep.records)
    report = (tmp_path / "deep" / "report.md").read_text()
    assert "llama-benchy's length rule: pp90 and its context (60, llama-benchy's --depth) count the tokens" in report
    assert "7 for [system, user] (19 - 12)" in report and "'Peak generation tokens per second (total)'" in report


def bos_tokenizer(folder: Path) -> Path:
    """A word-level tokenizer.json that adds a BOS to every text, as Llama's does."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    words = {"[UNK]": 0, "<s>": 1}
    tok = Tokenizer(models.WordLevel(words, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    path = folder / "tokenizer.json"
    tok.save(str(path))
    return path


def test_vllm_random_rule_draws_vllms_lengths_less_the_special_tokens(tmp_path: Path) -> None:
    """vllm's RandomDataset: input_len less num_special_tokens_to_add, drawn with numpy's default_rng(seed),
    every input length, then every output length; the prompt's text holds that many tokens."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("tokenizers")
    sets = ["num_prompts=5", "input_len=200", "output_len=20"]
    with running_server(sim(flavour="openai")) as url:
        result = run(url, tmp_path / "run", "vllm-random-4000-500-rate0.3", sets, request_rate=[40.0],
                     tokenizer=bos_tokenizer(tmp_path))  # fmt: skip
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    seed = manifest["shaping"]["workload"]["prompts"]["seed"]  # drawn for this run, as vllm's --seed
    rng, r = np.random.default_rng(seed), 0.9  # floor(20 x (1 - 0.9)) is 1: float arithmetic, as in vllm
    inputs = rng.integers(math.floor(199 * (1 - r)), math.ceil(199 * (1 + r)) + 1, size=5).tolist()
    outputs = rng.integers(math.floor(20 * (1 - r)), math.ceil(20 * (1 + r)) + 1, size=5).tolist()
    records = sorted((r for r in result.records if not r.warmup), key=lambda r: int(r.sample_id.split("/")[1]))
    assert [shape(r).prompt_target for r in records] == inputs
    assert [shape(r).output_target for r in records] == outputs
    assert all(shape(r).prompt_tokens == shape(r).prompt_target for r in records)
    assert manifest["shaping"]["specials"] == 1 and "template" not in manifest["shaping"]
    report = (tmp_path / "run" / "report.md").read_text()
    assert "input_len less the 1 special tokens the tokenizer adds" in report


def test_vllm_sharegpt_rule_counts_special_tokens_and_oversamples(tmp_path: Path) -> None:
    """vllm's ShareGPTDataset: lengths with the tokenizer's special tokens, a given output length instead of
    the reply's (its minimum unchecked), and random.choice oversampling when too few pass the filters."""
    pytest.importorskip("tokenizers")
    sets = ["num_prompts=11", f"path={sharegpt(tmp_path)}", "output_len=3"]
    with running_server(sim(flavour="openai")) as url:
        result = run(url, tmp_path / "run", "vllm-sharegpt-rate0.3", sets, request_rate=[40.0],
                     tokenizer=bos_tokenizer(tmp_path))  # fmt: skip
    records = sorted((r for r in result.records if not r.warmup), key=lambda r: int(r.sample_id.split("/")[1]))
    assert len(records) == 11 and len({r.request.messages[0].content for r in records}) == 8  # 3 again
    words = {shape(r).prompt_target - len(str(r.request.messages[0].content).split()) for r in records}
    assert all(shape(r).output_target == 3 == r.request.max_tokens for r in records)
    assert len(words) == 1 and words.pop() > 1  # the BOS counted in (and the punctuation, word-level)
    assert all(shape(r).prompt_rule == "vllm-sharegpt" for r in records)


def test_llama_benchy_peak_and_decode_rates() -> None:
    """Its _calculate_peak_throughput (a 1-second window; tokens over the span when it is shorter) and tg t/s
    of a request (tokens after the first over the time from the first to the last)."""
    from qualeval.records.views import Timed
    from qualeval.serving.figures import Served, _tg_per_user, peak

    assert peak([0.0, 0.1, 0.2, 0.5]) == pytest.approx(8.0)  # 4 tokens in 0.5 s
    assert peak([0.0, 0.5, 1.0, 1.2, 1.4, 3.0]) == 4.0  # 0.5 .. 1.4 inside one second
    assert peak([2.0, 2.0]) == 2.0 and peak([]) is None
    timed = Timed(sent_at=100.0, ttft=200.0, end=1300.0, itl_count=9, itl_mean=100.0, completion_tokens=10)
    row = Served(timed, "t", "i", 1.0, 50, Shape(prompt_tokens=52))
    assert row.last_token == 1100.0 and _tg_per_user(row) == pytest.approx(10.0)  # 9 tokens in 0.9 s, not 1.1
    times = row.token_times()
    assert len(times) == 10 and times[0] == pytest.approx(100.2) and times[-1] == pytest.approx(101.1)
    assert row.benchy_prompt_tokens == 50  # the server's count, within 20% of the expected
    assert Served(timed, "t", "i", 1.0, 80, Shape(prompt_tokens=52)).benchy_prompt_tokens == 52
    # llama-benchy expects the text's tokens: pp128 with a template of 30 expects 98, and 128 is 31% more
    short = Served(timed, "t", "i", 1.0, 128, Shape(prompt_tokens=128, template_tokens=30))
    assert short.benchy_prompt_tokens == 98
    assert Served(timed, "t", "i", 1.0, 256, Shape(prompt_tokens=256, template_tokens=30)).benchy_prompt_tokens == 256


def test_batches_of_llama_benchy(tmp_path: Path) -> None:
    """Batch mode: the next batch is sent only when the whole batch before it has ended."""
    with running_server(sim()) as url:
        result = run(
            url,
            tmp_path / "run",
            "benchy-pp1024-tg1024",
            ["num_prompts=6", "input_len=60", "output_len=20"],
            concurrency=[3],
        )
    rows = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    measured = sorted((r for r in rows if not r["warmup"]), key=lambda r: r["sent_at"])
    # llama-benchy's --runs 2 --concurrency 3: two full runs of three, the warm-up in neither
    assert [r["shape"]["run"] for r in measured] == [0, 0, 0, 1, 1, 1]
    assert [r["shape"].get("run") for r in rows if r["warmup"]] == [None]
    first, second = measured[:3], measured[3:]
    assert min(r["sent_at"] for r in second) >= max(r["sent_at"] + r["timing"]["end"] / 1000 for r in first)
    assert result.summary.serving is not None and result.summary.serving.workload is not None
    benchy = next(iter(result.summary.serving.workload.levels.values())).llama_benchy
    assert benchy.runs == 2 and benchy.pp_total is not None and benchy.pp_total.n == 2


def test_a_server_that_refuses_forcing_keys_is_reported_short(tmp_path: Path) -> None:
    """OpenAI's API answers 400 to ignore_eos and min_tokens: nothing is forced, and the report says which
    requests stopped before their target output length."""
    with running_server(sim(flavour="openai")) as url:
        result = run(
            url,
            tmp_path / "run",
            "vllm-random-4000-500-rate0.3",
            [
                "num_prompts=3",
                "input_len=100",
                "output_len=400",
                "seed=42",
            ],  # a fixed draw: answer lengths follow the prompt
            request_rate=[40.0],
        )
    assert result.summary.serving is not None
    workload = result.summary.serving.workload
    assert workload is not None
    assert workload.forcing == {}
    assert workload.targets.output_short == 3
    assert workload.targets.prompt_count == ["calibrated"]  # no /tokenize there: calibrated from usage
    assert "Target output length not reached by 3 of 3 requests" in (tmp_path / "run" / "report.md").read_text()


def test_tokenizer_file_counts_prompts(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers

    tok = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    with running_server(sim(flavour="openai")) as url:
        run(
            url,
            tmp_path / "run",
            "vllm-random-4000-500-rate0.3",
            ["num_prompts=3", "input_len=90", "output_len=8", "seed=42"],  # the seed the lengths were checked at
            request_rate=[40.0],
            tokenizer=path,
        )
    for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines():
        shape = json.loads(line)["shape"]
        assert (
            shape["prompt_count"] == "tokenizer:tokenizer.json"
            and abs(shape["prompt_tokens"] - shape["prompt_target"]) <= 1
        )


def qualeval_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qualeval", *args], capture_output=True, text=True, timeout=300)


def test_run_by_name_on_the_command_line(tmp_path: Path) -> None:
    with running_server(sim()) as url:
        done = qualeval_cli(
            "run", "--workload", "vllm-random-4000-500-rate1.5-c25", "--base-url", url, "--model", "sim",
            "--out", str(tmp_path / "run"), "--workload-set", "num_prompts=4", "--workload-set", "input_len=64",
            "--workload-set", "output_len=8", "--request-rate", "30", "--no-probe",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "synthetic prompts, not scored" in done.stderr and "TTFT p50" in done.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["concurrency"] == [25] and manifest["config"]["burstiness"] == 1.0
    assert manifest["shaping"]["workload"]["name"] == "vllm-random-4000-500-rate1.5-c25"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--workload", "no-such-workload"], "--workload: no workload 'no-such-workload'"),
        (["--workload", "benchy-pp1024-tg1024", "--workload-set", "input_len=0"], "field 'prompts.input_len'"),
        (["--workload", "benchy-pp1024-tg1024", "--workload-set", "colour=red"], "--workload-set: 'colour=red'"),
        (["--workload", "vllm-sharegpt-rate0.3"], "field 'prompts.path'"),
        (["--workload", "BAD"], "field 'prompts.range_ratio'"),
        (["--workload", "RUNKEY"], "field 'run.colour': not a run option"),
        (["--task", "knowledge_qa", "--context-length", "100", "--filler", "/no/such/filler.txt"], "filler.txt"),
        (["--task", "knowledge_qa", "--shard", "3/2"], "--shard"),
        (["--task", "knowledge_qa", "--context-length", "0"], "--context-length:"),
        (["--task", "knowledge_qa", "--base-url", "ftp://x"], "--endpoint:"),
    ],
)
def test_bad_workload_input_is_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nprompts: {kind: random, range_ratio: 1.5}\n")
    runkey = tmp_path / "runkey.yaml"
    runkey.write_text("name: runkey\nrun: {colour: red}\n")
    args = [str(bad) if a == "BAD" else str(runkey) if a == "RUNKEY" else a for a in args]
    with running_server(sim()) as url:
        done = qualeval_cli("run", "--base-url", url, "--model", "sim", "--out", str(tmp_path / "run"), *args)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_workload_set_is_checked() -> None:
    workload, path = load_workload("benchy-pp1024-tg1024")
    assert workload.shaped(["prompts.depth=2"], str(path)).prompts.depth == 2
    with pytest.raises(InputError, match="num_prompts"):
        workload.shaped(["num_prompts=-1"], str(path))


def test_synthetic_prompts_show_no_accuracy_anywhere(tmp_path: Path) -> None:
    """No right answer, so nothing derived from one: not in the progress bar, the reports, their load levels,
    their speed-beside-quality section, plots or the per-item browser. Speed is all there is, and it is shown."""
    from rich.console import Console

    from qualeval.run.progress import progress_bar

    sets = ["num_prompts=3", "input_len=64", "output_len=12"]
    with running_server(sim()) as url:
        result = run(url, tmp_path / "run", "benchy-pp1024-tg1024", sets, concurrency=[1, 2], batch=False)
    task = result.summary.tasks["benchy-pp1024-tg1024"]
    assert not task.scored and list(task.levels) == ["c=1", "c=2"]
    md = (tmp_path / "run" / "report.md").read_text()
    assert "not scored (synthetic prompts)" in md and "### benchy-pp1024-tg1024 by load level" in md
    levels = md.split("### benchy-pp1024-tg1024 by load level")[1].split("\n\n")[1]
    assert levels.startswith("| level | endpoint errors | TTFT p50 |") and "%" not in levels
    for word in ("correct answers per minute", "per correct answer", "accuracy by reasoning", "suggested budget"):
        assert word not in md
    # the statuses stay: the forced length is reached, and the output cut there (in the reasoning or the answer,
    # as the sim's reasoning length for each prompt falls)
    assert len(result.records) == 8 and all(str(r.status).endswith("_truncated") for r in result.records)
    assert "_truncated" in md.split("## Completion statuses")[1].split("\n\n")[1]
    html = (tmp_path / "run" / "report.html").read_text()
    assert 'id="speed"' in html and 'id="load"' in html and 'id="linked"' not in html
    assert "✓" not in html and "✗" not in html and html.count('data-outcome="not scored"') == 8
    assert 'alt="load plot for benchy-pp1024-tg1024"' in html and html.count('class="plot"') == 1  # throughput
    load = html.split('<section id="load">')[1].split("</section>")[0]
    assert "<th>accuracy</th>" not in load and "%" not in load.split("<img")[0]
    stream = Console(file=__import__("io").StringIO(), width=200)
    with progress_bar(stream) as bar:
        bar.on_start(0, len(result.records))
        for record in result.records:
            bar.on_record(record)
        assert "acc" not in bar.line() and "tok/s" in bar.line()
        bar.on_record(result.records[0].model_copy(update={"scored": True}))  # one scored record, wrong
        assert bar.line().startswith("c=1 acc 0.0% · ")  # the level it is of, named in a sweep


def test_the_reproduces_line_is_the_run_s_own_settings(tmp_path: Path) -> None:
    """The tool's command as this run's settings give it, every override applied: never the file's own line."""
    with running_server(sim()) as url:
        result = run(
            url, tmp_path / "run", "vllm-random-4000-500-rate0.3",
            ["num_prompts=3", "input_len=64", "output_len=8"], request_rate=[40.0, 60.0],
        )  # fmt: skip
    assert result.summary.serving is not None and result.summary.serving.workload is not None
    line = result.summary.serving.workload.mirrors
    for flag in ("--num-prompts 3 ", "--random-input-len 64 ", "--random-output-len 8 ", "--burstiness 0.7 "):
        assert flag in line
    assert "--request-rate 40 " in line and "--request-rate 60 " in line  # one command per level
    assert "--metric-percentiles 50,90,95,99" in line
    assert "--num-prompts 200" not in line and "--request-rate 0.3" not in line and "4000" not in line
    assert "1 warm-up request" in line  # the warm-up is stated apart, not in --num-prompts
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"Reproduces: {line}" in report

    benchy, _ = load_workload("benchy-pp1024-tg1024")
    shaped = benchy.shaped(["num_prompts=4", "input_len=60", "context=32"], "file")
    config = qualeval.RunConfig(
        base_url="http://x/v1",
        model="m",
        workload=benchy.name,
        out=tmp_path / "b",
        concurrency=[2],
        batch=True,
        warmup=2,
    )
    line = reproduces(shaped.style, shaped.prompts, config, [], shaped.percentiles)
    assert line.startswith("llama-benchy --pp 60 --tg 1024 --depth 32 --concurrency 2 --runs 2")
    assert "2 warm-up requests" in line


def test_a_task_s_items_in_workload_prompts_are_never_short_of_a_target(tmp_path: Path) -> None:
    """With --task, an item's output length is a budget: the model answers in its own words and stops, which is
    not a request that stopped short of its target."""
    with running_server(sim(tasks=("knowledge_qa",))) as url:
        done = qualeval_cli(
            "run", "--workload", "vllm-random-4000-500-rate0.3", "--task", "knowledge_qa", "--limit", "4",
            "--base-url", url, "--model", "sim", "--out", str(tmp_path / "run"), "--workload-set", "num_prompts=3",
            "--workload-set", "input_len=64", "--workload-set", "output_len=400", "--request-rate", "40",
            "--no-probe",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [json.loads(x) for x in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert records and all(r["usage"]["completion_tokens"] < 400 for r in records)  # every answer ended early
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["serving"]["workload"]["targets"]["output_short"] == 0
    assert "stopped short" not in done.stderr and "not reached" not in (tmp_path / "run" / "report.md").read_text()
