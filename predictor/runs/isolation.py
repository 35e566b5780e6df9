"""Each probe task in a process of its own, held to a deadline and a memory cap, and the
endpoint check held to a deadline: what a server sends can neither keep a run alive forever
nor take the run's process with it.

`run_task` forks the run's process for one task (the tool, lm-eval's `simple_evaluate` or
Inspect's `eval`, runs in the child; the tasks it loaded while planning come with it) and
waits for the child's one answer on a pipe:

- **Deadline.** Past `deadline` seconds of wall clock the child and every process it started
  (its own process group) get SIGKILL, and the task fails with "task X exceeded its N s
  deadline". The tools' `timeout` is per read: a server that drips its answer a byte at a time
  never trips it, the deadline does. `task_deadline` gives the default: 10 times the plan's
  estimate for the task (at `tokens_per_second`), at least an hour; 12 hours for a task the
  plan cannot size (Inspect's); `--task-timeout` sets it (0: none).
- **Memory.** A task that talks to an endpoint (an API model type) runs with its data segment
  capped (RLIMIT_DATA) at what the child held when it started plus 768 MiB, the figure of
  the results readers (`predictor.util.read_limits`); past it an allocation fails and the task
  fails with "the server's answer for task X exceeded the 768 MiB memory cap". Local weights
  (`hf`, `vllm`) need more than that and run without the cap.
- **What the server sent.** An answer without a field lm-eval reads fails the task with
  "the server's answer for task X had no 'logprobs'" (not lm-eval's bare `'logprobs'`); a
  log-probability that is not finite (NaN, inf) fails it with the value, so it is never
  scored (lm-eval would take the first of the tied NaN choices and score 25 on four choices).
- **The key.** The child gets the variables that hand the key to the tool (`tool_variables`)
  in its own memory, across the fork: never on a command line, never in the run's own
  environment (another thread of a library caller's process cannot read it there).

The child is forked, not started afresh, so what the tool loaded while the run was planned
(lm-eval's task index, ~20 s for its built-in tasks) is not loaded again per task, and the
options given to the tool (Inspect's `custom_outputs` function) need not be serialisable. A
process that initialised CUDA before the run cannot use it again in a forked child: run local
weights from a process that has not. A child whose parent died (kill -9) kills itself and
what it started, and removes its staging folder.

`RequestDeadline` holds one urllib exchange (the endpoint check, `preflight`) to a total
deadline: when it passes, the exchange's socket is shut down.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import importlib
import json
import math
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from predictor.harnesses.endpoint import Endpoint, SettingsError
from predictor.harnesses.staging import staging_folder
from predictor.harnesses.tool import ProbeTool
from predictor.util.item_subsets import ItemSubset
from predictor.util.read_limits import READ_MEMORY_BYTES, cap_data_segment

TASK_MEMORY_BYTES = READ_MEMORY_BYTES  # a task's memory beyond what its process started with
ESTIMATE_FACTOR = 10.0  # the default deadline: this many times the plan's estimate ...
MIN_TASK_SECONDS = 3600.0  # ... and at least this long
UNSIZED_TASK_SECONDS = 12 * 3600.0  # a task the plan could not size
MAX_ANSWER_BYTES = 1 << 20  # the child's answer on its pipe (one line of JSON)
WATCH_SECONDS = 0.5  # how often the parent looks at its child, and the child at its parent
# where lm-eval's API models read the server's answer: an error raised there is the answer's
_ANSWER_READERS = frozenset({"parse_logprobs", "parse_generations"})


class TaskFailed(RuntimeError):
    """A task's process failed: the message says how, in the user's terms."""


class TaskDeadline(TaskFailed):
    """The task outlived its deadline; its process was killed."""


class TaskMemory(TaskFailed):
    """The task needed more memory than its cap."""


class NonFiniteLogProb(ValueError):
    """A log-probability the model answered is NaN or infinite."""


# ---------------------------------------------------------------------- the deadline of a task
def check_task_timeout(value: float | None) -> float | None:
    """`task_timeout` as given (None: the default), or `SettingsError`."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(value, bool) or not (math.isfinite(seconds) and seconds >= 0):
        raise SettingsError(f"task_timeout: expected seconds >= 0 (0: no deadline), got {value!r}")
    return seconds


