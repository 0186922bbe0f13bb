"""The repository itself: lint-clean, and the wheel carries the reasoning formats."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed")
    done = subprocess.run([ruff, "check", "qualeval", "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_wheel_ships_the_parsers(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 and "hatchling" in done.stderr:
        pytest.skip("hatchling is not installed in this environment")
    assert done.returncode == 0, done.stderr
    wheel = next(tmp_path.glob("qualeval-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "qualeval/_data/parsers/think.yaml" in names
    assert "qualeval/_data/tasks/gsm8k.yaml" in names and "qualeval/_data/tasks/knowledge_qa.yaml" in names
    # the run profiles (found by name: --config qwen3-sampling), the workloads, and the example task
    assert "qualeval/_data/configs/qwen3-sampling.yaml" in names and "qualeval/_data/configs/smoke.yaml" in names
    assert "qualeval/_data/configs/workloads/benchy-pp1024-tg1024.yaml" in names
    assert "qualeval/_data/examples/planet_facts.yaml" in names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The qualeval modules a file imports, at any depth, leaving out `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("qualeval"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("qualeval"):
            names = [f"{node.module}.{a.name}" for a in node.names]
            submodules = [n for n in names if n in modules]  # `from pkg import submodule` needs only that
            found.update(submodules)
            if len(submodules) < len(names):
                found.add(node.module)
    return found


def test_no_import_cycles() -> None:
    modules = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
        for p in (ROOT / "qualeval").rglob("*.py")
    }
    graph = {
        name: sorted(m for m in _imports(path, set(modules)) if m in modules and m != name)
        for name, path in modules.items()
    }
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in graph[name]:
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_modules_and_functions_stay_small() -> None:
    """The house limits: a module over 400 lines or a function over 60 wants splitting along what it does."""
    too_long = []
    for path in sorted((ROOT / "qualeval").rglob("*.py")):
        source = path.read_text()
        name = path.relative_to(ROOT)
        if source.count("\n") > 400:
            too_long.append(f"{name}: {source.count(chr(10))} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 60:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {lines} lines")
    assert not too_long, "\n".join(too_long)
