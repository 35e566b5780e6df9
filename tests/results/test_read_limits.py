"""A command's reading of results files is held to a deadline and a memory budget
(`predictor.util.read_limits`), as an upload's parse is on the web page; a library caller is not.
And a reader killed mid-way leaves no Inspect copy behind for long: the next read removes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from predictor.results import read_results
from predictor.results.inspect_log import SCRATCH_PREFIX
from predictor.util.paths import bundled_snapshot_dir

REPO = Path(__file__).resolve().parents[2]
INSPECT_LOG = REPO / "tests/fixtures/eval_formats/inspect/data_arc_qwen.json"


@pytest.fixture(scope="module")
def many_tasks(tmp_path_factory) -> Path:
    """A valid lm-eval results file of 20,000 tasks (about 2 MB): it takes about a second to
    read, and some tens of MiB."""
    results = {
        f"task_{i}": {"alias": f"task_{i}", "acc,none": (i % 97) / 97, "acc_stderr,none": 0.01}
        for i in range(20_000)
    }
    path = tmp_path_factory.mktemp("limits") / "results_2026-12-01T00-00-00.json"
    path.write_text(
        json.dumps({"results": results, "model_name": "acme/m", "lm_eval_version": "0.4.9"})
    )
    return path


def benchpress(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`benchpress ARGV` in its own process (its limits act on the whole process)."""
    return subprocess.run(
        [sys.executable, "-m", "predictor.cli", *argv, "--store", str(bundled_snapshot_dir())],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        cwd=REPO,
    )


def test_a_read_past_the_deadline_is_stopped_with_one_line(many_tasks) -> None:
    done = benchpress("predict", "--from", str(many_tasks), BENCHPRESS_READ_SECONDS="0.1")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"benchpress: error: {many_tasks}: reading took longer than 0.1 s, the limit for "
        "results files (BENCHPRESS_READ_SECONDS)\n"
    )


def test_a_read_past_the_memory_budget_is_stopped_with_one_line(many_tasks) -> None:
    done = benchpress("predict", "--from", str(many_tasks), BENCHPRESS_READ_MEMORY_MB="4")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"benchpress: error: {many_tasks}: reading needed more than 4 MiB of memory, the "
        "limit for results files (BENCHPRESS_READ_MEMORY_MB)\n"
    )


def test_within_the_default_limits_the_same_file_is_read(many_tasks) -> None:
    """Not a limit error: the file is read and its tasks reported as not ours."""
    done = benchpress("predict", "--from", str(many_tasks))
    assert done.returncode == 2
    assert "no result maps onto a benchmark of ours" in done.stderr


@pytest.mark.parametrize("value", ["abc", "-1", "inf"])
def test_a_bad_limit_setting_is_a_usage_error(many_tasks, value) -> None:
    done = benchpress("predict", "--from", str(many_tasks), BENCHPRESS_READ_SECONDS=value)
    assert done.returncode == 2
    assert done.stderr.endswith(
        "error: BENCHPRESS_READ_SECONDS must be a number of 0 or more (0: no limit), got "
        f"{value!r}\n"
    )


def test_a_library_caller_is_not_held_to_the_commands_limits(many_tasks, monkeypatch) -> None:
    monkeypatch.setenv("BENCHPRESS_READ_SECONDS", "0.001")
    assert read_results([many_tasks]).height == 20_000


def test_an_inspect_read_removes_copies_left_by_killed_readers(tmp_path, monkeypatch) -> None:
    """A reader killed with -9 mid-read leaves its private copy's folder; the next read removes
    the folders of processes that no longer run (and unnamed ones over an hour old), and keeps
    those of readers still running."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    dead = tmp_path / f"{SCRATCH_PREFIX}{ended.pid}-k1ll3d"
    running = tmp_path / f"{SCRATCH_PREFIX}{os.getppid()}-busy"
    old_unnamed, new_unnamed = (
        tmp_path / f"{SCRATCH_PREFIX}abc_xyz",
        tmp_path / f"{SCRATCH_PREFIX}q9",
    )
    for folder in (dead, running, old_unnamed, new_unnamed):
        folder.mkdir()
        (folder / "log.eval").write_bytes(b"left over")
    two_hours_ago = time.time() - 7200
    os.utime(old_unnamed, (two_hours_ago, two_hours_ago))

    assert read_results([INSPECT_LOG]).height > 0

    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, new_unnamed.name])
