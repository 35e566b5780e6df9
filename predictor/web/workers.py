"""Handler threads: the API's work (numpy fold-ins, probe searches, file reads) never runs
on the event loop, and never on more than `threads` threads at once.

A request waits for a free thread at most `wait` seconds (then `Saturated`: a 503) and for its
answer at most `deadline` seconds (then `TooSlow`: a 504). A thread cannot be stopped, so one
that outlives its deadline runs to its end, its result dropped, and keeps its slot until then:
slow handlers can never add threads beyond the bound.

Uploaded results files are not parsed in these threads but in worker processes
(`parse_in_worker`, below), which can be killed: a file's parse is held to a deadline and a
memory budget, whatever the file holds.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import io
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from predictor.util.paths import benchpress_home
from predictor.util.read_limits import (
    READ_MEMORY_BYTES,
    READ_SECONDS,
    cap_data_segment,
    data_segment_bytes,
)
from predictor.util.scratch import sweep_orphans
from predictor.web.logs import log

T = TypeVar("T")


class Saturated(Exception):
    """Every handler thread stayed busy for as long as the request could wait."""


class TooSlow(Exception):
    """The handler did not finish within the request's deadline."""


class HandlerPool:
    """At most `threads` handlers at once, first come first served."""

    def __init__(self, threads: int):
        self.threads = threads
        self._slots: anyio.CapacityLimiter | None = None  # made in the server's event loop
        self._workers: anyio.CapacityLimiter | None = None

    @property
    def busy(self) -> int:
        """Handlers running now (abandoned ones included)."""
        return 0 if self._slots is None else int(self._slots.borrowed_tokens)

    def _limiters(self) -> tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]:
        if self._slots is None or self._workers is None:
            self._slots = anyio.CapacityLimiter(self.threads)
            self._workers = anyio.CapacityLimiter(self.threads)
        return self._slots, self._workers

    async def run(self, func: Callable[[], T], wait: float, deadline: float) -> T:
        """`func()` in a handler thread; Saturated or TooSlow instead of waiting longer."""
        slots, workers = self._limiters()
        borrower = object()
        acquired = False
        with anyio.move_on_after(wait):
            await slots.acquire_on_behalf_of(borrower)
            acquired = True
        if not acquired:
            raise Saturated
        loop = asyncio.get_running_loop()
        claim = threading.Lock()  # whoever takes it frees the slot: the thread, or we below

        def call() -> T:
            if not claim.acquire(blocking=False):  # given up on before it started
                raise TooSlow
            try:
                return func()
            finally:  # the slot frees when the work ends, not when the request stops waiting
                with contextlib.suppress(RuntimeError):  # the loop closed (server stopped)
                    loop.call_soon_threadsafe(slots.release_on_behalf_of, borrower)

        try:
            with anyio.move_on_after(deadline):
                return await anyio.to_thread.run_sync(call, abandon_on_cancel=True, limiter=workers)
            raise TooSlow
        finally:
            if claim.acquire(blocking=False):  # the thread never started
                slots.release_on_behalf_of(borrower)


# --------------------------------------------------------------- parsing in worker processes
# Uploaded results files are parsed in worker processes, never in the server's own threads.
#
# `parse_in_worker(name, data, deadline, memory)` reads one file's bytes (as
# `predictor.results.read.read_result_bytes` does) in a process of a small shared pool and
# returns the results frame, or raises:
#
# - `ParseDeadline` when the parse takes longer than `deadline` seconds: the process is killed
#   then (SIGKILL), so a hostile file holds no CPU past its deadline;
# - `ParseMemory` when the parse needs more than `memory` bytes (the process's RLIMIT_DATA, its
#   heap and private mappings, is set to what it used when it became ready plus `memory`);
# - `ParseBusy` when no process became free within `wait` seconds;
# - `ResultsError` (the reader's own message) for a file that cannot be used;
# - `ParseCrashed` when the process failed otherwise (a bug: its traceback in the message).
#
# The processes are started from the interpreter running the server (`sys.executable`, with this
# checkout's `predictor` on their path), import the readers (and Inspect's, when installed) once,
# and are reused: a normal file answers in milliseconds. Each runs at a lower priority (nice 10)
# with one thread for polars and BLAS, so parses never outrun the server for the cores. A process
# that was killed, ran out of memory or served `MAX_JOBS` files is replaced in the background.
#
# Nothing is kept in shared temporary space: each process points `tempfile` (where Inspect's
# reader writes its private copy of a log) at a folder of its own under
# `<BENCHPRESS_HOME>/tmp/uploads/`, removed when the process ends or is killed; folders of
# processes that no longer run (a server killed with -9) are removed when the next pool starts.
# The frame comes back as Arrow IPC bytes and errors as JSON: nothing the parent reads from a
# worker is unpickled.

