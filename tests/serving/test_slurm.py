"""The docs' Slurm array, really run: sbatch submits its shards against the reference server, each its own array
task, and `qualeval merge` joins them into the summary of an unsharded run.

It needs a cluster that answers `sinfo` with this host as a node that is up (`.ci/slurm-up` starts a one-node one;
`.ci/run` calls it): the jobs run here, where the reference server listens on 127.0.0.1 and the test's folder is.
Where there is none the test skips with one line; under CI (`CI` set) that skip is a failure (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, sim_process

pytestmark = pytest.mark.slurm

WAIT_S = 900  # the docs' array takes well under a minute on a two-core node; a loaded machine gets fifteen
LIMIT = 24  # knowledge_qa items: three for each of the docs' eight shards


def readme_array() -> tuple[str, str]:
    """The Slurm script of docs/serving.md, as it is there, and the merge line its last comment gives."""
    page = (ROOT / "docs" / "serving.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", page, flags=re.DOTALL)
    script = next(block for block in blocks if "#SBATCH --array=" in block)
    merge = re.search(r"^#.*?(qualeval merge .+?)\s*$", script, flags=re.MULTILINE)
    assert merge is not None, "the docs' Slurm example no longer says how to merge"
    return script, merge.group(1)


def this_node() -> tuple[str | None, str]:
    """This host's name in the Slurm cluster if it is a node that is up (the array's jobs must run here, to reach
    the reference server on 127.0.0.1 and the test's folder), else None and why not."""
    if shutil.which("sbatch") is None:
        return (
            None,
            "slurm tests need sbatch on PATH and a cluster: `bash .ci/slurm-up` starts a one-node one (as root)",
        )
    try:
        done = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %n %T"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"no Slurm cluster answers sinfo ({error}): `bash .ci/slurm-up` starts one"
    if done.returncode != 0:
        said = (done.stderr.strip() or f"exit status {done.returncode}").splitlines()[-1]
        return None, f"no Slurm cluster answers sinfo ({said}): `bash .ci/slurm-up` starts one"
    names = {socket.gethostname(), socket.gethostname().split(".")[0]}
    here = [line.split() for line in done.stdout.splitlines() if names & set(line.split()[:2])]
    if not here:
        return None, f"this host ({socket.gethostname()}) is not a node of the Slurm cluster that sinfo answers for"
    up = [node for node, _, state in here if state in ("idle", "mixed", "allocated", "completing")]
    if not up:
        return None, f"this host's Slurm node {here[0][0]} is {here[0][2]}, not up: `bash .ci/slurm-up` starts it"
    return up[0], ""


def run(command: list[str] | str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env=env, shell=isinstance(command, str), capture_output=True, text=True, timeout=WAIT_S
    )
    assert done.returncode == 0, f"{command} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def submit(script: Path, node: str, cwd: Path, env: dict[str, str]) -> str:
    """sbatch the script to run on this node; returns the array's job id once no task of it is queued or running
    (scancel on timeout)."""
    submitting = ["sbatch", "--parsable", f"--nodelist={node}", f"--chdir={cwd}", "--export=ALL", str(script)]
    done = run(submitting, cwd, env)
    job = done.stdout.strip().split(";")[0]  # --parsable: "ID" or "ID;CLUSTER"
    assert job.isdigit(), f"sbatch did not print a job id: {done.stdout!r} {done.stderr}"
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:  # squeue lists pending, running and completing tasks; then nothing
        queued = subprocess.run(["squeue", "-h", "-j", job, "-o", "%i"], capture_output=True, text=True, timeout=60)
        if (queued.returncode == 0 and not queued.stdout.strip()) or "Invalid job id" in queued.stderr:
            return job
        time.sleep(1)
    subprocess.run(["scancel", job], capture_output=True, timeout=60)
    pytest.fail(f"Slurm array {job} did not finish within {WAIT_S}s; cancelled it", pytrace=False)


def array_tasks(job: str) -> dict[int, dict[str, str]]:
    """The finished array's tasks by index, as slurmctld keeps them for MinJobAge (300 s by default)."""
    done = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    tasks = {}
    for line in done.stdout.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        tasks[int(fields["ArrayTaskId"])] = fields
    return tasks


def test_readme_slurm_array_merges_to_the_unsharded_summary(tmp_path: Path) -> None:
    """The docs' script and merge line, verbatim, with a my-eval.yaml pointing at the reference server."""
    node, reason = this_node()
    if node is None:
        pytest.skip(reason)
    script, merge = readme_array()
    array = re.search(r"#SBATCH --array=0-(\d+)", script)
    assert array is not None, f"the docs' Slurm script has no --array=0-N:\n{script}"
    shards = int(array.group(1)) + 1
    assert f"/{shards} " in script, f"the docs' --array=0-{shards - 1} does not match its --shard K/N"

    bin_dir = str(Path(sys.executable).parent)  # the venv's qualeval, in the jobs too (--export=ALL)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    with sim_process("--task", "knowledge_qa", "--burst") as url:
        (tmp_path / "my-eval.yaml").write_text(
            f"base_url: {url}\nmodel: sim\ntasks: [knowledge_qa]\nlimit: {LIMIT}\nconcurrency: [4]\n"
            "probe: false\nconstraint: 'off'\n"
        )
        (tmp_path / "array.sh").write_text(script)
        job = submit(tmp_path / "array.sh", node, tmp_path, env)
        tasks = array_tasks(job)
        logs = "\n".join(f"{p.name}: {p.read_text(errors='replace')[-1500:]}" for p in sorted(tmp_path.glob("slurm-*")))
        # each shard ran as its own array task: a job of its own that completed, its own log naming its own run
        assert sorted(tasks) == list(range(shards)), f"array {job} ran tasks {sorted(tasks)}\n{logs}"
        assert len({fields["JobId"] for fields in tasks.values()}) == shards
        for k, fields in tasks.items():
            assert (fields["JobState"], fields["ExitCode"]) == ("COMPLETED", "0:0"), f"task {k}: {fields}\n{logs}"
            log = Path(fields["StdOut"])
            assert log == tmp_path / f"slurm-{job}_{k}.out" and log.exists()
            assert f"runs/suite/shard-{k}" in log.read_text()
            manifest = json.loads((tmp_path / "runs" / "suite" / f"shard-{k}" / "manifest.json").read_text())
            assert manifest["config"]["shard"] == f"{k}/{shards}"
        run(merge, tmp_path, env)
        run(["qualeval", "run", "--config", "my-eval.yaml", "--out", "whole"], tmp_path, env)

    merged = json.loads((tmp_path / "runs" / "suite" / "merged" / "summary.json").read_text())
    whole = json.loads((tmp_path / "whole" / "summary.json").read_text())
    assert set(merged["tasks"]) == set(whole["tasks"]) == {"knowledge_qa"}
    for name, task in whole["tasks"].items():
        got, want = merged["tasks"][name]["summary"], task["summary"]
        assert (got["n"], got["accuracy"], got["statuses"]) == (want["n"], want["accuracy"], want["statuses"])
        assert got == want
    assert whole["tasks"]["knowledge_qa"]["summary"]["n"] == LIMIT

    def ids(path: Path) -> list[str]:
        return sorted(json.loads(line)["sample_id"] for line in path.read_text().splitlines())

    assert ids(tmp_path / "runs" / "suite" / "merged" / "records.jsonl") == ids(tmp_path / "whole" / "records.jsonl")
