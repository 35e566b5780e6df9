"""The import contracts of pyproject.toml hold (`make lint` runs the same `lint-imports`):
pipelines -> warehouse -> predictor, no import circle inside a package, and the predictor's
layers (interfaces, the API, what is built on it, the core, the methods, value types)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("benchpress", "pipelines", "warehouse", "predictor")


def test_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Contracts: 5 kept, 0 broken." in done.stdout


def _lint_copy(tmp_path: Path, plant: dict[str, str]) -> str:
    """`lint-imports` on a copy of the packages with `plant` (module path -> first line) added."""
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            target = tmp_path / path.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    (tmp_path / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    for module, line in plant.items():
        target = tmp_path / module
        target.write_text(line + "\n" + target.read_text("utf-8"), "utf-8")
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    return done.stdout + done.stderr


def test_the_predictor_cannot_import_the_warehouse_engines(tmp_path: Path) -> None:
    out = _lint_copy(tmp_path, {"predictor/values.py": "import duckdb  # planted"})
    assert "predictor runs without the warehouse, Dagster or SQL BROKEN" in out
    assert "predictor.values -> duckdb" in out


def test_a_new_predictor_module_must_join_a_layer(tmp_path: Path) -> None:
    (tmp_path / "predictor").mkdir()
    (tmp_path / "predictor" / "stray_helper.py").write_text('"""A module in no layer."""\n')
    out = _lint_copy(tmp_path, {})
    assert "- predictor.stray_helper" in out


def test_an_import_circle_through_type_checking_is_caught(tmp_path: Path) -> None:
    """A helper typed against the class that calls it is a circle even if only type checkers
    import it (issue 39: the helpers of `bayesian` take the `FittedBayesian` protocol)."""
    circle = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from predictor.methods.bayesian import BayesianCompleter  # planted"
    )
    out = _lint_copy(tmp_path, {"predictor/methods/bayesian_state.py": circle})
    assert "no import circles inside a package BROKEN" in out
    assert "No cycles are allowed in predictor.methods." in out
    assert "- .bayesian_state -> .bayesian (1 import)" in out


def _deferred_imports() -> list[str]:
    """Imports inside functions that do not say why they are deferred."""
    unexplained = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            lines = path.read_text("utf-8").splitlines()
            for node in ast.walk(ast.parse("\n".join(lines))):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Import | ast.ImportFrom):
                        here = lines[inner.lineno - 1]
                        above = lines[inner.lineno - 2] if inner.lineno > 1 else ""
                        if "deferred:" not in here and "deferred:" not in above:
                            rel = path.relative_to(REPO).as_posix()
                            unexplained.append(f"{rel}:{inner.lineno}: {here.strip()}")
    return unexplained


def test_every_function_local_import_says_why_it_is_deferred() -> None:
    assert _deferred_imports() == []


def test_no_lazy_export_shares_its_name_with_a_submodule() -> None:
    """`from predictor.trust import default_references` gave the module, not the function, once
    anything had imported the submodule of that name: importing a submodule sets the package
    attribute, over the lazily exported name."""
    clashes = []
    for package in ("predictor", "predictor.trust", "predictor.results", "predictor.runs"):
        module = importlib.import_module(package)
        exports = getattr(module, "_EXPORTS", {}) or {}
        submodules = {m.name for m in pkgutil.iter_modules(module.__path__)}
        clashes += [f"{package}.{name}" for name in exports if name in submodules]
    assert clashes == []
