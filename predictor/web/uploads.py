"""`POST /api/results`: a results file dropped on the page, read into probe scores.

The page sends the file's bytes to this (local) server, which reads them as `benchpress
predict --from` does (`read_result_bytes`, then `BenchPress.on_snapshot` and
`predictor.results.inputs.summarise`) and answers what the page needs to fill its probe form:
the scores that map onto fitted benchmarks of the snapshot (canonical ids) with their source,
the mapped benchmarks the fit lacks, the tasks that map onto nothing, the notes and the model
the file names. A file that cannot be used is a 400 carrying the reader's message (file,
field, what to do).

A file is untrusted input, so its reading is contained (`Limits.upload_*`):

- bytes in flight: the bodies of all uploads held at once are at most
  `upload_bytes_in_flight` bytes, counted from Content-Length before a byte is read and again
  while the body streams in; past it a 503 with Retry-After (`UploadService.claim`);
- parsing: in a worker process (`predictor.web.workers.parse_in_worker`), killed at
  `upload_seconds` (504) and held to `upload_memory` bytes (413). At most `upload_workers`
  files are parsed at once and `upload_queue` more wait for a process (at most
  `Limits.queue_seconds`); more uploads at once are a 503 at once, so uploads never take more
  than `upload_workers + upload_queue` of the handler threads the rest of the API needs;
- nothing is kept: the bytes live as long as the request; an Inspect log passes through a
  temporary copy for Inspect's own reader, made in the worker's private folder under
  `<BENCHPRESS_HOME>/tmp/uploads/` and removed as soon as it is read, when the worker is killed,
  or (after a crash of the whole server) when the next server starts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any, TypeVar

import polars as pl

from predictor.api import BenchPress
from predictor.names.resolve import AmbiguousNameError, UnknownNameError
from predictor.results import ResultsError, models_in, registry
from predictor.results.frame import MAPPED
from predictor.results.inputs import summarise
from predictor.web import figures
from predictor.web.errors import ApiError, bad_request
from predictor.web.limits import DEFAULT_LIMITS, Limits
from predictor.web.workers import (
    ParseBusy,
    ParseDeadline,
    ParseMemory,
    ParsePool,
    TooSlow,
    shared_pool,
)

T = TypeVar("T")
MAX_UPLOAD_BYTES = 32 * 1024 * 1024  # what the page sends; larger files: the command line
RETRY_AFTER = {"Retry-After": "5"}
BUSY = "the server is busy reading other files; try again in a few seconds"
MAX_NAME_CHARS = 255


def file_name(raw: str) -> str:
    """The name a file was uploaded under, without any folder (`C:\\x\\r.json` -> `r.json`):
    it picks the reader by its suffix and names the file in messages, never a path here."""
    name = PurePosixPath(raw.replace("\\", "/")).name.strip()
    if name in ("", ".", ".."):
        raise bad_request("parameter 'name' is required: the uploaded file's name")
    if len(name) > MAX_NAME_CHARS:
        raise bad_request(f"parameter 'name' is longer than {MAX_NAME_CHARS} characters")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in name):
        raise bad_request("parameter 'name' holds control characters")
    return name


def describe() -> dict[str, Any]:
    """`GET /api/results`: what the page may send (its size check runs before uploading) and
    each format's name (`labels`: the page names the tool a file's scores came from with it),
    from the registry of formats (`predictor.results.registry`)."""
    return {
        "max_bytes": MAX_UPLOAD_BYTES,
        "accept": list(registry.upload_suffixes()),
        "formats": registry.upload_formats(),
        "labels": registry.labels(),
    }


def _number(value: Any) -> Any:
    return figures.number(value) if isinstance(value, float) else value


# ------------------------------------------------------------------------- bytes in flight
class ByteClaim:
    """One upload's bytes, counted against the server's budget until `release` (once)."""

    def __init__(self, budget: ByteBudget, size: int):
        self.budget = budget
        self.size = size
        self._released = False
        self._owner = threading.Lock()  # taken by whoever releases: the handler, or the app

    def grow(self, more: int) -> bool:
        """Count `more` bytes (a body longer than announced); False when over the budget."""
        if not self.budget._take(more):
            return False
        self.size += more
        return True

    def adopt(self) -> bool:
        """The handler thread takes over the release (False: the app released it already)."""
        return self._owner.acquire(blocking=False)

    def release(self) -> None:
        with self.budget._lock:
            if not self._released:
                self._released = True
                self.budget.used -= self.size

    def release_unless_adopted(self) -> None:
        """After the handler ran or was given up on: release, unless its thread took over."""
        if self._owner.acquire(blocking=False):
            self.release()


class ByteBudget:
    """Upload bytes held at once, across all uploads of one server."""

    def __init__(self, total: int):
        self.total = total
        self.used = 0
        self._lock = threading.Lock()

    def _take(self, size: int) -> bool:
        with self._lock:
            if self.used + size > self.total:
                return False
            self.used += size
            return True

    def claim(self, size: int) -> ByteClaim | None:
        """`size` bytes more, or None when they would take the total past the budget."""
        return ByteClaim(self, size) if self._take(size) else None


# -------------------------------------------------------------------------------- parsing
class UploadService:
    """One server's upload limits: its byte budget, its admission of uploads to parsing, and
    the (process-wide, pre-started) pool of parsing processes."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, pool: ParsePool | None = None):
        self.limits = limits
        self.bytes = ByteBudget(limits.upload_bytes_in_flight)
        self._admitted = threading.BoundedSemaphore(limits.upload_workers + limits.upload_queue)
        self.pool = pool or shared_pool(limits.upload_workers)

    def claim(self, size: int) -> ByteClaim:
        """`size` announced bytes of a body, before it is read: 503 (or 413) past the budget."""
        total = self.limits.upload_bytes_in_flight
        if size > total:
            raise ApiError(
                413, f"results file over {total} bytes, the most this server takes in at once"
            )
        claim = self.bytes.claim(size)
        if claim is None:
            raise self.over_budget()
        return claim

    def over_budget(self) -> ApiError:
        """The 503 for a body that would take the bytes in flight past the budget (the
        connection closes: the rest of the body is not read)."""
        return ApiError(
            503,
            f"the server is taking in {self.limits.upload_bytes_in_flight // 2**20} MiB of "
            "uploaded files already (its limit); try again in a few seconds",
            {**RETRY_AFTER, "Connection": "close"},
        )

    def serve(self, claim: ByteClaim | None, func: Callable[[], T]) -> T:
        """`func()` (in a handler thread) with this service answering its upload; the body's
        bytes count until it returns."""
        if claim is not None and not claim.adopt():
            raise TooSlow  # given up on before it started (the 504 is sent already)
        _local.service = self
        try:
            return func()
        finally:
            _local.service = None
            if claim is not None:
                claim.release()

    def parse(self, name: str, data: bytes) -> Any:
        """The results frame of one file, read in a worker process within the limits."""
        limits = self.limits
        if not self._admitted.acquire(blocking=False):
            raise ApiError(503, BUSY, RETRY_AFTER)
        try:
            return self.pool.parse(
                name, data, limits.upload_seconds, limits.upload_memory, limits.queue_seconds
            )
        except ParseBusy:
            raise ApiError(503, BUSY, RETRY_AFTER) from None
        except ParseDeadline:
            raise ApiError(
                504,
                f"{name}: reading the file took longer than {limits.upload_seconds:g} s, the "
                "most the server spends on one file; is it a results file as the tool wrote it?",
            ) from None
        except ParseMemory:
            raise ApiError(
                413,
                f"{name}: reading the file needs more than {limits.upload_memory // 2**20} MiB "
                "of memory, the most the server gives one file; is it a results file as the "
                "tool wrote it?",
            ) from None
        finally:
            self._admitted.release()