def task_deadline(
    tokens: int | None, tokens_per_second: float, given: float | None = None
) -> float | None:
    """Seconds one task may run: `given` (0: no deadline), else `ESTIMATE_FACTOR` times the
    plan's estimate, at least `MIN_TASK_SECONDS`; `UNSIZED_TASK_SECONDS` without one."""
    if given is not None:
        return given or None
    if tokens is None or not tokens_per_second > 0:
        return UNSIZED_TASK_SECONDS
    return max(MIN_TASK_SECONDS, ESTIMATE_FACTOR * tokens / tokens_per_second)


def describe_task_timeout(given: float | None) -> str:
    """The deadline as the plan shows it."""
    if given is None:
        return (
            f"{ESTIMATE_FACTOR:g} x each task's estimate, at least {MIN_TASK_SECONDS / 3600:g} h "
            f"({UNSIZED_TASK_SECONDS / 3600:g} h unsized) per task"
        )
    return f"{given:g} s per task" if given else "none"


def tool_variables(endpoint: Endpoint, tool: ProbeTool) -> dict[str, str]:
    """The environment variables that hand the key (and Inspect's endpoint URL) to the tool,
    set in the task's process only (`ProbeTool.variables`)."""
    return type(tool).variables(endpoint)


# --------------------------------------------------------------------- one task in a child
def run_task(
    tool: ProbeTool,
    endpoint: Endpoint,
    task: str,
    out: Path,
    limit: int | None,
    options: Mapping[str, Any],
    deadline: float | None,
    memory: int | None = TASK_MEMORY_BYTES,
    subset: ItemSubset | None = None,
) -> Path:
    """`tool.run(endpoint, task, out, limit, options)` (with `subset=` when given) in a
    forked child, within `deadline` seconds (None: no deadline) and, for an API model type,
    `memory` bytes; the results file's path, or `TaskFailed` (`TaskDeadline`, `TaskMemory`)
    naming the task."""
    cap = memory if endpoint.is_api and memory else None
    source = "the server's answer" if endpoint.is_api else "the model's answer"
    variables = tool_variables(endpoint, tool)
    _prepare(tool)
    _flush_streams()  # else what the streams hold is written twice, by each process
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(
            write_end,
            parent,
            cap,
            variables,
            functools.partial(
                tool.run, endpoint, task, out, limit, options, **_subset_keyword(subset)
            ),
            _Context(tool.name, task, out, source, tool.checks_log_probs),
        )
    os.close(write_end)
    with contextlib.suppress(OSError):  # as the child does: a group to kill from the start
        os.setpgid(pid, pid)
    try:
        answer, expired = _await(pid, read_end, deadline)
    except BaseException:  # interrupted (Ctrl-C): the task's processes go with the run
        os.close(read_end)
        _end(pid)
        staging_folder(out, task, pid)
        raise
    os.close(read_end)
    status = _end(pid)  # also what is left of a finished task's processes
    if not expired and "path" in answer:
        return Path(answer["path"])
    staging_folder(out, task, pid)  # what the child wrote before it failed or was killed
    if expired:
        raise TaskDeadline(f"task {task} exceeded its {deadline:g} s deadline (--task-timeout)")
    if cap and (answer.get("memory") or (not answer and status in _OUT_OF_MEMORY)):
        raise TaskMemory(f"{source} for task {task} exceeded the {cap // 2**20} MiB memory cap")
    if answer.get("memory"):
        raise TaskMemory(f"task {task} ran out of memory")
    if "error" in answer:
        raise TaskFailed(str(answer["error"]))
    raise TaskFailed(f"task {task}: its process ended with {_status_text(status)}")


def _subset_keyword(subset: ItemSubset | None) -> dict[str, ItemSubset]:
    """`subset=` for a subset run; nothing otherwise (a tool that runs no subsets,
    `ProbeTool.runs_subsets`, takes no such keyword)."""
    return {} if subset is None else {"subset": subset}


