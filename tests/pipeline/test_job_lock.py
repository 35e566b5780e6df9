"""One refresh per BENCHPRESS_HOME however the job is started: `benchpress refresh`, the Dagster
UI, the daily schedule or `dagster asset materialize`.

`run_refresh` holds the flock on `refresh.lock` for its process; every run of the job also holds
a run lease (`refresh.run`: run id, pid of the process executing the run, host, start time),
taken by the `warehouse` resource in each step and claimed by `run_refresh` before its run
starts. A live lease of another run stops a refresh with a message naming that run and pid; a
lease whose run finished or whose process is gone is taken over.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest

from pipelines.locking import (
    RefreshLocked,
    claim_run_lease,
    hold_run_lease,
    lease_path,
    read_lease,
    release_run_lease,
)
from pipelines.resources import WarehouseResource
from pipelines.run import REPO_DAGSTER_YAML, run_refresh
from predictor.snapshots.reader import list_versions
from predictor.util.paths import snapshot_store_dir
from tests.faults.refreshing import Refresh, refresh_env, run_benchpress

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sleeper():
    """A live process that is not this one (the pid of another refresh)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def finished_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# ------------------------------------------------------------------------------ the lease
def test_a_live_lease_of_another_run_names_its_run_and_pid(tmp_path: Path, sleeper) -> None:
    hold_run_lease(tmp_path, "run-a", pid=sleeper.pid)
    assert hold_run_lease(tmp_path, "run-a").run_id == "run-a"  # its own steps: a no-op
    with pytest.raises(RefreshLocked) as caught:
        hold_run_lease(tmp_path, "run-b")
    message = str(caught.value)
    assert "another refresh is running" in message
    assert "run run-a" in message and f"pid {sleeper.pid}" in message
    assert read_lease(tmp_path).run_id == "run-a"  # untouched


def test_a_lease_whose_process_is_gone_is_taken_over(tmp_path: Path) -> None:
    hold_run_lease(tmp_path, "killed-run", pid=finished_pid())  # e.g. kill -9
    assert hold_run_lease(tmp_path, "next-run").run_id == "next-run"
    assert read_lease(tmp_path).run_id == "next-run"


def test_a_lease_whose_run_finished_is_taken_over(tmp_path: Path, sleeper) -> None:
    @dg.asset
    def nothing() -> None:
        return None

    with dg.DagsterInstance.ephemeral() as instance:
        done = dg.materialize([nothing], instance=instance)
        # the process that ran it is still alive (a `dagster dev` run worker, say) ...
        hold_run_lease(tmp_path, done.run_id, pid=sleeper.pid)
        with pytest.raises(RefreshLocked):
            hold_run_lease(tmp_path, "next-run")  # ... and without the instance it looks live
        # ... but the instance knows the run is over (its blocking check failed, say)
        assert hold_run_lease(tmp_path, "next-run", instance).run_id == "next-run"


def test_release_frees_only_its_own_lease(tmp_path: Path, sleeper) -> None:
    assert not release_run_lease(tmp_path, "nobody")
    hold_run_lease(tmp_path, "run-a", pid=sleeper.pid)
    assert not release_run_lease(tmp_path, "run-b")
    assert release_run_lease(tmp_path, "run-a")
    assert read_lease(tmp_path) is None
    assert lease_path(tmp_path).read_text() == ""


def test_claiming_waits_for_the_holder(tmp_path: Path) -> None:
    """The holder runs until its stdin closes, then marks that it ended: the first claim
    fails whatever the machine's load, the second goes through once the holder is gone."""
    ended = tmp_path / "holder-ended"
    holder = "import pathlib, sys; sys.stdin.read(); pathlib.Path(sys.argv[1]).touch()"
    proc = subprocess.Popen([sys.executable, "-c", holder, str(ended)], stdin=subprocess.PIPE)
    threading.Thread(target=proc.wait, daemon=True).start()  # reaped as its parent would
    try:
        hold_run_lease(tmp_path, "ui-run", pid=proc.pid)
        with pytest.raises(RefreshLocked, match="after waiting 0.3s"):
            claim_run_lease(tmp_path, "cli-run", wait=0.3)
        threading.Timer(0.5, proc.stdin.close).start()  # the holder ends while we wait
        assert claim_run_lease(tmp_path, "cli-run", wait=60).run_id == "cli-run"
        assert ended.exists()  # it waited for the holder
    finally:
        proc.kill()
        proc.wait()