_local = threading.local()
_default: UploadService | None = None
_default_lock = threading.Lock()


def current() -> UploadService:
    """The service of the server answering this thread's request (the default limits when
    called outside a server, as a script or a test may)."""
    global _default
    service = getattr(_local, "service", None)
    if service is not None:
        return service
    with _default_lock:
        if _default is None:
            _default = UploadService()
        return _default


def read_upload(bench: BenchPress, name: str, data: bytes, model: str | None) -> dict[str, Any]:
    """The answer to one upload, for one model of the file (`model`, else the first one; all
    of them are listed in `models` for the page to offer)."""
    if not data:
        raise bad_request(f"{name}: the file is empty")
    try:
        read = current().parse(name, data)
    except ResultsError as exc:
        raise bad_request(str(exc)) from None
    return _answer(bench, name, read, model)


def _without_unknown(
    bench: BenchPress, name: str, frame: pl.DataFrame
) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """`frame` without the rows naming a benchmark this snapshot does not know, and those
    names (with close matches): a tidy CSV may hold a team's own benchmark, which is listed
    and set aside as an lm-eval task we have no benchmark for is, while the rest is used. A
    file holding nothing else is still refused, naming them."""
    unknown: dict[str, list[str]] = {}
    for benchmark in frame.filter(pl.col("status") == MAPPED)["benchmark_id"].unique(
        maintain_order=True
    ):
        if benchmark is None:
            continue
        try:
            bench.resolve_benchmark(benchmark)
        except AmbiguousNameError:
            continue  # on_snapshot names the candidates: the user must pick one
        except UnknownNameError as exc:
            unknown[benchmark] = list(exc.suggestions)
    if not unknown:
        return frame, []
    kept = frame.filter(~((pl.col("status") == MAPPED) & pl.col("benchmark_id").is_in(unknown)))
    if kept.filter(pl.col("status") == MAPPED).is_empty():
        close = list(dict.fromkeys(c for found in unknown.values() for c in found))
        meant = f"did you mean: {', '.join(close)}? " if close else ""
        raise bad_request(
            f"{name}: no benchmark of snapshot {bench.version} in the file; it names "
            f"{', '.join(repr(b) for b in unknown)} ({meant}write a benchmark id or name as "
            "in the Matrix tab)"
        )
    listed = [{"benchmark": b, "suggestions": close} for b, close in unknown.items()]
    return kept, listed