# killed by the kernel (SIGKILL), or aborted by native code that could not allocate
_OUT_OF_MEMORY = (-signal.SIGKILL, -signal.SIGABRT, -signal.SIGSEGV, -signal.SIGBUS)


def _status_text(status: int | None) -> str:
    if status is None:
        return "an unknown status"
    if status < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-status).name}"
        return f"signal {-status}"
    return f"status {status} and no answer"


def _prepare(tool: ProbeTool) -> None:
    """Import what the tool imports to run a task (`ProbeTool.preload`) in the run's
    process, so each task's child has it (and its memory cap starts above it)."""
    for module in tool.preload:
        with contextlib.suppress(ImportError):  # the child's own import says what is missing
            importlib.import_module(module)


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or detached stream
            stream.flush()


def _await(pid: int, fd: int, deadline: float | None) -> tuple[dict[str, Any], bool]:
    """(the child's answer, whether the deadline passed first). The answer ends when every
    writer closed the pipe, or when the child ended (a process it started may hold the pipe)."""
    until = None if deadline is None else time.monotonic() + deadline
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    data = bytearray()
    while True:
        left = None if until is None else until - time.monotonic()
        if left is not None and left <= 0:
            return {}, True
        wait = WATCH_SECONDS if left is None else min(left, WATCH_SECONDS)
        if poller.poll(wait * 1000):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
            if len(data) > MAX_ANSWER_BYTES:
                return {"error": "the task's process sent an answer too long to read"}, False
        elif _ended(pid):
            os.set_blocking(fd, False)
            with contextlib.suppress(BlockingIOError):
                while chunk := os.read(fd, 1 << 16):
                    data += chunk
            break
    try:
        answer = json.loads(bytes(data)) if data else {}
    except ValueError:
        answer = {}
    return (answer if isinstance(answer, dict) else {}), False


def _ended(pid: int) -> bool:
    """Whether the child ended (left unreaped: its process group's number stays its own).
    Where `waitid` is missing, only the end of its answer (the pipe closed) says so."""
    if not hasattr(os, "waitid"):
        return False
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _end(pid: int) -> int | None:
    """SIGKILL to the child's process group (what is left of it), then reap the child; its
    exit status (negative: the signal that ended it)."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return None
    return os.waitstatus_to_exitcode(status)


# ------------------------------------------------------------------------- the child's side
class _Context:
    """What the child needs to word its errors and clean up after itself."""

    def __init__(
        self, harness: str, task: str, out: Path, source: str, checks_log_probs: bool = False
    ) -> None:
        self.harness, self.task, self.out, self.source = harness, task, out, source
        self.checks_log_probs = checks_log_probs  # `ProbeTool.checks_log_probs`


def _child(
    write_end: int,
    parent: int,
    memory: int | None,
    variables: Mapping[str, str],
    run: Callable[[], Path],
    context: _Context,
) -> NoReturn:
    """Run the task and write one answer ({"path"}, {"memory"} or {"error"}) to the pipe;
    never returns (`os._exit`: nothing of the parent's stack or exit handlers runs here)."""
    try:
        answer = _outcome(parent, memory, variables, run, context)
        _flush_streams()
        data = json.dumps(answer).encode()
        while data:
            data = data[os.write(write_end, data) :]
    finally:
        os._exit(0)


def _outcome(
    parent: int,
    memory: int | None,
    variables: Mapping[str, str],
    run: Callable[[], Path],
    context: _Context,
) -> dict[str, Any]:
    try:
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        _no_terminal_input()
        _watch_parent(parent, context)
        if memory:
            cap_data_segment(memory)
        os.environ.update(variables)
        with _finite_log_probs(context):
            return {"path": str(run())}
    except BaseException as error:  # noqa: BLE001 - every failure becomes the answer
        if _out_of_memory(error):
            return {"memory": True}
        return {"error": _describe(error, context)}


def _no_terminal_input() -> None:
    """Standard input from /dev/null: the child is not in the terminal's foreground group,
    so a read of the terminal would stop it; a prompt gets an end of file instead."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)


def _watch_parent(parent: int, context: _Context) -> None:
    """A thread that ends the child (and its process group) once the run's process is gone,
    removing what the task staged."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_SECONDS)
        staging_folder(context.out, context.task)
        os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, name="benchpress-task-parent", daemon=True).start()


