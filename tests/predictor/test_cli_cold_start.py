"""What a `benchpress` start loads: `--version`, `--help` and `run --help` (which imports every
harness's module, `predictor.harnesses`) no Polars, NumPy, requests, DuckDB or Dagster;
`predict --scores` (which needs Polars and NumPy) none of the pipeline's or the private
store's packages. Each runs in a fresh interpreter, as a user's command does; the timings
themselves are `benchmarks/cli_latency.py`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.shared_home import subprocess_environment

HEAVY = ("polars", "numpy", "requests", "duckdb", "dagster")
PIPELINE_ONLY = ("requests", "duckdb", "dagster")
# runs `benchpress ARGS` in this interpreter, then writes the HEAVY modules it loaded to FILE
PROBE = f"""
import json, sys
from predictor.cli import main
out, args = sys.argv[1], sys.argv[2:]
try:
    code = main(args)
except SystemExit as exc:  # --help and --version end in argparse's exit
    code = exc.code
with open(out, "w") as handle:
    json.dump({{"code": code, "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}, handle)
"""


def loaded_by(args: list[str], tmp_path: Path) -> tuple[int, list[str]]:
    out = tmp_path / "loaded.json"
    subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *args],
        capture_output=True,
        check=True,
        cwd=tmp_path,
        env=subprocess_environment(BENCHPRESS_HOME=str(tmp_path / "home")),
        timeout=120,
    )
    found = json.loads(out.read_text())
    return found["code"], found["loaded"]


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["run", "--help"]])
def test_version_and_help_load_no_heavy_package(args: list[str], tmp_path: Path) -> None:
    assert loaded_by(args, tmp_path) == (0, [])


def test_predict_from_scores_loads_no_pipeline_package(tmp_path: Path) -> None:
    args = ["predict", "--scores", "gpqa_diamond=80,hle=20,mmlu_pro=80"]
    code, loaded = loaded_by(args, tmp_path)
    assert code == 0
    assert not set(loaded) & set(PIPELINE_ONLY), loaded
