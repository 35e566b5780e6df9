"""Advisory locks of one BENCHPRESS_HOME, for work that reads, decides and then writes in
several stores, which no single store's transaction covers.

`held(path, what)` holds an exclusive `fcntl.flock` on `path` (created, never removed: a lock
file that is unlinked while another process waits on it would let a third one in). The kernel
drops the lock when its process ends, however it ends (kill -9 included), so a crashed holder
never blocks the next one. The holder writes its pid and start time into the file, so a waiter
that gives up says who holds it. Lock files live in `BENCHPRESS_HOME/locks`, named by a hash
of what they lock (`lock_file`), since the keys are data (a run name, a database path).

Used by `benchpress track`: one lock per tracked run, held from reading the run's stored
checkpoints through logging them to MLflow / W&B, and one per MLflow sqlite database while it
is written (`predictor.tracking.export`). POSIX only (fcntl), like the pipeline's refresh lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from predictor.util.paths import benchpress_home

LOCKS_DIR = "locks"
WAIT_ENV = "BENCHPRESS_TRACK_LOCK_WAIT"  # seconds a track waits for another of the same run
DEFAULT_WAIT = 600.0
POLL_SECONDS = 0.05  # first wait between attempts; doubles up to MAX_POLL_SECONDS
MAX_POLL_SECONDS = 0.5


class LockTimeout(TimeoutError):
    """Another process held the lock for longer than the caller would wait (an OSError: the
    CLI prints it as one line, exit 1)."""


def lock_file(kind: str, key: str, home: Path | None = None) -> Path:
    """`BENCHPRESS_HOME/locks/<kind>-<hash of key>.lock`: any key (a run name with slashes,
    quotes or newlines, a long path) gives a short, safe file name."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(home or benchpress_home()) / LOCKS_DIR / f"{kind}-{digest}.lock"


def wait_seconds() -> float:
    """How long to wait for a lock: BENCHPRESS_TRACK_LOCK_WAIT, else DEFAULT_WAIT."""
    text = os.environ.get(WAIT_ENV, "").strip()
    if not text:
        return DEFAULT_WAIT
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{WAIT_ENV} must be a number of seconds, got {text!r}") from None
    if not value >= 0:  # also NaN
        raise ValueError(f"{WAIT_ENV} must be >= 0 seconds, got {text!r}")
    return value


def holder(path: Path) -> str:
    """Who holds (or last held) the lock at `path` and since when, as the holder recorded it."""
    try:
        facts = json.loads(path.read_text("utf-8") or "{}")
    except (OSError, ValueError):
        facts = {}
    pid, since = facts.get("pid"), facts.get("started_at")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return "another process holds it"
    return f"pid {pid} holds it" + (f" since {since}" if isinstance(since, str) else "")


def try_lock(fd: int) -> bool:
    """Take the exclusive flock on `fd` if free; False when another process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextmanager
def held(path: Path, what: str, wait: float | None = None) -> Iterator[None]:
    """Hold the exclusive lock at `path`, waiting up to `wait` seconds (default
    `wait_seconds()`) for another holder; else `LockTimeout`: `what` (what the caller could
    not do), the holder and how to wait longer."""
    wait = wait_seconds() if wait is None else wait
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)  # not inherited (PEP 446)
    fd = os.open(path, flags, 0o666)
    try:
        deadline = time.monotonic() + wait
        delay = POLL_SECONDS
        while not try_lock(fd):
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockTimeout(
                    f"{what} (its lock: {holder(path)}; waited {wait:g} s, "
                    f"{WAIT_ENV}=SECONDS waits longer)"
                )
            time.sleep(min(delay, left))
            delay = min(delay * 2, MAX_POLL_SECONDS)
        since = datetime.now(UTC).isoformat(timespec="seconds")
        record = json.dumps({"pid": os.getpid(), "started_at": since}) + "\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # nobody holds it now; closing the file releases the lock
    finally:
        os.close(fd)