PARSE_SECONDS = READ_SECONDS  # default deadline of one parse, as for a command's reading
PARSE_MEMORY_BYTES = READ_MEMORY_BYTES  # default memory one parse may take, the same
MAX_JOBS = 100  # files one process parses before it is replaced (memory fragmentation)
START_SECONDS = 120.0  # for a new process to import the readers
MAX_HEADER_BYTES = 1 << 20  # a message header from a worker (JSON)
NICE = 10
_LEN = struct.Struct(">I")
WARM_UP = (  # files a new process reads before it takes real ones
    ("warm.csv", b"model,benchmark,score\nwarm,hle,1\n"),
    (
        "results_warm.json",
        b'{"results": {"mmlu": {"acc,none": 0.5}}, "versions": {}, "model_name": "w"}',
    ),
)
_WORKER_ENV = {
    "POLARS_MAX_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "RUST_BACKTRACE": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
}


class ParseError(Exception):
    """A file could not be parsed within its limits."""


class ParseBusy(ParseError):
    """Every worker process stayed busy for as long as the caller could wait."""


class ParseDeadline(ParseError):
    """The parse outlived its deadline; its process was killed."""


class ParseMemory(ParseError):
    """The parse needed more memory than it may take; its process was replaced."""


class ParseCrashed(ParseError, RuntimeError):
    """The worker failed in an unexpected way (the reader's traceback, or how it ended)."""


def scratch_root() -> Path:
    """Where worker processes keep temporary copies: `<BENCHPRESS_HOME>/tmp/uploads`."""
    return benchpress_home() / "tmp" / "uploads"


def _scratch_name(pid: int) -> str:
    return f"{socket.gethostname()}-{pid}"


def sweep_scratch(root: Path) -> list[Path]:
    """Remove the folders of worker processes of this host that no longer run (left by a
    process killed with -9); the folders removed."""
    return sweep_orphans(root, f"{socket.gethostname()}-")


def _frame(message: bytes, payload: bytes) -> bytes:
    return _LEN.pack(len(message)) + message + payload


