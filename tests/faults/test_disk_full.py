"""The disk fills up while `benchpress refresh` publishes: one line says what happened and what
state the home is in (the snapshot was published and verifies), never the storage layer's
traceback; once space is freed the next refresh finishes as it always did.

Both refreshes are `benchpress` processes. The full disk is real where this machine allows it
(root, as in CI): Dagster's instance directory (BENCHPRESS_HOME/dagster) is a small tmpfs,
filled to the last byte right after `published_snapshot` has published (at the assets'
`crash_point`, the stage boundary the crash tests use; `tests.support.disk_full`), so Dagster's
own SQLite writes then fail as they do on a full disk. Without the right to mount, the same
point instead makes Dagster's storage raise SQLite's "database or disk is full" error
(injected: said so in the output of `-rP`)."""

from __future__ import annotations

import contextlib
import errno
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy.exc

from pipelines.locking import busy_with
from pipelines.run import DiskFull, disk_full_reason, free_bytes
from predictor import BenchPress
from predictor.snapshots.reader import list_versions, verify
from predictor.util.paths import dagster_home, snapshot_store_dir
from tests.faults.refreshing import refresh_env, run_benchpress
from tests.support.disk_full import can_mount, fill, tiny_filesystem

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def refresh_on_a_full_disk(home: Path, how: str) -> subprocess.CompletedProcess[str]:
    """`benchpress refresh --mode replay` in its own process, the disk full after the publish
    (`tests.support.disk_full`: `real` or `inject`)."""
    return subprocess.run(
        [sys.executable, "-m", "tests.support.disk_full", str(dagster_home(home)), how,
         "refresh", "--mode", "replay"],
        cwd=REPO_ROOT, env={**refresh_env(home), "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip


def test_disk_full_while_dagster_records_the_publish(tmp_path: Path) -> None:
    home = tmp_path / "home"
    storage = dagster_home(home)
    real = can_mount(tmp_path)
    print("disk full:", "a real full tmpfs" if real else "injected (cannot mount a tmpfs here)")
    with tiny_filesystem(storage) if real else contextlib.nullcontext():
        first = refresh_on_a_full_disk(home, "real" if real else "inject")
        store = snapshot_store_dir(home)
        (version,) = list_versions(store)
        free = "0" if real else r"[\d,]+"
        assert first.returncode == 1, first.stderr
        assert re.fullmatch(
            rf"benchpress: error: disk full \(No space left on device, {free} bytes free\) "
            rf"while Dagster recorded the run in {re.escape(str(storage))}; snapshot "
            rf"{re.escape(version)} was published and verifies; free space and run "
            r"`benchpress refresh` again\n",
            first.stderr,
        ), first.stderr  # one line: no traceback, nothing of Dagster's own complaints
        assert first.stdout == ""
        verify(store / version, version)
        assert BenchPress.load(version, store=store).predict({"gpqa_diamond": 70})
        assert busy_with(home) is None  # the refresh lock and the run lease are released

        (storage / "filler").unlink(missing_ok=True)  # space is freed
        again = run_benchpress(home, "refresh", "--mode", "replay")
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0].startswith("  closed run ") and lines[0].endswith(
        " of a refresh that was killed (its pool slot is free)"
    ), again.stdout  # the run the full disk interrupted, as after any crash
    assert f"snapshot unchanged (identical content), latest is {version}" in lines
    assert list_versions(store) == [version]


def test_what_counts_as_a_full_disk(tmp_path: Path) -> None:
    """Real errors: SQLite's SQLITE_FULL (its page limit reached), ENOSPC from /dev/full, an
    I/O error on a full tmpfs (where one can be mounted); and errors that are not."""
    con = sqlite3.connect(tmp_path / "runs.db")
    con.execute("PRAGMA max_page_count = 8")
    con.execute("CREATE TABLE t (x BLOB)")
    with pytest.raises(sqlite3.OperationalError) as sqlite_full:
        for _ in range(100):
            con.execute("INSERT INTO t VALUES (randomblob(4096))")
    con.close()
    with pytest.raises(OSError) as write_full, open("/dev/full", "wb", buffering=0) as device:
        device.write(b"x")
    assert str(sqlite_full.value) == "database or disk is full"
    assert disk_full_reason(sqlite_full.value, tmp_path) == "No space left on device"
    assert write_full.value.errno == errno.ENOSPC
    assert disk_full_reason(write_full.value, tmp_path) == "No space left on device"
    wrapped = sqlalchemy.exc.OperationalError(
        "PRAGMA main.table_xinfo(runs)", {}, sqlite_full.value
    )
    assert disk_full_reason(wrapped, tmp_path) == "No space left on device"
    io_error = sqlite3.OperationalError("disk I/O error")  # what SQLite says when it cannot grow
    assert disk_full_reason(io_error, tmp_path) is None  # an I/O error with space to spare
    assert disk_full_reason(PermissionError(errno.EACCES, "denied"), tmp_path) is None
    if can_mount(tmp_path):
        with tiny_filesystem(tmp_path / "small", "1m") as small:
            fill(small)
            assert free_bytes(small) == 0
            assert disk_full_reason(io_error, small) == "No space left on device"
    assert issubclass(DiskFull, OSError)  # `benchpress` prints it as one line either way