def _out_of_memory(error: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, MemoryError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _describe(error: BaseException, context: _Context) -> str:
    """A failed task's error in the user's terms: what the server's answer lacked, rather
    than the bare `'logprobs'` of a KeyError raised where lm-eval reads it."""
    if isinstance(error, NonFiniteLogProb):
        return str(error)
    if isinstance(error, KeyError | IndexError | TypeError | AttributeError | ValueError):
        frames = traceback.extract_tb(error.__traceback__)
        if any(f.name in _ANSWER_READERS for f in frames) or isinstance(
            error, json.JSONDecodeError
        ):
            if isinstance(error, KeyError) and error.args:
                return f"{context.source} for task {context.task} had no {error.args[0]!r}"
            detail = " ".join(str(error).split())[:200]
            return (
                f"{context.source} for task {context.task} could not be read "
                f"({type(error).__name__}: {detail})"
            )
    text = " ".join(str(error).split())[:4000]
    return text or type(error).__name__


@contextlib.contextmanager
def _finite_log_probs(context: _Context) -> Iterator[None]:
    """In the child, for lm-eval: every log-likelihood the model answers is checked before
    lm-eval scores it; one that is not finite fails the task (`NonFiniteLogProb`)."""
    if not context.checks_log_probs:
        yield
        return
    import lm_eval.evaluator as evaluator  # deferred: the optional tool, in its own process

    original = evaluator.evaluate

    @functools.wraps(original)
    def evaluate(*args: Any, **kwargs: Any) -> Any:
        lm = kwargs["lm"] if "lm" in kwargs else args[0]
        for name in ("loglikelihood", "loglikelihood_rolling"):
            method = getattr(lm, name, None)
            if callable(method):
                setattr(lm, name, _checked(method, context))
        return original(*args, **kwargs)

    evaluator.evaluate = evaluate  # simple_evaluate calls it by its module's name
    try:
        yield
    finally:
        evaluator.evaluate = original


def _checked(method: Callable[..., Any], context: _Context) -> Callable[..., Any]:
    @functools.wraps(method)
    def checked(*args: Any, **kwargs: Any) -> Any:
        answers = method(*args, **kwargs)
        for answer in answers:
            value = answer[0] if isinstance(answer, tuple | list) else answer
            try:
                number = float(value)
            except (TypeError, ValueError):
                continue
            if not math.isfinite(number):
                raise NonFiniteLogProb(
                    f"{context.source} for task {context.task} has a log-probability that is "
                    f"not finite ({number}): the task is not scored"
                )
        return answers

    return checked


# ------------------------------------------------------------ a deadline for one HTTP exchange
class RequestDeadline:
    """A total deadline for one urllib exchange, whatever its per-read timeout: open it with
    an opener built with `handlers()` inside `with deadline:`; when `seconds` pass, its
    sockets are shut down (a read blocked on them ends at once) and `expired` is set."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def handlers(self) -> list[urllib.request.BaseHandler]:
        return [_WatchedHTTP(self), _WatchedHTTPS(self)]

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def __enter__(self) -> RequestDeadline:
        self._timer = threading.Timer(self.seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()


def _shut(sock: socket.socket) -> None:
    """Shut the socket down under its TLS layer, if any (a TLS read then ends too)."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _watched(connection: type, deadline: RequestDeadline) -> type:
    class Watched(connection):  # type: ignore[misc, valid-type]
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    return Watched


class _WatchedOpen:
    """Opens its connections through `_watched`: one deadline for the whole exchange."""

    def __init__(self, deadline: RequestDeadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class, req, **kwargs):  # type: ignore[no-untyped-def]
        return super().do_open(_watched(http_class, self._deadline), req, **kwargs)  # type: ignore[misc]


class _WatchedHTTP(_WatchedOpen, urllib.request.HTTPHandler):
    pass


class _WatchedHTTPS(_WatchedOpen, urllib.request.HTTPSHandler):
    pass


HTTP_ERRORS = (OSError, http.client.HTTPException)  # what a cut exchange raises