# --------------------------------------------------------------- every step holds the lease
def test_a_step_fails_clearly_while_another_refresh_holds_the_home(tmp_path: Path, sleeper) -> None:
    @dg.asset
    def touches_home(warehouse: WarehouseResource) -> None:
        (Path(warehouse.home) / "touched").write_text("x")

    hold_run_lease(tmp_path, "refresh-run", pid=sleeper.pid)
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            [touches_home],
            instance=instance,
            resources={"warehouse": WarehouseResource(home=str(tmp_path))},
            raise_on_error=False,
        )
    assert not result.success
    # in process the resource fails the run before any step; in a multiprocess run (the UI,
    # the schedule) it fails each step's process the same way
    text = "\n".join(
        e.event_specific_data.error.to_string()
        for e in result.all_events
        if getattr(e.event_specific_data, "error", None) is not None
    )
    assert "another refresh holds the lock" in text
    assert "run refresh-run" in text and f"pid {sleeper.pid}" in text
    assert not (tmp_path / "touched").exists()  # the step body never ran

    release_run_lease(tmp_path, "refresh-run")
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            [touches_home],
            instance=instance,
            resources={"warehouse": WarehouseResource(home=str(tmp_path))},
        )
    assert result.success and (tmp_path / "touched").exists()
    assert read_lease(tmp_path).run_id == result.run_id  # held by the run that ran


def test_run_refresh_refuses_while_a_job_run_holds_the_home(tmp_path: Path, sleeper) -> None:
    home = tmp_path / "home"
    hold_run_lease(home, "ui-run-1234", pid=sleeper.pid)
    with pytest.raises(RefreshLocked) as caught:
        run_refresh(mode="replay", home=home)
    assert "run ui-run-1234" in str(caught.value) and f"pid {sleeper.pid}" in str(caught.value)
    assert not (home / "warehouse.duckdb").exists()  # it started nothing

    done = run_benchpress(home, "refresh", "--mode", "replay")
    assert done.returncode == 3, done.stderr
    assert "run ui-run-1234" in done.stderr and f"pid {sleeper.pid}" in done.stderr
    assert read_lease(home).run_id == "ui-run-1234"


# ------------------------------------------------------- real runs of the job, both directions
def dagster_env(home: Path) -> dict[str, str]:
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True, exist_ok=True)
    if not (dagster_home / "dagster.yaml").exists():
        (dagster_home / "dagster.yaml").write_bytes(REPO_DAGSTER_YAML.read_bytes())
    return {**refresh_env(home), "DAGSTER_HOME": str(dagster_home)}