class _Worker:
    """One worker process and its pipes (the parent's side)."""

    def __init__(self, root: Path):
        source = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, **_WORKER_ENV, "PYTHONPATH": path}
        code = "from predictor.web.workers import worker_main; worker_main()"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, str(root), str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # a Ctrl-C meant for the server does not hit a parse
            close_fds=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.pid = self.proc.pid
        self.scratch = root / _scratch_name(self.pid)
        self.jobs = 0
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)

    # -- pipes with a deadline
    def _wait(self, fd: int, event: int, until: float) -> None:
        poller = select.poll()
        poller.register(fd, event | select.POLLERR | select.POLLHUP)
        while True:
            left = until - time.monotonic()
            if left <= 0:
                raise ParseDeadline
            if poller.poll(min(left, 1.0) * 1000):
                return

    def _send(self, data: bytes, until: float) -> None:
        view = memoryview(data)
        while view:
            self._wait(self._in, select.POLLOUT, until)
            try:
                sent = os.write(self._in, view[: 1 << 20])
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: the process ended
                raise EOFError from None
            view = view[sent:]

    def _recv(self, size: int, until: float) -> bytes:
        parts, got = [], 0
        while got < size:
            self._wait(self._out, select.POLLIN, until)
            try:
                chunk = os.read(self._out, min(size - got, 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                raise EOFError
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def receive(self, until: float, limit: int) -> tuple[dict[str, Any], bytes]:
        """One message: a JSON header and the payload its `size` announces."""
        (length,) = _LEN.unpack(self._recv(_LEN.size, until))
        if length > MAX_HEADER_BYTES:
            raise ParseCrashed(f"worker {self.pid} sent a header of {length} bytes")
        header = json.loads(self._recv(length, until))
        size = int(header.get("size", 0))
        if not 0 <= size <= limit:
            raise ParseCrashed(f"worker {self.pid} announced {size} bytes")
        return header, self._recv(size, until) if size else b""

    def wait_ready(self, seconds: float) -> None:
        header, _ = self.receive(time.monotonic() + seconds, 0)
        if not header.get("ready"):
            raise ParseCrashed(f"worker {self.pid} did not start: {header}")

    def parse(self, name: str, data: bytes, deadline: float, memory: int) -> Any:
        import polars as pl  # noqa: PLC0415  # deferred: only a server that parses needs it

        # deferred: the readers' package loads Polars, which the server imports on first parse
        from predictor.results.errors import ResultsError  # noqa: PLC0415

        until = time.monotonic() + deadline
        self.jobs += 1
        message = json.dumps({"name": name, "memory": memory, "size": len(data)}).encode()
        try:
            self._send(_frame(message, b""), until)
            self._send(data, until)
        except EOFError:
            # the process stopped reading: out of memory while it read the file, its answer
            # (if it gave one before it ended) is in the pipe
            pass
        try:
            header, payload = self.receive(until, limit=memory + len(data) + (64 << 20))
        except EOFError:
            raise self._ended() from None
        if "frame" in header:
            return pl.read_ipc(io.BytesIO(payload))
        if "results_error" in header:
            path, problem, field, hint = header["results_error"]
            raise ResultsError(path, problem, field, hint=hint)
        if header.get("memory"):
            raise ParseMemory
        raise ParseCrashed(str(header.get("crash", header))[:4000])

    def _ended(self) -> ParseError:
        """Why the process ended mid-parse: out of memory (a failed allocation aborts polars'
        Rust code; the kernel's OOM killer sends SIGKILL) or another crash."""
        code = self.proc.wait()
        if code in (-signal.SIGABRT, -signal.SIGKILL, -signal.SIGSEGV, -signal.SIGBUS):
            return ParseMemory()
        return ParseCrashed(f"the parsing process ended with status {code}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, wait for it, and remove its scratch folder (a copy it may have left)."""
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        shutil.rmtree(self.scratch, ignore_errors=True)


class ParsePool:
    """Up to `size` worker processes, kept started (a keeper thread replaces those that end)."""

    def __init__(self, size: int, root: Path | None = None):
        self.size = size
        self.root = root or scratch_root()
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        sweep_scratch(self.root)
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._starting = 0
        self._closed = False
        self.killed = 0  # processes killed at a deadline (for tests and benchmarks)
        self._keeper = threading.Thread(target=self._keep, name="parse-pool", daemon=True)
        self._keeper.start()

    @property
    def pids(self) -> list[int]:
        with self._cond:
            return [w.pid for w in (*self._idle, *self._busy)]

    @property
    def idle(self) -> int:
        with self._cond:
            return len(self._idle)

    def grow(self, size: int) -> None:
        with self._cond:
            if size > self.size:
                self.size = size
                self._cond.notify_all()

    def _keep(self) -> None:
        """Start processes while fewer than `size` run (one at a time, off the request path)."""
        failures = 0
        while True:
            with self._cond:
                while not self._closed and len(self._idle) + len(self._busy) >= self.size:
                    self._cond.wait()
                if self._closed:
                    return
                self._starting += 1
            worker = None
            try:
                worker = _Worker(self.root)
                worker.wait_ready(START_SECONDS)
                failures = 0
            except (OSError, ValueError, EOFError, ParseError) as exc:
                if worker is not None:
                    worker.kill()
                worker = None
                failures += 1
                log.error("a file-parsing process did not start: %r", exc)
                time.sleep(min(2**failures, 60))
            with self._cond:
                self._starting -= 1
                if worker is not None:
                    if self._closed:
                        worker.kill()
                    else:
                        self._idle.append(worker)
                self._cond.notify_all()

    def _take(self, wait: float) -> _Worker:
        until = time.monotonic() + wait
        with self._cond:
            while not self._idle:
                left = until - time.monotonic()
                if left <= 0 or self._closed:
                    raise ParseBusy
                self._cond.wait(left)
            worker = self._idle.pop()
            self._busy.add(worker)
            return worker

    def _give_back(self, worker: _Worker, keep: bool) -> None:
        if not keep:
            worker.kill()
        with self._cond:
            self._busy.discard(worker)
            if keep and not self._closed:
                self._idle.append(worker)
            self._cond.notify_all()
        if keep and self._closed:
            worker.kill()

    def parse(self, name: str, data: bytes, deadline: float, memory: int, wait: float) -> Any:
        """`read_result_bytes(name, data)` in a worker; see `parse_in_worker`."""
        worker = self._take(wait)
        keep = False
        try:
            frame = worker.parse(name, data, deadline, memory)
            keep = worker.jobs < MAX_JOBS
            return frame
        except ParseDeadline:
            self.killed += 1
            raise
        except Exception as exc:
            # deferred: as in `_Worker.parse`, the readers load on the first parse
            from predictor.results.errors import ResultsError  # noqa: PLC0415

            keep = isinstance(exc, ResultsError) and worker.jobs < MAX_JOBS
            raise
        finally:
            self._give_back(worker, keep and worker.alive())

    def close(self) -> None:
        """Kill every process (at exit: their scratch folders go with them)."""
        with self._cond:
            self._closed = True
            workers = [*self._idle, *self._busy]
            self._idle.clear()
            self._cond.notify_all()
        for worker in workers:
            worker.kill()


_pool: ParsePool | None = None
_pool_lock = threading.Lock()


def shared_pool(size: int = 2) -> ParsePool:
    """The process's pool of parsing processes (started on first use, at least `size`)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ParsePool(size)
            atexit.register(_pool.close)
        else:
            _pool.grow(size)
        return _pool


def parse_in_worker(
    name: str,
    data: bytes,
    deadline: float = PARSE_SECONDS,
    memory: int = PARSE_MEMORY_BYTES,
    wait: float = 10.0,
) -> Any:
    """One results file's bytes read into the results frame (a `polars.DataFrame`, as
    `read_result_bytes(name, data)` returns it) in a worker process, within `deadline` seconds
    and `memory` bytes; waits at most `wait` seconds for a free process. Raises `ParseBusy`,
    `ParseDeadline`, `ParseMemory`, `ResultsError` or `ParseCrashed` (see above)."""
    return shared_pool().parse(name, data, deadline, memory, wait)


# ------------------------------------------------------------------------ the worker's side
def _read_exact(stream: Any, size: int) -> bytes:
    parts, got = [], 0
    while got < size:
        chunk = stream.read(size - got)
        if not chunk:
            raise EOFError
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def worker_main() -> None:
    """A parsing process: `python -c '...worker_main()' SCRATCH_ROOT PARENT_PID`. Reads jobs
    (a JSON header, then the file's bytes) from stdin, answers on stdout; ends when stdin
    closes or the parent is gone."""
    import resource  # noqa: PLC0415  # deferred: only a parsing process limits itself
    import tempfile  # noqa: PLC0415  # deferred: only a parsing process moves its temp folder

    root, parent = Path(sys.argv[1]), int(sys.argv[2])
    scratch = root / _scratch_name(os.getpid())
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the answers
    with contextlib.suppress(OSError):
        os.nice(NICE)
    scratch.mkdir(parents=True, exist_ok=True, mode=0o700)
    tempfile.tempdir = str(scratch)
    os.environ["TMPDIR"] = str(scratch)

    def orphaned() -> None:  # the server died (kill -9): leave nothing behind
        while os.getppid() == parent:
            time.sleep(0.5)
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(0)

    threading.Thread(target=orphaned, daemon=True).start()

    # deferred: loaded after the process set its limits and temp folder (see above)
    from predictor.results.errors import ResultsError  # noqa: PLC0415
    from predictor.results.read import read_result_bytes  # noqa: PLC0415  # deferred: as above
    from predictor.results.registry import preload_modules  # noqa: PLC0415  # deferred: as above

    for module in preload_modules():  # what the readers import on first use (the formats')
        with contextlib.suppress(ImportError):  # an optional extra (Inspect)
            __import__(module)
    for name, sample in WARM_UP:  # load the mapping tables before the first real file
        with contextlib.suppress(ResultsError):
            read_result_bytes(name, sample)
    gc.freeze()  # the imported modules: never scanned again by the collector
    base = data_segment_bytes()
    unlimited = resource.getrlimit(resource.RLIMIT_DATA)

    def send(header: dict[str, Any], payload: bytes = b"") -> None:
        header = {**header, "size": len(payload)}
        outbox.write(_frame(json.dumps(header).encode(), payload))
        outbox.flush()

    send({"ready": True, "pid": os.getpid()})
    try:
        while True:
            (length,) = _LEN.unpack(_read_exact(inbox, _LEN.size))
            job = json.loads(_read_exact(inbox, length))
            memory = int(job["memory"])
            cap_data_segment(memory, base)
            answer: dict[str, Any]
            payload = b""
            try:
                data = _read_exact(inbox, int(job["size"]))
                frame = read_result_bytes(str(job["name"]), data)
                buffer = io.BytesIO()
                frame.write_ipc(buffer)
                payload = buffer.getvalue()
                answer = {"frame": True}
            except ResultsError as exc:
                answer = {"results_error": [exc.path, exc.problem, exc.field, exc.hint]}
            except MemoryError:
                answer = {"memory": True}
            except Exception:
                answer = {"crash": traceback.format_exc()[-4000:]}
            finally:
                data = frame = buffer = None  # type: ignore[assignment]
                resource.setrlimit(resource.RLIMIT_DATA, unlimited)
            send(answer, payload)
            if answer.get("memory"):
                break  # the heap may be fragmented: a fresh process takes the next file
            del payload
    except EOFError:
        pass
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
