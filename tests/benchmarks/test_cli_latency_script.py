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


def test_one_run_of_each_command_is_tabled_with_its_goal(tmp_path: Path) -> None:
    out = tmp_path / "latency.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: a goal missed on a busy machine
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["command", "median_s", "goal_s", "met"]
    assert [line[: len(c)] for line, c in zip(lines[1:], COMMANDS, strict=True)] == COMMANDS
    figures = json.loads(out.read_text())
    assert [r["command"] for r in figures["cold_start"]] == COMMANDS
    assert [r["goal_s"] for r in figures["cold_start"]] == [None, 0.3, 0.3, 0.6, 1.0]
    assert all(r["median_s"] > 0 for r in figures["cold_start"])
    assert figures["runs"] == 1 and "refresh" not in figures
