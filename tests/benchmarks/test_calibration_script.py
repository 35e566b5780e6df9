"""`benchmarks/calibration.py` runs on a few folds and reports what the README quotes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_calibration_script_reports_levels_floor_and_trust(tmp_path):
    out = tmp_path / "calibration.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/calibration.py", "--folds", "2", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "floor: each benchmark's own q90" in done.stdout
    results = json.loads(out.read_text())
    assert results["n_folds"] == 2
    levels = results["levels"]
    widths = [levels[k]["median_width_median_fold"] for k in ("0.5", "0.8", "0.9", "0.95")]
    assert widths == sorted(widths)
    assert 0.85 <= levels["0.9"]["coverage_median_fold"] <= 0.95
    alternatives = results["alternatives90"]
    default = alternatives["posterior predictive (default)"]
    floor = alternatives["floor: each benchmark's own q90"]
    # The floor reads the answers: nominal coverage, narrower than any honest interval.
    assert 0.85 <= floor["coverage_median_fold"] <= 0.95
    assert floor["median_width_median_fold"] < default["median_width_median_fold"]
    assert [row["known"] for row in results["fold_in90"]] == [3, 5, 15]
    assert abs(results["within5"]["mean_predicted"] - results["within5"]["observed"]) < 0.05
