"""The repository itself: lint-clean, and the wheel carries the reasoning formats."""

from __future__ import annotations

import ast
import importlib
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


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk of `graph` meets (one per edge back onto the current path)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    found: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in graph[name]:
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
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
    cycles = _cycles(graph)
    assert not cycles, "\n".join("import cycle: " + " -> ".join(c) for c in cycles)


def _package_imports(path: Path, packages: set[str]) -> set[str]:
    """The qualeval packages a file imports from, at any depth, `if TYPE_CHECKING:` and function bodies included:
    a lazy or typing-only import still ties the two packages together. A name that is neither a subpackage nor a
    root module (`from qualeval import Completion`) is the root package's."""

    def package(name: str) -> str:
        head = ".".join(name.split(".")[:2])
        return head if head in packages else "qualeval"

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(package(a.name) for a in node.names if a.name.split(".")[0] == "qualeval")
        elif isinstance(node, ast.ImportFrom) and node.module == "qualeval":
            found.update(package(f"qualeval.{a.name}") for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("qualeval."):
            found.add(package(node.module))
    return found


def test_no_package_import_cycles() -> None:
    """The packages (and the root modules: api, errors, _shipped, _version) import one another one way only; the
    module test above misses a cycle that goes through different modules of the same two packages."""
    packages = {"qualeval", *(f"qualeval.{p.stem}" for p in (ROOT / "qualeval").iterdir() if p.suffix == ".py")}
    packages |= {f"qualeval.{p.name}" for p in (ROOT / "qualeval").iterdir() if (p / "__init__.py").exists()}
    packages.discard("qualeval.__init__")
    graph: dict[str, set[str]] = {name: set() for name in packages}
    for path in (ROOT / "qualeval").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        own = "qualeval" if parts == ("qualeval", "__init__") else ".".join(parts[:2])
        graph[own] |= _package_imports(path, packages) - {own}
    cycles = _cycles({name: sorted(deps) for name, deps in graph.items()})
    assert not cycles, "\n".join("package import cycle: " + " -> ".join(c) for c in cycles)


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


def _package_of(path: Path) -> str | None:
    parts = path.relative_to(ROOT / "qualeval").parts
    return parts[0] if len(parts) > 1 else None


def _faces() -> dict[str, list[str]]:
    """Each package's `__all__`, read from its `__init__` without importing it."""
    faces: dict[str, list[str]] = {}
    for init in sorted((ROOT / "qualeval").glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                faces[init.parent.name] = [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    return faces


def _isort(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def test_every_package_has_a_sorted_face() -> None:
    """Each package's `__init__` is its face: a sorted `__all__`, every name of it bound there."""
    packages = sorted(p.parent.name for p in (ROOT / "qualeval").glob("*/__init__.py"))
    faces = _faces()
    assert [p for p in packages if p not in faces] == []
    # sorted as ruff's RUF022 sorts `__all__`: constants, then classes, then functions and the rest
    order = {
        p: names for p, names in faces.items() if names != sorted(names, key=_isort) or len(set(names)) < len(names)
    }
    assert order == {}
    for package, names in faces.items():
        module = importlib.import_module(f"qualeval.{package}")
        assert [n for n in names if not hasattr(module, n)] == [], package
        # a face's name that is also a module's would hide the module: `qualeval.run.probe` must name one thing
        inside = {p.stem for p in (ROOT / "qualeval" / package).iterdir() if p.suffix == ".py" or p.is_dir()}
        assert sorted(set(names) & inside) == [], package


def test_packages_meet_only_at_their_faces() -> None:
    """Another package is imported only through its `__init__`, and only for what its `__all__` lists: lazy imports
    inside functions and `if TYPE_CHECKING:` imports count like the rest."""
    faces = _faces()
    crossings: list[str] = []
    for path in sorted((ROOT / "qualeval").rglob("*.py")):
        home = _package_of(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [(a.name, []) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                targets = [(node.module, [a.name for a in node.names])]
            else:
                continue
            for module, names in targets:
                parts = module.split(".")
                if parts[0] != "qualeval" or len(parts) < 2 or parts[1] not in faces or parts[1] == home:
                    continue
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                if len(parts) > 2:
                    crossings.append(f"{where} imports {module}")
                crossings.extend(f"{where} takes {n} from {module}" for n in names if n not in faces[parts[1]])
    assert crossings == []
