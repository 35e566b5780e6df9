"""The refresh lock (pipelines/locking.py): one refresh per home, a clear message naming the
holder, waiting on request, released by the kernel when the holder dies (kill -9 included); and
the recovery of the concurrency-pool slot a killed refresh leaves in the Dagster instance."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import pytest

from pipelines.locking import (
    RefreshLocked,
    lock_path,
    read_holder,
    recover_abandoned_runs,
    refresh_lock,
)
from pipelines.run import REPO_DAGSTER_YAML
from tests.faults.refreshing import run_benchpress

HOLD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pipelines.locking import refresh_lock
    with refresh_lock(Path(sys.argv[1])):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
        if len(sys.argv) > 3:
            Path(sys.argv[3]).touch()  # about to let go
    """
)


def hold_lock(home: Path, seconds: float, ending: Path | None = None) -> subprocess.Popen:
    """A process holding the refresh lock of `home` for `seconds`; it creates `ending` just
    before it lets go."""
    extra = [] if ending is None else [str(ending)]
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(home), str(seconds), *extra],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_second_holder_fails_at_once_naming_the_first(tmp_path: Path) -> None:
    holder = hold_lock(tmp_path, 60)
    try:
        started = time.monotonic()
        with pytest.raises(RefreshLocked) as caught, refresh_lock(tmp_path):
            pass
        assert time.monotonic() - started < 60 / 2  # well before the holder lets go
        message = str(caught.value)
        assert f"pid {holder.pid}" in message and "running since 20" in message
        assert str(tmp_path) in message and "--wait" in message
        assert caught.value.holder.pid == holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_waiting_gives_up_after_the_timeout(tmp_path: Path) -> None:
    holder = hold_lock(tmp_path, 60)
    try:
        started = time.monotonic()
        with pytest.raises(RefreshLocked, match="after waiting 0.6s"), refresh_lock(tmp_path, 0.6):
            pass
        assert 0.5 < time.monotonic() - started < 60 / 2  # waited, and gave up before 60 s
    finally:
        holder.kill()
        holder.wait()


def test_waiting_succeeds_once_the_holder_finishes(tmp_path: Path) -> None:
    ending = tmp_path / "holder-ending"
    holder = hold_lock(tmp_path, 1.0, ending)
    with refresh_lock(tmp_path, wait=60) as me:
        assert ending.exists()  # taken once the holder let go, not beside it
        assert me.pid == os.getpid() and read_holder(lock_path(tmp_path)).pid == os.getpid()
    holder.wait()
    assert read_holder(lock_path(tmp_path)).pid is None  # released: nobody named


def test_a_killed_holder_never_blocks_the_next_refresh(tmp_path: Path) -> None:
    holder = hold_lock(tmp_path, 60)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert read_holder(lock_path(tmp_path)).pid == holder.pid  # its record is left behind ...
    with refresh_lock(tmp_path, wait=0) as me:  # ... but the kernel released its lock
        assert me.pid == os.getpid()


def test_negative_wait_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="wait"), refresh_lock(tmp_path, wait=-1):
        pass


SLOT_HOLDER = textwrap.dedent(
    """
    import sys, time
    import dagster as dg

    @dg.asset(pool="duckdb")
    def holds_the_slot() -> None:
        print("holding", flush=True)
        time.sleep(300)

    job = dg.Definitions(
        assets=[holds_the_slot], jobs=[dg.define_asset_job("hold", selection="*")]
    ).resolve_job_def("hold")
    with dg.DagsterInstance.from_config(sys.argv[1]) as instance:
        job.execute_in_process(instance=instance)
    """
)


@pytest.mark.slow
def test_slots_of_a_killed_run_are_recovered_and_live_runs_left_alone(tmp_path: Path) -> None:
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    shutil.copyfile(REPO_DAGSTER_YAML, dagster_home / "dagster.yaml")
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOT_HOLDER, str(dagster_home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
            assert recover_abandoned_runs(instance) == []  # its process is alive
            assert instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            # the dead run still holds the slot: without recovery every later run would wait
            (run,) = instance.get_runs()
            assert run.status == dg.DagsterRunStatus.STARTED
            assert instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots
            assert recover_abandoned_runs(instance) == [run.run_id]
            assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
            assert not instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots
            assert recover_abandoned_runs(instance) == []  # idempotent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # its compute-log helpers, if any are left


def test_cli_refresh_exits_3_naming_the_holder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    holder = hold_lock(home, 120)
    try:
        done = run_benchpress(home, "refresh", "--mode", "replay", "--wait", "0.5")
        assert done.returncode == 3, done.stderr
        assert f"pid {holder.pid}" in done.stderr and "after waiting 0.5s" in done.stderr
        assert not (home / "warehouse.duckdb").exists()  # it touched nothing
        bad = run_benchpress(home, "refresh", "--wait", "-1")
        assert bad.returncode == 2 and "--wait" in bad.stderr
    finally:
        holder.kill()
        holder.wait()
