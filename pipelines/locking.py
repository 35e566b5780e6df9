"""One refresh at a time per BENCHPRESS_HOME, and recovery from a refresh that was killed.

`refresh_lock(home, wait=0)` holds an exclusive `fcntl.flock` on `<home>/refresh.lock` for the
whole refresh. The holder writes its pid, host and start time into the file, so a second refresh
fails at once (or after waiting up to `wait` seconds) with `RefreshLocked`, whose message names
the holder; `benchpress refresh` turns it into exit code 3. The kernel drops the lock when its
process ends, however it ends (kill -9 included), so a crashed refresh never blocks the next one.

`recover_abandoned_runs(instance)`, called with the lock held, cleans up what a killed refresh
left in the Dagster instance: a run still marked as started whose process is gone keeps its slot
of the `duckdb` concurrency pool forever, and every later run would wait for that slot without
end. Such runs are marked failed and their slots freed. Runs of live processes (e.g. launched
from `dagster dev`) are left alone.

The flock only lives as long as the process holding it, and a run started from the Dagster UI
or the daily schedule runs its steps in processes of its own. So the refresh is also held per
run: `hold_run_lease(home, run_id, instance)` records the run id, the pid of the process
executing the run, the host and the start time in `<home>/refresh.run`. Every step of the job
calls it (through the `warehouse` resource) and `run_refresh` claims it before its run starts, so
whichever way a refresh is started, a second one fails with `RefreshLocked` naming the holder
("run ID, pid N"). A lease is stale, and taken over, once its run is finished in the Dagster
instance or its process is gone (same host); `release_run_lease` frees it early.

POSIX only (fcntl), like the rest of the pipeline's tooling.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from predictor.util.locking import try_lock

if TYPE_CHECKING:
    import dagster as dg

LOCK_NAME = "refresh.lock"
LEASE_NAME = "refresh.run"  # the run holding the refresh: run id, pid, host, start time
LEASE_TAG = "benchpress/lease"  # the refresh lease a run holds when it is not its run id
POLL_SECONDS = 0.2
EXIT_LOCKED = 3  # `benchpress refresh` exit code when another refresh holds the lock


@dataclass(frozen=True)
class LockHolder:
    pid: int | None
    host: str | None
    started_at: str | None
    run_id: str | None = None  # the Dagster run, when the holder is a run's lease

    def describe(self) -> str:
        run = f"run {self.run_id}, " if self.run_id else ""
        if self.pid is None:
            if self.run_id:
                return f"{run}running since {self.started_at or 'an unknown time'}"
            return "another process (it has not recorded its pid yet)"
        where = f" on {self.host}" if self.host and self.host != socket.gethostname() else ""
        return f"{run}pid {self.pid}{where}, running since {self.started_at or 'an unknown time'}"


class RefreshLocked(RuntimeError):
    """Another refresh holds the lock of this BENCHPRESS_HOME."""

    def __init__(self, path: Path, holder: LockHolder, waited: float):
        waited_text = f" after waiting {waited:g}s" if waited > 0 else ""
        super().__init__(
            f"another refresh is running in {path.parent} ({holder.describe()}); "
            f"not starting a second one{waited_text}. Retry later, or pass --wait SECONDS."
        )
        self.path, self.holder, self.waited = path, holder, waited


def lock_path(home: Path) -> Path:
    return Path(home) / LOCK_NAME


def lease_path(home: Path) -> Path:
    return Path(home) / LEASE_NAME


def read_holder(path: Path) -> LockHolder:
    """Who holds (or last held) the lock, from the lock file; fields None when unknown."""
    try:
        facts: dict[str, Any] = json.loads(path.read_text("utf-8") or "{}")
    except (OSError, ValueError):
        facts = {}
    pid = facts.get("pid")
    return LockHolder(
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        facts.get("host") if isinstance(facts.get("host"), str) else None,
        facts.get("started_at") if isinstance(facts.get("started_at"), str) else None,
    )


@contextlib.contextmanager
def refresh_lock(home: Path, wait: float = 0.0) -> Iterator[LockHolder]:
    """Hold the refresh lock of `home` (waiting up to `wait` seconds); yields what it recorded."""
    if wait < 0:
        raise ValueError(f"wait must be >= 0 seconds, got {wait}")
    path = lock_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    # O_APPEND-free read/write without truncation: the holder's facts stay readable to waiters
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        started = time.monotonic()
        while not try_lock(fd):
            waited = time.monotonic() - started
            if waited >= wait:
                raise RefreshLocked(path, _holder_with_retry(path), wait)
            time.sleep(min(POLL_SECONDS, max(wait - waited, 0.0)))
        me = LockHolder(
            os.getpid(), socket.gethostname(), datetime.now(UTC).isoformat(timespec="seconds")
        )
        record = json.dumps({"pid": me.pid, "host": me.host, "started_at": me.started_at})
        os.ftruncate(fd, 0)
        os.pwrite(fd, (record + "\n").encode(), 0)
        os.fsync(fd)
        try:
            yield me
        finally:
            os.ftruncate(fd, 0)  # nobody holds it now; the kernel releases the lock on close
    finally:
        os.close(fd)


def _holder_with_retry(path: Path, attempts: int = 5) -> LockHolder:
    """The holder may have the lock but not have written its facts yet: look a few times."""
    holder = read_holder(path)
    for _ in range(attempts):
        if holder.pid is not None:
            break
        time.sleep(0.05)
        holder = read_holder(path)
    return holder


# ----------------------------------------------------------------------- the run's lease
def lease_of(run: dg.DagsterRun) -> str:
    """The refresh lease `run` holds: the lease of the `benchpress refresh` that started it
    (`LEASE_TAG`), else its own run id (a run launched from the UI or the schedule)."""
    return run.tags.get(LEASE_TAG) or run.run_id


def read_lease(home: Path) -> LockHolder | None:
    """The run that holds (or last held) the refresh of `home`, None when nobody does."""
    try:
        facts: dict[str, Any] = json.loads(lease_path(home).read_text("utf-8") or "{}")
    except (OSError, ValueError):
        return None
    run_id = facts.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        return None
    pid = facts.get("pid")
    return LockHolder(
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        facts.get("host") if isinstance(facts.get("host"), str) else None,
        facts.get("started_at") if isinstance(facts.get("started_at"), str) else None,
        run_id,
    )


@contextlib.contextmanager
def _lease_file(home: Path) -> Iterator[int]:
    """The lease file, flocked while it is read and rewritten (microseconds, never a run)."""
    path = lease_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # drops the flock


def _write(fd: int, facts: dict[str, Any] | None) -> None:
    os.ftruncate(fd, 0)
    if facts:
        os.pwrite(fd, (json.dumps(facts) + "\n").encode(), 0)
    os.fsync(fd)


def run_process_pid(instance: dg.DagsterInstance | None, run_id: str) -> int:
    """The process executing run `run_id`: the one that logged its RUN_START (a step of a
    multiprocess run runs in a child of it), else this process."""
    if instance is not None:
        import dagster as dg  # deferred: ~1 s to import; the lock and lease need it only here

        with contextlib.suppress(Exception):  # an instance without the run: this process
            records = instance.get_records_for_run(
                run_id, of_type=dg.DagsterEventType.RUN_START, limit=1
            ).records
            for record in records:
                event = record.event_log_entry.dagster_event
                if event is not None and event.pid is not None:
                    return int(event.pid)
    return os.getpid()


def lease_is_live(lease: LockHolder, instance: dg.DagsterInstance | None = None) -> bool:
    """Does the run named by `lease` still run? Not when the instance knows it finished, nor
    when its process (on this host) is gone. A run unknown to the instance whose recorded
    process is this one is over too (a run is executed by one process at a time)."""
    run = None
    if instance is not None and lease.run_id:
        with contextlib.suppress(Exception):
            run = instance.get_run_by_id(lease.run_id)
        if run is not None and run.is_finished:
            return False
    if lease.pid is None or (lease.host and lease.host != socket.gethostname()):
        return True  # nothing to check it against: assume it runs
    if lease.pid == os.getpid():
        return run is not None
    return _pid_alive(lease.pid)


def hold_run_lease(
    home: Path,
    run_id: str,
    instance: dg.DagsterInstance | None = None,
    pid: int | None = None,
) -> LockHolder:
    """Hold the refresh of `home` for run `run_id` (a no-op when it already does).

    Raises `RefreshLocked` naming the holder when another run's lease is live."""
    with _lease_file(home) as fd:
        current = read_lease(home)
        if current is not None and current.run_id == run_id:
            return current
        if current is not None and lease_is_live(current, instance):
            raise RefreshLocked(lock_path(home), current, 0.0)
        me = LockHolder(
            pid if pid is not None else run_process_pid(instance, run_id),
            socket.gethostname(),
            datetime.now(UTC).isoformat(timespec="seconds"),
            run_id,
        )
        _write(
            fd,
            {"run_id": run_id, "pid": me.pid, "host": me.host, "started_at": me.started_at},
        )
        return me


