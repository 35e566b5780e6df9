"""`benchmarks/cli_latency.py`: one run of each command, the table and the JSON it writes
(the timings themselves depend on the machine, so only their presence is checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "benchmarks" / "cli_latency.py"
COMMANDS = [
    "python -c pass",
    "benchpress --version",
    "benchpress --help",
    "benchpress predict --scores gpqa_diamond=80,hle=20,mmlu_pro=80",
    "benchpress models list",
]


def test_one_run_of_each_command_is_tabled_with_its_median(tmp_path: Path) -> None:
    out = tmp_path / "latency.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["command", "median_s"]
    assert [line[: len(c)] for line, c in zip(lines[1:], COMMANDS, strict=True)] == COMMANDS
    assert all(float(line[len(c) :]) > 0 for line, c in zip(lines[1:], COMMANDS, strict=True))
    figures = json.loads(out.read_text())
    assert [r["command"] for r in figures["cold_start"]] == COMMANDS
    assert all(set(r) == {"command", "median_s"} for r in figures["cold_start"])
    assert all(r["median_s"] > 0 for r in figures["cold_start"])
    assert figures["runs"] == 1 and "refresh" not in figures
