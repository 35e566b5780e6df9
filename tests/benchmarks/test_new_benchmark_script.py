"""`benchmarks/new_benchmark.py`: its baseline on a matrix with a known answer, and a --quick
run that reports every figure the docs quote."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "benchmarks" / "new_benchmark.py"


def _script():
    spec = importlib.util.spec_from_file_location("new_benchmark_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_baseline_is_least_squares_on_the_most_correlated_benchmark_each_model_has() -> None:
    script = _script()
    x = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    values = np.column_stack(
        [
            0.5 * x + 1.0,  # the new column: exactly linear in column 1
            x,
            [5.0, 1.0, 9.0, 2.0, 7.0, 3.0],  # uncorrelated
        ]
    )
    values[5, 1] = np.nan  # model 5 lacks the best benchmark: the next best one is used
    kept, hidden = np.array([0, 1, 2, 3]), np.array([4, 5])
    predicted = script.baseline(values, 0, kept, hidden)
    assert predicted[0] == pytest.approx(26.0)  # 0.5 * 50 + 1
    y, z = values[kept, 0], values[kept, 2]
    slope, intercept = np.polyfit(z, y, 1)
    assert predicted[1] == pytest.approx(intercept + slope * 3.0)


def test_quick_run_reports_fold_in_complete_matrix_and_baseline(tmp_path: Path) -> None:
    out = tmp_path / "new_benchmark.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(
        "new benchmark from k known scores: 4 percent benchmarks of the paper matrix with >= "
        "30 models, draws 0-1 per benchmark and k"
    )
    results = json.loads(out.read_text())
    at_5 = results["results"]["5"]["ratio_to_baseline"]
    assert lines[-2] == f"MedAE at k = 5, complete_matrix: {at_5['complete']:.2f} x baseline"
    assert lines[-1] == f"MedAE at k = 5, fold-in: {at_5['fold_in']:.2f} x baseline"
    assert not re.search(r"target|goal|\bmet\b", done.stdout, re.IGNORECASE)
    assert len(results["benchmarks"]) == 4 and results["draws"] == [0, 1]
    assert set(results["results"]) == {"3", "5", "10"}
    for k, r in results["results"].items():
        assert set(r["medae"]) == {"fold_in", "complete", "baseline"}
        assert r["ratio_to_baseline"]["fold_in"] == r["medae"]["fold_in"] / r["medae"]["baseline"]
        assert r["ratio_to_baseline"]["fold_in"] < 1.0, k  # beats the baseline at every k
        assert 0.6 <= r["coverage_90_fold_in"] <= 1.0 and r["median_width_90_fold_in"] > 0