def claim_run_lease(
    home: Path,
    run_id: str,
    instance: dg.DagsterInstance | None = None,
    wait: float = 0.0,
) -> LockHolder:
    """`hold_run_lease` for a run this process is about to execute, waiting up to `wait`
    seconds for a live holder (a run started from the UI or the schedule) to finish."""
    started = time.monotonic()
    while True:
        try:
            return hold_run_lease(home, run_id, instance, pid=os.getpid())
        except RefreshLocked as exc:
            waited = time.monotonic() - started
            if waited >= wait:
                raise RefreshLocked(exc.path, exc.holder, wait) from None
            time.sleep(min(POLL_SECONDS, max(wait - waited, 0.0)))


def release_run_lease(home: Path, run_id: str) -> bool:
    """Free the lease if run `run_id` holds it; whether it did."""
    if not lease_path(home).exists():
        return False
    with _lease_file(home) as fd:
        current = read_lease(home)
        if current is None or current.run_id != run_id:
            return False
        _write(fd, None)
        return True


# ------------------------------------------------------------------- runs of a killed refresh
def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _run_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The process that executed a run, from its first event that recorded one."""
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event is not None and event.pid is not None:
            return int(event.pid)
    return None


HOST_TAG = "benchpress/host"  # the machine whose `benchpress refresh` executes a run


def recover_abandoned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark runs whose process died as failed and free their concurrency slots; their ids.

    Call with the refresh lock held. A run is abandoned when it is not finished and the
    process that executed it (same host) no longer exists, as after `kill -9`. A run tagged
    with another machine's name (`HOST_TAG`, a team instance shared by several machines) is
    never taken for abandoned here: its process id means nothing on this machine.
    """
    import dagster as dg  # deferred: ~1 s to import; the lock and lease need it only here

    unfinished = instance.get_runs(
        filters=dg.RunsFilter(
            statuses=[
                dg.DagsterRunStatus.NOT_STARTED,
                dg.DagsterRunStatus.STARTING,
                dg.DagsterRunStatus.STARTED,
                dg.DagsterRunStatus.CANCELING,
            ]
        )
    )
    recovered = []
    here = socket.gethostname()
    for run in unfinished:
        if run.tags.get(HOST_TAG, here) != here:
            continue
        pid = _run_pid(instance, run.run_id)
        if pid is None or pid == os.getpid() or _pid_alive(pid):
            continue
        instance.report_run_failed(
            run, message=f"the process running this refresh (pid {pid}) ended without finishing"
        )
        recovered.append(run.run_id)
    storage = instance.event_log_storage
    if storage.supports_global_concurrency_limits:
        # slots of runs that are over (just marked, or finished without freeing them: no daemon
        # runs here to do it) are free; a live run waiting for a slot is left alone
        holders = sorted(storage.get_concurrency_run_ids())
        runs = instance.get_runs(filters=dg.RunsFilter(run_ids=holders)) if holders else []
        known = {run.run_id: run for run in runs}
        for run_id in holders:
            run = known.get(run_id)
            if run is None or run.is_finished:
                storage.free_concurrency_slots_for_run(run_id)
    return recovered


def busy_with(home: Path, instance: dg.DagsterInstance | None = None) -> LockHolder | None:
    """Who holds the refresh of `home` right now, without taking anything: the live run lease,
    else a process holding `refresh.lock`; None when nobody does."""
    lease = read_lease(home)
    if lease is not None and lease_is_live(lease, instance):
        return lease
    holder = read_holder(lock_path(home))  # the holder's record is cleared when it releases
    alive = holder.pid is not None and holder.pid != os.getpid() and _pid_alive(holder.pid)
    same_host = not holder.host or holder.host == socket.gethostname()
    return holder if alive and same_host else None
