"""The import contracts of pyproject.toml hold (`make lint` runs the same `lint-imports`):
pipelines -> warehouse -> predictor, no import circle inside a package, and the predictor's
layers (interfaces, the API, what is built on it, the core, the methods, value types)."""

from __future__ import annotations

import ast
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
    assert "Contracts: 3 kept, 0 broken." in done.stdout


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