def _answer(bench: BenchPress, name: str, read: Any, model: str | None) -> dict[str, Any]:
    try:
        read, unknown = _without_unknown(bench, name, read)
        frame = bench.on_snapshot(read)
        models = models_in(frame)
        if not models:
            raise ResultsError(name, "the file holds no results")
        inputs = summarise(frame, models[0] if model is None else model)
    except ResultsError as exc:
        raise bad_request(str(exc)) from None
    found = inputs.as_dict()
    first = frame.row(0, named=True)
    return {
        "version": bench.version,
        "file": name,
        "sha256": first["file_sha256"],
        "format": first["format"],
        "tool": first["tool"],
        "tool_version": first["tool_version"],
        "model": inputs.model,
        "models": models,
        "probes": [
            {
                "benchmark": row["benchmark_id"],
                **{k: _number(v) for k, v in row.items() if k in USED},
                **_subset(row),
            }
            for row in inputs.used
        ],
        **{key: found[key] for key in LISTS},
        "unknown": unknown,
    }


USED = ("score", "stderr", "task", "metric", "n_shot", "note")  # of each score used


def _subset(row: dict[str, Any]) -> dict[str, Any]:
    """A score from a random subset of the task's items (`benchpress run --items`): how many
    of how many, and which subset, so the card tells it apart from a full run's."""
    if row.get("items_total") is None:
        return {}
    return {"items": row["n"], "items_total": row["items_total"], "subset": row["subset"]}


LISTS = ("unmapped", "unmapped_subtasks", "other_metric", "not_run", "not_fitted", "notes")