def dagster_cli(home: Path, log: Path, *args: str) -> subprocess.Popen:
    """The `dagster` command on the code location, as the UI's run worker would execute it."""
    with log.open("w") as out:  # the child keeps its own descriptor
        return subprocess.Popen(
            [str(Path(sys.executable).parent / "dagster"), *args, "-m", "pipelines.definitions"],
            cwd=REPO,
            env=dagster_env(home),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


def wait_for_lease(
    home: Path, proc: subprocess.Popen, output: Callable[[], str], timeout: float = 300
) -> str:
    deadline = time.monotonic() + timeout
    while (lease := read_lease(home)) is None:
        assert proc.poll() is None, output()[-3000:]
        assert time.monotonic() < deadline, "the run never took the lease"
        time.sleep(0.1)
    return lease.run_id or ""


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # the run worker and its step processes
    proc.wait()


@pytest.mark.slow
def test_a_job_run_from_dagster_blocks_benchpress_refresh(tmp_path: Path) -> None:
    """The schedule or the UI launched the refresh job: `benchpress refresh` exits 3 while it
    runs, also between its steps (each step of a multiprocess run is a process of its own: the
    lease names the process executing the run)."""
    home, log = tmp_path / "home", tmp_path / "job.log"
    job = dagster_cli(home, log, "job", "execute", "-j", "refresh")
    try:
        run_id = wait_for_lease(home, job, log.read_text)
        assert read_lease(home).pid == job.pid  # the run worker, not the step's process
        with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
            deadline = time.monotonic() + 300
            while not instance.get_records_for_run(
                run_id, of_type=dg.DagsterEventType.STEP_SUCCESS, limit=1
            ).records:
                assert job.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, "no step of the job run finished"
                time.sleep(0.2)
        done = run_benchpress(home, "refresh", "--mode", "replay")
        assert done.returncode == 3, done.stderr
        assert "another refresh is running" in done.stderr
        assert f"run {run_id}" in done.stderr and f"pid {job.pid}" in done.stderr
        assert job.poll() is None and read_lease(home).run_id == run_id  # undisturbed
    finally:
        stop(job)


@pytest.mark.slow
def test_benchpress_refresh_blocks_a_job_run_from_dagster(tmp_path: Path) -> None:
    """A run materialized from Dagster while `benchpress refresh` runs fails at its first step."""
    home = tmp_path / "home"
    refresh = Refresh.start(home)
    try:
        run_id = wait_for_lease(home, refresh.proc, refresh.tail)
        holder = read_lease(home)
        assert holder.pid == refresh.pid
        log = tmp_path / "ui.log"
        ui = dagster_cli(home, log, "asset", "materialize", "--select", "evalplus_payloads")
        assert ui.wait(timeout=600) != 0, log.read_text()[-3000:]
        output = log.read_text()
        assert "another refresh holds the lock" in output
        assert f"run {run_id}" in output and f"pid {refresh.pid}" in output
        assert refresh.wait(timeout=900) == 0, refresh.tail()
    finally:
        refresh.kill("test over")
    assert len(list_versions(snapshot_store_dir(home))) == 1
    assert read_lease(home) is None  # released when the refresh finished


def test_the_schedule_skips_its_tick_while_another_refresh_holds_the_home(
    tmp_path: Path, sleeper, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.definitions import defs

    monkeypatch.setenv("BENCHPRESS_HOME", str(tmp_path))
    schedule = defs.resolve_schedule_def("daily_refresh")

    def tick():
        with (
            dg.instance_for_test() as instance,
            dg.build_schedule_context(instance=instance) as context,
        ):
            return schedule.evaluate_tick(context)

    assert len(tick().run_requests) == 1 and not tmp_path.joinpath("refresh.run").exists()
    hold_run_lease(tmp_path, "ui-run-42", pid=sleeper.pid)  # a run started from the UI
    skipped = tick()
    assert not skipped.run_requests
    assert "another refresh holds the lock" in skipped.skip_message
    assert "run ui-run-42" in skipped.skip_message and f"pid {sleeper.pid}" in skipped.skip_message
    release_run_lease(tmp_path, "ui-run-42")

    holder = subprocess.Popen(  # a `benchpress refresh` (the flock on refresh.lock)
        [sys.executable, "-c", HOLD_FLOCK, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        skipped = tick()
        assert not skipped.run_requests and f"pid {holder.pid}" in skipped.skip_message
    finally:
        holder.kill()
        holder.wait()
    assert len(tick().run_requests) == 1  # a killed holder blocks nothing


HOLD_FLOCK = """
import sys, time
from pathlib import Path
from pipelines.locking import refresh_lock
with refresh_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(600)
"""
