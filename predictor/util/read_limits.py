"""How long, and how much memory, reading results files may take.

A results file is untrusted: the readers cap what they can (bytes per file, expanded bytes of a
compressed log, nesting, rows), and these limits contain whatever is left. The web page parses
uploads in worker processes that are killed at the deadline (`predictor.web.workers`); a
command-line run (`predict --from`, `models add --from`, `track --from`, ...) holds its own
reads to the same limits in its own process, turned on by `benchpress` at start-up
(`limit_reads`), so a library caller's process is never touched:

- a watchdog thread looks at the clock and at the process's resident memory (RSS) every few
  milliseconds while a file is read; past the deadline, or past the memory budget above what
  the process held when the read began, it stops the read with a signal (the read ends between
  two Python steps with one error naming the file), and ends the command (exit 2, the same
  message) if native code does not return within a grace period.

Resident memory, not the address-space or data limits: a thread pool's reserved stacks and
allocator arenas count against those, so they would refuse ordinary files on a many-core
machine.

Settings: `BENCHPRESS_READ_SECONDS` and `BENCHPRESS_READ_MEMORY_MB` (0 turns a limit off).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

READ_SECONDS = 15.0  # one command's reading of its results files, or one upload's parse
READ_MEMORY_BYTES = 768 * 2**20  # memory that reading may take beyond what the process held
WATCHDOG_GRACE_SECONDS = 5.0  # native code gets this long past a limit to return
WATCH_SECONDS = 0.02  # how often the watchdog looks


@dataclass(frozen=True)
class ReadLimits:
    """`seconds` and `memory` (bytes) for reading; 0 is no limit."""

    seconds: float = READ_SECONDS
    memory: int = READ_MEMORY_BYTES


_active: ReadLimits | None = None


def _setting(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{name} must be a number of 0 or more (0: no limit), got {text!r}")
    return value


def limits_from_environment() -> ReadLimits:
    """The limits the settings ask for (the defaults where unset)."""
    seconds = _setting("BENCHPRESS_READ_SECONDS", READ_SECONDS)
    memory_mb = _setting("BENCHPRESS_READ_MEMORY_MB", READ_MEMORY_BYTES / 2**20)
    return ReadLimits(seconds=seconds, memory=int(memory_mb * 2**20))


def limit_reads(limits: ReadLimits | None) -> None:
    """Hold every later `read_results` of this process's main thread to `limits` (None:
    unlimited, the library's default)."""
    global _active
    _active = limits


class ReadLimitExceeded(ValueError):
    """Reading went past a limit; the message says which, and the setting that raises it
    (`predictor.results` turns it into the `ResultsError` naming the file)."""


class _Stop(BaseException):
    """Raised by the watchdog's signal inside the read (a BaseException, so no reader's
    `except Exception` can swallow it)."""


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _resident_bytes() -> int:
    """The process's resident memory (0 where /proc is not there: no memory limit then)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def data_segment_bytes() -> int:
    """The process's data segment (`VmData`: its heap and private writable mappings, what
    RLIMIT_DATA holds), 0 where /proc is not there."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def cap_data_segment(memory: int, base: int | None = None) -> bool:
    """Hold this process's data segment to `base` (default: what it holds now) plus `memory`
    bytes (RLIMIT_DATA): past it an allocation fails (Python's MemoryError). What a process
    that reads untrusted bytes in isolation sets on itself: the web page's parsing processes
    (`predictor.web.workers`) and a probe run's task processes (`predictor.runs.isolation`).
    False (nothing set) where the data segment cannot be measured."""
    import resource  # deferred: Unix only, and only a process that limits itself needs it

    base = data_segment_bytes() if base is None else base
    if not base:
        return False
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = base + memory
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    return True


def _too_slow(seconds: float) -> str:
    return (
        f"reading took longer than {seconds:g} s, the limit for results files "
        "(BENCHPRESS_READ_SECONDS)"
    )


def _too_big(memory: int) -> str:
    return (
        f"reading needed more than {memory // 2**20} MiB of memory, the limit for results "
        "files (BENCHPRESS_READ_MEMORY_MB)"
    )


class _Watchdog(threading.Thread):
    """Stops the main thread's read past the deadline or the memory budget."""

    def __init__(self, what: str, limits: ReadLimits):
        super().__init__(name="benchpress-read-watchdog", daemon=True)
        self.what, self.limits = what, limits
        self.done = threading.Event()
        self.problem: str | None = None
        self._main = threading.main_thread().ident
        self._start = time.monotonic()
        self._base = _resident_bytes()

    def _over(self) -> str | None:
        seconds, memory = self.limits.seconds, self.limits.memory
        if seconds and time.monotonic() - self._start > seconds:
            return _too_slow(seconds)
        if memory and self._base and _resident_bytes() - self._base > memory:
            return _too_big(memory)
        return None

    def run(self) -> None:
        while not self.done.wait(WATCH_SECONDS):
            problem = self._over()
            if problem is None:
                continue
            self.problem = problem
            signal.pthread_kill(self._main, signal.SIGALRM)
            if not self.done.wait(WATCHDOG_GRACE_SECONDS):  # held in native code: end it
                sys.stderr.write(f"benchpress: error: {self.what}: {problem}\n")
                sys.stderr.flush()
                os._exit(2)
            return


@contextlib.contextmanager
def bounded_read(what: str) -> Iterator[None]:
    """Read within the process's limits (see the module), or raise `ReadLimitExceeded`.
    Unlimited outside the main thread or when no limits were set. `what` (the file) is named
    by the watchdog when it has to end the command."""
    limits = _active
    if (
        limits is None
        or not (limits.seconds or limits.memory)
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    watchdog = _Watchdog(what, limits)

    def stop(signum, frame):
        if watchdog.problem is not None:
            raise _Stop

    previous = signal.signal(signal.SIGALRM, stop)
    watchdog.start()
    problem = None
    try:
        yield
    except (_Stop, MemoryError):
        problem = watchdog.problem or _too_big(limits.memory)
    finally:
        watchdog.done.set()
        watchdog.join()
        signal.signal(signal.SIGALRM, previous)
    if problem:
        raise ReadLimitExceeded(problem)
